//! The reconciler job (tokio-cron-scheduler): every `reconcile.every_secs`,
//! reconciles each voucher on sale or ended within `reconcile.recent_secs`
//! (see `cityhub_core::reconcile` for what it checks and repairs), and every
//! `PAUSE_CHECK` those of them that are paused (the list of due vouchers
//! re-read every `LISTED_FOR`, so a sale that just began is watched too), or
//! all of them at once when an order-id node's holder stopped beating (an
//! API is gone: what it reserved and never published is re-published now,
//! not after the grace period).
//! It re-publishes orders through its own producer on the order topic.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cityhub_core::reconcile::{Kind, Reconciler, Verdict};
use cityhub_core::{Sale, Services, VoucherId};
use cityhub_platform::ids::beats;
use cityhub_platform::jobs::{self, Job, OnExit};
use cityhub_platform::kv::Kv;
use cityhub_platform::mq::ClientRuntime;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// The reconciler with its producer, and how often it runs.
pub struct ReconcileJob {
    reconciler: Arc<Reconciler>,
    every: Duration,
    kv: Kv,
    /// A node without a beat for this long has stopped (`ids.lease_ttl_ms`).
    lease_ttl: Duration,
}

impl ReconcileJob {
    pub async fn start(services: &Services, mq: &Arc<ClientRuntime>) -> anyhow::Result<Self> {
        let settings = &services.settings;
        let group = format!("{}_reconciler", settings.mq.order_consumer_group);
        let reconciler = services.reconciler(mq, &group).await?;
        // Every verdict's series exists from the start, so an alert on its
        // increase sees the first one.
        for verdict in Verdict::ALL {
            metrics::counter!(cityhub_core::metrics::RECONCILER_RUNS, "verdict" => verdict.as_str()).increment(0);
        }
        for kind in Kind::ALL {
            metrics::counter!(cityhub_core::metrics::RECONCILER_REPAIRS, "kind" => kind.label()).increment(0);
        }
        Ok(Self {
            reconciler: Arc::new(reconciler),
            every: settings.reconcile.every_secs,
            kv: services.kv.clone(),
            lease_ttl: settings.ids.lease_ttl_ms,
        })
    }
}

/// What the ticks remember: when the last full pass ran, and the voucher
/// buckets due as last listed, and when.
#[derive(Default)]
struct Watch {
    full_pass: Option<Instant>,
    listed: Option<(Instant, Vec<Sale>)>,
}

/// How often paused vouchers are looked for between full passes: a sale
/// paused by a Redis loss is rebuilt within this of being ready for it
/// (half the time the rebuild waits for earlier answers).
const PAUSE_CHECK: Duration = Duration::from_millis(250);

/// How old the list of due vouchers the pause check reads may be (one
/// indexed MySQL query a second): a sale that began, or was created, since
/// the last full pass is watched for a pause within this, not only from the
/// next full pass on, which may be `reconcile.every_secs` away.
const LISTED_FOR: Duration = Duration::from_secs(1);

/// Reconciles every due voucher every `reconcile.every_secs`, and in
/// between, every `PAUSE_CHECK`, the due vouchers that are paused (one
/// Redis round trip), so that a sale paused by a Redis failure is rebuilt as
/// soon as nothing is in flight rather than at the next full pass.
impl Job for ReconcileJob {
    const NAME: &'static str = "reconciler";
    const ON_EXIT: OnExit = OnExit::Restart;

    /// Runs until `stop`, then stops the reconciler's publisher (a run that
    /// ended early keeps it, for the restart).
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        let outcome = run(Arc::clone(&self), stop.clone()).await;
        if stop.is_cancelled() {
            self.reconciler.shutdown().await;
        }
        outcome
    }
}

async fn run(job: Arc<ReconcileJob>, stop: CancellationToken) -> anyhow::Result<()> {
    let watch: Arc<Mutex<Watch>> = Arc::default();
    jobs::every(PAUSE_CHECK, stop, move || {
        let (job, watch) = (Arc::clone(&job), Arc::clone(&watch));
        async move {
            let reconciler = &job.reconciler;
            let stopped = match beats::stopped(&job.kv, job.lease_ttl).await {
                Ok(stopped) => stopped,
                Err(err) => {
                    tracing::debug!(error = %err, "cannot read the order-id nodes' beats");
                    Vec::new()
                }
            };
            if !stopped.is_empty() {
                tracing::info!(nodes = ?stopped, "order-id nodes stopped beating: reconciling every due voucher now");
            }
            let mut watch = watch.lock().await;
            let full = !stopped.is_empty() || watch.full_pass.is_none_or(|at| at.elapsed() >= job.every);
            let (listed_at, listed) = match watch.listed.take() {
                Some((at, due)) if !full && at.elapsed() < LISTED_FOR => (at, due),
                _ => match reconciler.due().await {
                    Ok(due) => (Instant::now(), due),
                    Err(err) => return tracing::warn!(error = %err, "cannot list vouchers to reconcile"),
                },
            };
            let due = if full {
                watch.full_pass = Some(Instant::now());
                let mut vouchers: Vec<VoucherId> = listed.iter().map(|sale| sale.voucher_id).collect();
                vouchers.dedup();
                Ok(vouchers)
            } else {
                reconciler.paused(&listed).await
            };
            watch.listed = Some((listed_at, listed));
            drop(watch);
            let due = match due {
                Ok(due) => due,
                Err(err) => return tracing::debug!(error = %err, "cannot look for paused vouchers"),
            };
            let mut all_ran = true;
            for voucher_id in due {
                match reconciler.run(voucher_id).await {
                    Ok(report) => tracing::debug!(%voucher_id, verdict = report.verdict.as_str(), "reconciled"),
                    Err(err) => {
                        all_ran = false;
                        tracing::warn!(%voucher_id, error = %err, "reconciling failed; the next run retries");
                    }
                }
            }
            // What the stopped nodes left is on its way: forget them (a
            // node that beat again meanwhile is kept).
            if all_ran {
                if let Err(err) = beats::forget(&job.kv, &stopped, job.lease_ttl).await {
                    tracing::debug!(error = %err, "cannot forget stopped order-id nodes; the next tick does");
                }
            }
        }
    })
    .await
}
