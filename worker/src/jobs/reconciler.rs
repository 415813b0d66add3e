//! The reconciler job: every `reconcile.every_secs` (tokio-cron-scheduler),
//! reconciles each voucher on sale or ended within `reconcile.recent_secs`
//! (see `cityhub_core::reconcile` for what it checks and repairs). It
//! re-publishes orders through its own producer on the order topic.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::reconcile::Reconciler;
use cityhub_platform::mq::lag::LagBoard;
use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_platform::mq::ClientRuntime;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The reconciler with its producer, and how often it runs.
pub struct Job {
    pub reconciler: Reconciler,
    every: Duration,
}

pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Job> {
    let group = format!("{}_reconciler", settings.mq.order_consumer_group);
    let producer =
        cityhub_platform::mq::start_producer(mq, &settings.mq, &group).await.context("start reconciler producer")?;
    let orders = BatchPublisher::spawn(producer, settings.mq.order_topic.clone(), BatchConfig::from(&settings.mq));
    let lag = LagBoard::new(&kv, &settings.mq.order_consumer_group, Duration::from_millis(settings.mq.lag_sample_ms));
    let reconciler = Reconciler::new(
        db,
        kv,
        orders,
        lag,
        Duration::from_secs(settings.reconcile.grace_secs),
        Duration::from_secs(settings.reconcile.recent_secs),
    );
    Ok(Job { reconciler, every: Duration::from_secs(settings.reconcile.every_secs) })
}

/// Reconciles every due voucher on schedule until `stop`.
pub async fn run(job: Job, stop: CancellationToken) -> anyhow::Result<()> {
    let reconciler = Arc::new(job.reconciler);
    cityhub_platform::jobs::every("reconciler", job.every, stop, move || {
        let reconciler = Arc::clone(&reconciler);
        async move {
            let due = match reconciler.due().await {
                Ok(due) => due,
                Err(err) => return tracing::warn!(error = %err, "cannot list vouchers to reconcile"),
            };
            for voucher_id in due {
                match reconciler.run(voucher_id).await {
                    Ok(report) => tracing::debug!(voucher_id, verdict = report.verdict.as_str(), "reconciled"),
                    Err(err) => tracing::warn!(voucher_id, error = %err, "reconciling failed; the next run retries"),
                }
            }
        }
    })
    .await
}
