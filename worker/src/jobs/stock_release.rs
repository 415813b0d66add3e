//! The stock-release consumer: applies each closed order's release event
//! (relayed from the outbox) to Redis with `stock_release.lua`, which gives
//! the unit back and frees the buyer once per event id. The close usually
//! applied it already (its fast path); then this changes nothing. A Redis
//! error hands the batch back for redelivery (applying twice is harmless);
//! an event that does not parse is parked.

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::orders::lifecycle::StockRelease;
use cityhub_core::orders::Refusal;
use cityhub_core::seckill::scripts::{self, GiveBack};
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::Envelope;
use cityhub_platform::parking::{park, Parking};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// Makes sure the release topic exists, then consumes it.
pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Consumer> {
    let (topic, group) = (&settings.orders.release_topic, &settings.orders.release_group);
    let mut admin = cityhub_platform::mq::start_producer(mq, &settings.mq, &format!("{group}_admin"))
        .await
        .context("start topic admin producer")?;
    cityhub_platform::mq::ensure_topic(&admin, topic, settings.mq.topic_queues).await;
    admin.shutdown().await;
    let handler = Arc::new(ReleaseHandler { db, kv });
    Consumer::start(mq, &settings.mq, group, topic, handler).await.context("start stock-release consumer")
}

/// Consumes until `stop`, then lets in-flight batches finish.
pub async fn run(consumer: Consumer, stop: CancellationToken) -> anyhow::Result<()> {
    stop.cancelled().await;
    consumer.shutdown().await;
    Ok(())
}

fn label(outcome: GiveBack) -> &'static str {
    match outcome {
        GiveBack::Released => "released",
        GiveBack::Duplicate => "duplicate",
        GiveBack::UnknownBuyer => "unknown_buyer",
        GiveBack::NoVoucher => "no_voucher",
        GiveBack::Other => "other",
    }
}

/// Applies release events; see the module doc.
pub struct ReleaseHandler {
    db: MySqlPool,
    kv: Kv,
}

impl BatchHandler for ReleaseHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        for delivery in &batch {
            let event = match serde_json::from_slice::<Envelope<StockRelease>>(&delivery.body) {
                Ok(event) => event,
                Err(err) => {
                    let detail = format!("not a stock-release event: {err}");
                    let why =
                        Parking { kind: Refusal::Unparsable.label(), order_id: None, accepted: false, detail: &detail };
                    if let Err(err) = park(&self.db, delivery, &why).await {
                        tracing::warn!(error = %err, "cannot park a release event; it will be redelivered");
                        return Ack::Retry;
                    }
                    continue;
                }
            };
            let StockRelease { order_id, user_id, voucher_id } = event.payload;
            match scripts::give_back(&self.kv, &event.event_id.to_string(), voucher_id, user_id, order_id).await {
                Ok(outcome) => {
                    metrics::counter!(cityhub_core::metrics::STOCK_RELEASES, "result" => label(outcome)).increment(1);
                    tracing::debug!(order_id, event_id = event.event_id, ?outcome, "release event applied");
                }
                Err(err) => {
                    tracing::warn!(order_id, error = %err, "cannot apply a release event; it will be redelivered");
                    return Ack::Retry;
                }
            }
        }
        Ack::Done
    }
}
