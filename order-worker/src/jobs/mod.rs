//! The worker's jobs, one file each. A job has a `start` that fails loudly
//! if it cannot begin, and a `run` that works until its stop token is
//! cancelled and then finishes in-flight work. Each is a
//! [`Job`](cityhub_platform::jobs::Job) that names itself and says what its
//! supervisor does if it ends early (the README's "Jobs" table). The
//! consumers of outbox events share `start_event_consumer`, `Held` and
//! `read_event`.

pub mod feed_push;
pub mod follow_counts;
pub mod follow_events;
pub mod order_close;
pub mod orders;
pub mod outbox_relay;
pub mod presence;
pub mod reconciler;
pub mod refunds;
pub mod shop_bloom;
pub mod stock_release;
pub mod user_bloom;

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::orders::Refusal;
use cityhub_platform::mq::consumer::{BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::Envelope;
use cityhub_platform::parking::{park, Parking};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// Makes sure `topic` exists (the relay may not have created it yet), then
/// consumes it as `group` with `handler`.
pub(crate) async fn start_event_consumer<H: BatchHandler>(
    settings: &Settings,
    mq: &Arc<ClientRuntime>,
    topic: &str,
    group: &str,
    handler: Arc<H>,
) -> anyhow::Result<Consumer> {
    let mut admin = cityhub_platform::mq::start_producer(mq, &settings.mq, &format!("{group}_admin"))
        .await
        .context("start topic admin producer")?;
    cityhub_platform::mq::ensure_topic(&admin, topic, settings.mq.topic_queues).await;
    admin.shutdown().await;
    Consumer::start(mq, &settings.mq, group, topic, handler).await.with_context(|| format!("consume {topic}"))
}

/// A started consumer, run once as a job: it consumes until `stop`, then
/// lets in-flight batches finish. It ends early only by a panic; its job then
/// stops the process ([`OnExit::StopProcess`](cityhub_platform::jobs::OnExit)):
/// the group's other members take its queues, and a clean process starts.
pub(crate) struct Held(tokio::sync::Mutex<Option<Consumer>>);

impl Held {
    pub(crate) fn new(consumer: Consumer) -> Self {
        Self(tokio::sync::Mutex::new(Some(consumer)))
    }

    pub(crate) async fn run(&self, stop: CancellationToken) -> anyhow::Result<()> {
        let consumer = self.0.lock().await.take().context("the consumer was shut down already")?;
        stop.cancelled().await;
        consumer.shutdown().await;
        Ok(())
    }
}

/// The outbox event in `delivery`. One that does not parse as `what` is
/// parked and answers `Ok(None)`; `Err` when it cannot even be parked (the
/// batch goes back for redelivery).
pub(crate) async fn read_event<T: serde::de::DeserializeOwned>(
    db: &MySqlPool,
    delivery: &Delivery,
    what: &str,
) -> Result<Option<Envelope<T>>, sqlx::Error> {
    match serde_json::from_slice::<Envelope<T>>(&delivery.body) {
        Ok(event) => Ok(Some(event)),
        Err(err) => {
            let detail = format!("not a {what} event: {err}");
            let why = Parking { kind: Refusal::Unparsable.label(), order_id: None, accepted: false, detail: &detail };
            park(db, delivery, &why).await.map(|_| None)
        }
    }
}
