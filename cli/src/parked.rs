//! `cityhub parked`: list the messages consumers parked, and replay them once
//! their cause is fixed (see `cityhub_platform::parking`).

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::orders::Refusal;
use cityhub_platform::mq::runtime::MqRuntime;
use cityhub_platform::parking;

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Parked messages not replayed yet (with --all, every one), oldest first.
    List {
        /// Also the messages replayed already.
        #[arg(long)]
        all: bool,
        /// Most messages listed.
        #[arg(long, default_value_t = 100, value_parser = crate::positive::<u32>())]
        limit: u32,
    },
    /// Publish parked messages again to their topic and mark them replayed.
    Replay {
        /// Parked message ids (the first column of `list`).
        #[arg(required_unless_present = "kind", value_parser = crate::positive::<u64>())]
        ids: Vec<u64>,
        /// Instead of ids: every open message of this kind.
        #[arg(long, conflicts_with = "ids", value_parser = kinds())]
        kind: Option<String>,
    },
}

/// The kinds a consumer parks messages under (`Refusal::label`).
fn kinds() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(Refusal::ALL.map(Refusal::label))
}

pub async fn run(settings: &Settings, action: Action) -> anyhow::Result<()> {
    let db = cityhub_platform::db::connect(&settings.database).await.context("connect to MySQL")?;
    match action {
        Action::List { all, limit } => {
            let rows = parking::list(&db, all, limit).await?;
            println!(
                "{:>6}  {:<23}  {:<16}  {:>20}  {:<3}  {:<24}  reason",
                "id", "parked at", "kind", "order", "202", "topic"
            );
            for p in &rows {
                let order = p.order_id.map_or_else(|| "-".to_owned(), |o| o.to_string());
                let replayed = p.replayed_at.map_or(String::new(), |t| format!(" (replayed {})", t.format("%F %T")));
                println!(
                    "{:>6}  {:<23}  {:<16}  {:>20}  {:<3}  {:<24}  {}{replayed}",
                    p.id,
                    p.created_at.format("%F %T%.3f"),
                    p.kind,
                    order,
                    if p.accepted { "yes" } else { "no" },
                    p.topic,
                    p.reason
                );
            }
            println!("{} message(s)", rows.len());
        }
        Action::Replay { ids, kind } => {
            let ids = match kind {
                Some(kind) => parking::list(&db, false, u32::MAX)
                    .await?
                    .into_iter()
                    .filter(|p| p.kind == kind)
                    .map(|p| p.id)
                    .collect(),
                None => ids,
            };
            if ids.is_empty() {
                println!("no open parked message to replay");
                return Ok(());
            }
            let mq = MqRuntime::new("cli").context("start mq runtime")?;
            let mut producer = cityhub_platform::mq::start_producer(&mq.client(), &settings.mq, "cityhub_replay")
                .await
                .context("start RocketMQ producer")?;
            let mut failed = 0;
            for id in &ids {
                match parking::replay(&db, &producer, *id).await {
                    Ok(()) => println!("replayed {id}"),
                    Err(err) => {
                        failed += 1;
                        eprintln!("not replayed {id}: {err}");
                    }
                }
            }
            producer.shutdown().await;
            mq.shutdown().await;
            anyhow::ensure!(failed == 0, "{failed} of {} message(s) not replayed", ids.len());
        }
    }
    Ok(())
}
