//! The outbox relay job: publishes the events every flow writes into the
//! shared outbox (see `cityhub_platform::outbox`). Several workers may run it
//! at once; they share the rows without publishing one twice in a round.
//! Restarted if it ends early: every round starts from the outbox table.

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::relay::Relay;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The relay with its producer.
pub struct RelayJob(pub Relay);

impl RelayJob {
    /// Starts the relay's producer.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool) -> anyhow::Result<Self> {
        let group = format!("{}_relay", settings.mq.order_consumer_group);
        let producer = cityhub_platform::mq::start_producer(mq, &settings.mq, &group)
            .await
            .context("start outbox relay producer")?;
        Ok(Self(Relay::new(db, producer, settings.outbox.clone(), settings.mq.topic_queues)))
    }
}

impl Job for RelayJob {
    const NAME: &'static str = "outbox_relay";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        self.0.run(stop).await
    }
}
