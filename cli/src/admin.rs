//! `cityhub admin`: operator keys, the only credential of the admin routes
//! and the console (no phone login can obtain one), made and revoked with
//! the operator's database access, never through the API. The CLI's own
//! admin calls (order close, reconcile, flash-sale, bench, chaos) use a key
//! made for the run.

use std::time::Duration;

use cityhub_core::auth::Auth;
use cityhub_core::config::Settings;

/// How long a key the CLI makes for its own run stays valid.
const RUN_KEY_TTL: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Operator keys: create, list, revoke.
    #[command(subcommand)]
    Key(KeyAction),
}

#[derive(Debug, clap::Subcommand)]
pub enum KeyAction {
    /// Make a key and print it (shown once; only its hash is kept).
    Create {
        /// What the key is for (the console of Ann, a deploy script, ...).
        #[arg(long)]
        name: String,
        /// Days it stays valid.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3650))]
        days: u32,
    },
    /// List every key (never the keys themselves).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key's id, as `create` and `list` show it.
        id: u64,
    },
}

async fn auth(settings: &Settings) -> anyhow::Result<Auth> {
    Ok(cityhub_core::Services::connect(settings).await?.auth)
}

pub async fn run(settings: &Settings, action: Action) -> anyhow::Result<()> {
    let auth = auth(settings).await?;
    match action {
        Action::Key(KeyAction::Create { name, days }) => {
            anyhow::ensure!((1..=64).contains(&name.len()), "a key's name is 1 to 64 characters");
            let made = auth.create_operator_key(&name, Duration::from_secs(u64::from(days) * 86_400)).await?;
            eprintln!("key {} ({name}) valid until {}; shown once:", made.id, made.expires_at);
            println!("{}", made.key);
        }
        Action::Key(KeyAction::List) => {
            for key in auth.operator_keys().await? {
                let state = if key.revoked { "revoked" } else { "" };
                println!("{}\t{}\tcreated {}\texpires {}\t{state}", key.id, key.name, key.created_at, key.expires_at);
            }
        }
        Action::Key(KeyAction::Revoke { id }) => {
            anyhow::ensure!(auth.revoke_operator_key(id).await?, "no live key {id}");
            println!("key {id} revoked");
        }
    }
    Ok(())
}

/// An operator key for the CLI's own run of `purpose` (valid a day).
pub async fn operator_token(settings: &Settings, purpose: &str) -> anyhow::Result<String> {
    let made = auth(settings).await?.create_operator_key(&format!("cityhub {purpose}"), RUN_KEY_TTL).await?;
    Ok(made.key)
}
