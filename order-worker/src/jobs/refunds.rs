//! The refund job: every `payments.refund_retry_secs`, finishes the refunds
//! left under way (a payment `refunding`): the process that started one
//! crashed between its steps, or the provider refused it for now. Each is
//! finished by [`Payments::finish_refund`], which is idempotent, so a refund
//! the API finishes at the same moment is refunded once. A refund younger
//! than one period is left to the path that started it. The count still
//! under way is the `cityhub_refunds_pending` gauge (alert when it stays
//! above zero).

use std::sync::Arc;
use std::time::Duration;

use cityhub_core::metrics::{REFUNDS_FINISHED, REFUNDS_PENDING};
use cityhub_core::payments::{PayError, Payments};
use cityhub_core::Services;
use cityhub_platform::jobs::{every, Job, OnExit};
use tokio_util::sync::CancellationToken;

/// Refunds finished per round, at most.
const BATCH: u32 = 100;

/// The job's state. Share it in an `Arc`.
pub struct RefundJob {
    payments: Payments,
    every: Duration,
}

impl RefundJob {
    pub fn new(services: &Services) -> anyhow::Result<Self> {
        metrics::counter!(REFUNDS_FINISHED).increment(0);
        Ok(Self { payments: services.payments()?, every: services.settings.payments.refund_retry_secs })
    }

    /// One round: answers (finished, still pending).
    pub async fn round(&self) -> Result<(u64, u64), PayError> {
        let (finished, pending) = self.payments.finish_refunds(self.every, BATCH).await?;
        metrics::counter!(REFUNDS_FINISHED).increment(finished);
        metrics::gauge!(REFUNDS_PENDING).set(pending as f64);
        if finished > 0 {
            tracing::warn!(finished, pending, "refunds left under way were finished");
        }
        Ok((finished, pending))
    }
}

impl Job for RefundJob {
    const NAME: &'static str = "refunds";
    const ON_EXIT: OnExit = OnExit::Restart;

    /// Runs a round at once (so the pending gauge is known from the
    /// start), then on schedule until `stop`.
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        let period = self.every;
        let tick = move || {
            let job = Arc::clone(&self);
            async move {
                if let Err(err) = job.round().await {
                    tracing::warn!(error = %err, "refund round failed; the next one retries");
                }
            }
        };
        tick().await;
        every(period, stop, tick).await
    }
}
