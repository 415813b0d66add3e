//! RocketMQ, shared by the API (publishing orders, later the outbox relay)
//! and the order worker (consuming them).
//!
//! - [`runtime`]: the client runtime the RocketMQ crate needs, tuned for
//!   consumers as measured (deep metadata lane, more blocking threads).
//! - [`publisher`]: batches single publishes into `send_batch` calls.
//! - [`consumer`]: a push consumer that hands batches to an async handler and
//!   acks only after the handler says the effect is durable.
//! - [`lag`]: the consumer's lag, sampled into a gauge.
//! - [`progress`]: a group's committed offsets as the broker has them, the
//!   "nothing in flight" signal.
//!
//! Topics are created in one place, [`ensure_topic`].

pub mod consumer;
pub mod lag;
pub mod progress;
pub mod publisher;
pub mod runtime;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rocketmq_client_rust::{ClientConfig, RebalanceConfig};
use rocketmq_model::common::consumer::consume_from_where::ConsumeFromWhere;

pub use rocketmq_client_rust::ClientError as MqError;
pub use rocketmq_client_rust::{ClientRuntime, DefaultLitePullConsumer, DefaultMQProducer};

use crate::config::MqSettings;

/// A unique client instance name, so several producers and consumers of one
/// process (tests, the CLI) never share client state by accident.
fn instance_name(role: &str) -> String {
    format!("cityhub-{role}-{}-{}", std::process::id(), rand::random::<u32>())
}

/// A client's settings: its own instance, and the recovery timers CityHub
/// sets (the breaker's and rebalancing's come from the patched client,
/// vendor/README.md).
fn client_config(role: &str, settings: &MqSettings) -> ClientConfig {
    let mut cfg = ClientConfig::new();
    cfg.set_instance_name(instance_name(role).into());
    // Discover routes of new topics in 10 s (the client's minimum), not 30 s.
    cfg.set_poll_name_server_interval(10_000);
    cfg.set_persist_consumer_offset_interval(settings.offset_commit_every_ms.as_millis() as u32);
    cfg.connect_breaker.open_timeout = settings.reconnect_after_ms;
    let every = settings.rebalance_every_ms.as_millis() as u64;
    cfg.rebalance =
        RebalanceConfig { wait_interval_ms: every, min_interval_ms: every.min(1_000), ..RebalanceConfig::default() };
    cfg
}

/// How much longer than its own timeout a send is given before it is
/// abandoned ([`bounded_send`]).
pub const SEND_MARGIN: Duration = Duration::from_millis(500);

/// A send given `timeout` of its own: the client's timeout decides, and this
/// bound, a little longer, only catches a call that hangs past it.
pub async fn bounded_send<T>(
    timeout: Duration,
    send: impl std::future::Future<Output = T>,
) -> Result<T, tokio::time::error::Elapsed> {
    tokio::time::timeout(timeout + SEND_MARGIN, send).await
}

/// Starts a producer for `group`.
pub async fn start_producer(
    client: &Arc<ClientRuntime>,
    settings: &MqSettings,
    group: &str,
) -> Result<DefaultMQProducer, MqError> {
    let mut producer = DefaultMQProducer::builder(Arc::clone(client))
        .client_config(client_config("producer", settings))
        .name_server_addr(settings.namesrv_addr.clone())
        .producer_group(group.to_owned())
        .send_msg_timeout(settings.send_timeout_ms.as_millis() as u32)
        .retry_times_when_send_failed(1)
        .max_message_size(4 * 1024 * 1024)
        .build();
    producer.start().await?;
    Ok(producer)
}

/// Starts a lite pull consumer of `group` on `topic`, from the first offset
/// for a new group, polling up to `batch` messages at a time; auto-commit is
/// off, so offsets move only when the caller commits.
pub async fn start_lite_pull(
    client: &Arc<ClientRuntime>,
    settings: &MqSettings,
    group: &str,
    topic: &str,
    batch: u32,
) -> Result<DefaultLitePullConsumer, MqError> {
    let consumer = DefaultLitePullConsumer::builder(Arc::clone(client))
        .client_options(rocketmq_client_rust::ClientOptions::legacy(client_config("lite-pull", settings)))
        .name_server_addr(settings.namesrv_addr.clone())
        .consumer_group(group)
        .consume_from_where(ConsumeFromWhere::ConsumeFromFirstOffset)
        .pull_batch_size(batch.min(1024) as i32)
        .auto_commit(false)
        .build()?;
    consumer.subscribe(topic).await?;
    consumer.start().await?;
    Ok(consumer)
}

/// Creates `topic` with `queues` queues if the broker lacks it (idempotent;
/// the one place topics are created). Consumers started after this see the
/// topic at once instead of after a route-discovery round. A broker that
/// refuses or does not answer is asked again (each try bounded by 5 s) for up
/// to 30 s: readiness waits for the topic's route, so giving up early would
/// leave a process that never becomes ready. Answers whether it was created.
pub fn ensure_topic<'a>(
    producer: &'a DefaultMQProducer,
    topic: &'a str,
    queues: u32,
) -> impl std::future::Future<Output = bool> + Send + 'a {
    // The inner future itself, not one more async layer around it.
    ensure_topic_within(producer, topic, queues, Duration::from_secs(30))
}

/// [`ensure_topic`], asking for at most about `within` (each try bounded by
/// the shorter of `within` and 5 s): for a caller that tries again on its
/// own, as the outbox relay does with every event it could not send.
pub async fn ensure_topic_within(producer: &DefaultMQProducer, topic: &str, queues: u32, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    let one_try = within.min(Duration::from_secs(5));
    loop {
        let mut producer = producer.clone();
        let create = producer.create_topic("TBW102", topic, queues as i32, HashMap::new());
        let why = match tokio::time::timeout(one_try, create).await {
            Ok(Ok(())) => return true,
            Ok(Err(err)) => err.to_string(),
            Err(_) => format!("no answer within {one_try:?}"),
        };
        if tokio::time::Instant::now() >= deadline {
            tracing::error!(%topic, error = %why, "cannot create topic; its first send may still auto-create it");
            return false;
        }
        tracing::warn!(%topic, error = %why, "cannot create topic yet; retrying");
        tokio::time::sleep(Duration::from_secs(1).min(within)).await;
    }
}

/// True when the name server knows a writable route for `topic`.
pub async fn topic_reachable(producer: &DefaultMQProducer, topic: &str, timeout: Duration) -> bool {
    let mut producer = producer.clone();
    matches!(
        tokio::time::timeout(timeout, producer.fetch_publish_message_queues(topic)).await,
        Ok(Ok(queues)) if !queues.is_empty()
    )
}
