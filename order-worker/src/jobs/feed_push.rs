//! The feed consumer: pushes each published note (relayed from the
//! outbox) into its author's followers' inboxes through [`Feed::push`],
//! which is idempotent, so a redelivered event changes nothing. A MySQL or
//! Redis error hands the batch back for redelivery; an event that does not
//! parse is parked.

use std::sync::Arc;

use cityhub_core::config::Settings;
use cityhub_core::notes::feed::{Feed, Pushed};
use cityhub_core::notes::NotePublished;
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::Envelope;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The feed consumer, started.
pub struct FeedJob(super::Held);

impl FeedJob {
    /// Makes sure the feed topic exists, then consumes it.
    pub async fn start(
        settings: &Settings,
        mq: &Arc<ClientRuntime>,
        db: MySqlPool,
        feed: Feed,
    ) -> anyhow::Result<Self> {
        let handler = Arc::new(FeedHandler { db, feed });
        let consumer =
            super::start_event_consumer(settings, mq, &settings.notes.feed_topic, &settings.notes.feed_group, handler)
                .await?;
        Ok(Self(super::Held::new(consumer)))
    }
}

impl Job for FeedJob {
    const NAME: &'static str = "feed_push";
    const ON_EXIT: OnExit = OnExit::StopProcess;

    /// Consumes until `stop`, then lets in-flight batches finish.
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        self.0.run(stop).await
    }
}

/// Pushes published notes; see the module doc.
pub struct FeedHandler {
    db: MySqlPool,
    feed: Feed,
}

impl BatchHandler for FeedHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        for delivery in &batch {
            let event: Envelope<NotePublished> = match super::read_event(&self.db, delivery, "note published").await {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot park a feed event; it will be redelivered");
                    return Ack::Retry;
                }
            };
            match self.feed.push(&event.payload).await {
                Ok(pushed) => {
                    let label = match pushed {
                        Pushed::Inboxes(_) => "pushed",
                        Pushed::Pulled => "pulled",
                    };
                    metrics::counter!(cityhub_core::metrics::FEED_EVENTS, "result" => label).increment(1);
                    tracing::debug!(event_id = event.event_id, note_id = %event.payload.note_id, ?pushed, "note pushed");
                }
                Err(err) => {
                    tracing::warn!(event_id = event.event_id, error = %err, "cannot push a note; it will be redelivered");
                    return Ack::Retry;
                }
            }
        }
        Ack::Done
    }
}
