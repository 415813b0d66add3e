//! `cityhub users`: N shoppers with tokens, written as `user_id,token` lines
//! (the CSV the JMeter plans read).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use cityhub_core::auth::{Auth, Issued, Phone};

/// Phones `17<9 digits>` from `first`, so runs with different `first` never share users.
pub fn phones(first: u64, count: usize) -> Vec<Phone> {
    (0..count as u64).map(|i| Phone::parse(&format!("17{:09}", first + i)).expect("valid phone")).collect()
}

/// Creates (or finds) `count` users and issues each a token.
pub async fn create(auth: &Auth, first: u64, count: usize) -> anyhow::Result<Vec<Issued>> {
    auth.issue_many(&phones(first, count)).await.context("create users")
}

/// Writes `user_id,token` lines.
pub fn write_csv(path: &Path, users: &[Issued]) -> anyhow::Result<()> {
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("create {}", path.display()))?);
    for u in users {
        writeln!(out, "{},{}", u.session.user_id, u.token)?;
    }
    out.flush()?;
    Ok(())
}
