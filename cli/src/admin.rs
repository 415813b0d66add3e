//! `cityhub admin`: the only way to make an admin (by phone, with the
//! operator's database access; never through the API), and admin tokens for
//! operator scripts. A role change takes effect on the user's live sessions.

use anyhow::Context;
use cityhub_core::auth::{Auth, Phone, Role};
use cityhub_core::config::Settings;

/// The account the CLI's own admin calls use (flash-sale, bench).
const OPERATOR_PHONE: &str = "19999999999";

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Make the user with this phone an admin (creating the user if needed).
    Grant {
        /// The user's phone (6 to 15 digits, optional +).
        phone: String,
    },
    /// Make an admin a shopper again.
    Revoke {
        /// The admin's phone.
        phone: String,
    },
    /// Print a fresh bearer token of the admin with this phone.
    Token {
        /// The admin's phone.
        phone: String,
    },
}

async fn auth(settings: &Settings) -> anyhow::Result<Auth> {
    Ok(cityhub_core::Services::connect(settings).await?.auth)
}

fn phone(raw: &str) -> anyhow::Result<Phone> {
    Phone::parse(raw).with_context(|| format!("{raw:?} is not a phone number (6 to 15 digits, optional +)"))
}

pub async fn run(settings: &Settings, action: Action) -> anyhow::Result<()> {
    let auth = auth(settings).await?;
    match action {
        Action::Grant { phone: raw } => {
            let phone = phone(&raw)?;
            auth.register(&phone).await?;
            let session = auth.set_role(&phone, Role::Admin).await?;
            println!("user {} ({raw}) is an admin", session.user_id);
        }
        Action::Revoke { phone: raw } => {
            let session = auth.set_role(&phone(&raw)?, Role::Shopper).await?;
            println!("user {} ({raw}) is a shopper", session.user_id);
        }
        Action::Token { phone: raw } => {
            let session = auth.register(&phone(&raw)?).await?;
            anyhow::ensure!(
                session.role == Role::Admin,
                "{raw} is not an admin; run `cityhub admin grant {raw}` first"
            );
            println!("{}", auth.issue(session).await?.token);
        }
    }
    Ok(())
}

/// A bearer token of the CLI's operator account (made an admin on the way).
pub async fn operator_token(settings: &Settings) -> anyhow::Result<String> {
    let issued = auth(settings).await?.operator(&phone(OPERATOR_PHONE)?).await?;
    Ok(issued.token)
}
