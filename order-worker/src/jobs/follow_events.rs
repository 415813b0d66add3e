//! The follow consumer: applies each follow event (relayed from the outbox)
//! to the projection and Redis through [`Projection`], once per event id and
//! newest version first per pair, so redeliveries and events that arrive out
//! of order change nothing wrong. A MySQL or Redis error hands the batch back
//! for redelivery (what was applied is recorded and skipped next time); an
//! event that does not parse is parked.

use std::sync::Arc;

use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::social::{FollowEvent, Projection};
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::Envelope;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The follow consumer, started.
pub struct FollowJob(super::Held);

impl FollowJob {
    /// Makes sure the follow topic exists, then consumes it.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Self> {
        let handler = Arc::new(FollowHandler::new(db, kv));
        let consumer = super::start_event_consumer(
            settings,
            mq,
            &settings.social.follow_topic,
            &settings.social.follow_group,
            handler,
        )
        .await?;
        Ok(Self(super::Held::new(consumer)))
    }
}

impl Job for FollowJob {
    const NAME: &'static str = "follow_events";
    const ON_EXIT: OnExit = OnExit::StopProcess;

    /// Consumes until `stop`, then lets in-flight batches finish.
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        self.0.run(stop).await
    }
}

/// Applies follow events; see the module doc.
pub struct FollowHandler {
    db: MySqlPool,
    projection: Projection,
}

impl FollowHandler {
    pub fn new(db: MySqlPool, kv: Kv) -> Self {
        Self { projection: Projection::new(db.clone(), kv), db }
    }
}

impl BatchHandler for FollowHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        for delivery in &batch {
            let event: Envelope<FollowEvent> = match super::read_event(&self.db, delivery, "follow").await {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot park a follow event; it will be redelivered");
                    return Ack::Retry;
                }
            };
            match self.projection.apply(event.event_id, &event.payload).await {
                Ok(applied) => {
                    metrics::counter!(cityhub_core::metrics::FOLLOW_EVENTS, "result" => applied.label()).increment(1);
                    tracing::debug!(event_id = event.event_id, ?applied, "follow event applied");
                }
                Err(err) => {
                    tracing::warn!(event_id = event.event_id, error = %err, "cannot apply a follow event; it will be redelivered");
                    return Ack::Retry;
                }
            }
        }
        Ack::Done
    }
}
