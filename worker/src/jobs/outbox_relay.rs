//! The outbox relay job: publishes the events every flow writes into the
//! shared outbox (see `cityhub_platform::outbox`). Several workers may run it
//! at once; they share the rows without publishing one twice in a round.

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::relay::Relay;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// Starts the relay's producer.
pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool) -> anyhow::Result<Relay> {
    let group = format!("{}_relay", settings.mq.order_consumer_group);
    let producer =
        cityhub_platform::mq::start_producer(mq, &settings.mq, &group).await.context("start outbox relay producer")?;
    Ok(Relay::new(db, producer, settings.outbox.clone(), settings.mq.topic_queues))
}

/// Relays until `stop`.
pub async fn run(relay: Relay, stop: CancellationToken) -> anyhow::Result<()> {
    relay.run(stop).await
}
