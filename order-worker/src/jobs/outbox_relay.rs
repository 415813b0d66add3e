//! The outbox relay job: publishes the events every flow writes into the
//! shared outbox (see `cityhub_platform::outbox`), with the relay the
//! settings name (`outbox.relay`). Several workers may run it at once: poll
//! relays share the rows without publishing one twice in a round; of binlog
//! relays, one per database streams and the others wait for its lock.
//! Restarted if it ends early: the poll relay starts from the outbox table,
//! the binlog relay from its stored position.

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_platform::config::RelayKind;
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::binlog::BinlogRelay;
use cityhub_platform::outbox::relay::Relay;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The configured relay with its producer.
pub enum RelayJob {
    Poll(Relay),
    Binlog(BinlogRelay),
}

impl RelayJob {
    /// Starts the relay's producer.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool) -> anyhow::Result<Self> {
        let group = format!("{}_relay", settings.mq.order_consumer_group);
        let producer = cityhub_platform::mq::start_producer(mq, &settings.mq, &group)
            .await
            .context("start outbox relay producer")?;
        let relay = Relay::new(db.clone(), producer, settings.outbox.clone(), &settings.mq);
        Ok(match settings.outbox.relay {
            RelayKind::Poll => Self::Poll(relay),
            RelayKind::Binlog => Self::Binlog(
                BinlogRelay::new(relay, db, settings.database.url.expose(), settings.outbox.clone())
                    .context("set up the binlog relay")?,
            ),
        })
    }
}

impl Job for RelayJob {
    const NAME: &'static str = "outbox_relay";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        match &*self {
            Self::Poll(relay) => relay.run(stop).await,
            Self::Binlog(relay) => relay.run(stop).await,
        }
    }
}
