//! The close job: on the cron schedule `orders.close_cron` (tokio-cron-scheduler),
//! closes unpaid orders past their payment window, oldest first, in batches
//! of `orders.close_batch` read by the `(status, stored_at)` index.
//!
//! Each close is the optimistic `UPDATE ... WHERE status = 'unpaid'` of
//! [`Lifecycle`]: only a row it changed releases stock (in the same
//! transaction as the outbox event). Several workers may sweep at once:
//! they may read the same batch, but each order is closed by exactly one of
//! them, and a payment that commits first wins the same way.

use std::future::Future;
use std::sync::Arc;

use cityhub_core::orders::lifecycle::{Lifecycle, Move, Moved};
use cityhub_core::orders::OrderError;
use cityhub_core::Services;
use cityhub_platform::jobs::{scheduled, Job, OnExit, Schedule};
use tokio_util::sync::CancellationToken;

/// The close job's state. Clone freely.
#[derive(Clone)]
pub struct CloseJob {
    lifecycle: Lifecycle,
    batch: u32,
    schedule: Schedule,
}

impl CloseJob {
    pub fn new(services: &Services) -> Self {
        let orders = &services.settings.orders;
        metrics::counter!(cityhub_core::metrics::ORDERS_CLOSED, "reason" => "expired").increment(0);
        Self {
            lifecycle: services.lifecycle.clone(),
            batch: orders.close_batch,
            schedule: Schedule::Cron(orders.close_cron.clone()),
        }
    }

    /// One sweep: batch after batch until the expired orders run out (or a
    /// batch closes nothing because another worker took it). Answers how
    /// many orders this sweep closed.
    pub async fn sweep(&self) -> Result<u64, OrderError> {
        let mut closed = 0;
        loop {
            let expired = self.lifecycle.expired(self.batch).await?;
            let mut changed = 0;
            for &order_id in &expired {
                if let Moved::Done { .. } = self.lifecycle.apply(order_id, Move::Expire).await? {
                    changed += 1;
                }
            }
            metrics::counter!(cityhub_core::metrics::ORDERS_CLOSED, "reason" => "expired").increment(changed);
            closed += changed;
            if expired.len() < self.batch as usize || changed == 0 {
                break;
            }
        }
        if closed > 0 {
            tracing::info!(closed, "closed unpaid orders past the payment timeout");
        }
        Ok(closed)
    }
}

impl Job for CloseJob {
    const NAME: &'static str = "order_close";
    const ON_EXIT: OnExit = OnExit::Restart;

    /// Sweeps on schedule until `stop`.
    fn run(self: Arc<Self>, stop: CancellationToken) -> impl Future<Output = anyhow::Result<()>> + Send {
        scheduled(self.schedule.clone(), stop, move || {
            let job = Arc::clone(&self);
            async move {
                if let Err(err) = job.sweep().await {
                    tracing::warn!(error = %err, "close sweep failed; the next one retries");
                }
            }
        })
    }
}
