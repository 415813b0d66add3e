//! The stock-release consumer: applies each closed order's release event
//! (relayed from the outbox) to Redis with `stock_release.lua`, which gives
//! the unit back and frees the buyer once per event id. The close usually
//! applied it already (its fast path); then this changes nothing. A Redis
//! error hands the batch back for redelivery (applying twice is harmless);
//! an event that does not parse is parked.

use std::sync::Arc;

use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::orders::lifecycle::StockRelease;
use cityhub_core::seckill::scripts::{self, GiveBack};
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::Envelope;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The release consumer, started.
pub struct ReleaseJob(super::Held);

impl ReleaseJob {
    /// Makes sure the release topic exists, then consumes it.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Self> {
        let handler = Arc::new(ReleaseHandler { db, kv });
        let consumer = super::start_event_consumer(
            settings,
            mq,
            &settings.orders.release_topic,
            &settings.orders.release_group,
            handler,
        )
        .await?;
        Ok(Self(super::Held::new(consumer)))
    }
}

impl Job for ReleaseJob {
    const NAME: &'static str = "stock_release";
    const ON_EXIT: OnExit = OnExit::StopProcess;

    /// Consumes until `stop`, then lets in-flight batches finish.
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        self.0.run(stop).await
    }
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
            let event: Envelope<StockRelease> = match super::read_event(&self.db, delivery, "stock-release").await {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot park a release event; it will be redelivered");
                    return Ack::Retry;
                }
            };
            let StockRelease { order_id, user_id, .. } = event.payload;
            let sale = event.payload.sale();
            match scripts::give_back(&self.kv, &event.event_id.to_string(), sale, user_id, order_id).await {
                Ok(outcome) => {
                    metrics::counter!(cityhub_core::metrics::STOCK_RELEASES, "result" => label(outcome)).increment(1);
                    tracing::debug!(%order_id, event_id = event.event_id, ?outcome, "release event applied");
                }
                Err(err) => {
                    tracing::warn!(%order_id, error = %err, "cannot apply a release event; it will be redelivered");
                    return Ack::Retry;
                }
            }
        }
        Ack::Done
    }
}
