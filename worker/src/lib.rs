//! CityHub's worker (the order worker of the design): every background job
//! of the platform, each under the job supervisor
//! ([`Jobs`](cityhub_platform::jobs::Jobs)) and each in its own file under
//! [`jobs`]: the order consumer, the outbox relay, the close job, the
//! stock-release consumer, the reconciler, the shop Bloom filter check, the
//! follow consumer and the follow count correction. Its metrics and health are on
//! its own ops listener (`worker.metrics_addr`).
#![forbid(unsafe_code)]

mod combiner;
pub mod jobs;

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_platform::jobs::Jobs;
use cityhub_platform::mq::ClientRuntime;
use sqlx::MySqlPool;

pub use jobs::orders::WorkerStats;

/// Connects MySQL and Redis, serves the ops listener and runs every job
/// until `shutdown` resolves; then lets each finish its in-flight work.
pub async fn run(
    settings: Settings,
    mq: &Arc<ClientRuntime>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let metrics = cityhub_core::metrics::install();
    let db = cityhub_platform::db::connect(&settings.database).await.context("connect to MySQL")?;
    let kv = cityhub_core::kv::connect(&settings.redis).await.context("connect to Redis")?;
    let ops = tokio::net::TcpListener::bind(&settings.worker.metrics_addr)
        .await
        .with_context(|| format!("bind {}", settings.worker.metrics_addr))?;
    let worker = Worker::start(&settings, mq, db.clone(), kv).await?;
    let stop = tokio_util::sync::CancellationToken::new();
    let ops = tokio::spawn(cityhub_platform::ops::serve(ops, metrics, db, stop.clone().cancelled_owned()));
    shutdown.await;
    let stopped = worker.shutdown().await;
    stop.cancel();
    ops.await?.context("ops server")?;
    stopped
}

/// The running jobs.
pub struct Worker {
    jobs: Jobs,
    stats: Arc<WorkerStats>,
}

impl Worker {
    /// Starts every job; fails if one cannot start.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Self> {
        let mut jobs = Jobs::new();
        let stats = Arc::new(WorkerStats::default());
        let stop = jobs.token();
        let orders =
            jobs::orders::start(settings, mq, db.clone(), kv.clone(), Arc::clone(&stats), stop.clone()).await?;
        let (owned, kv_lag) = (settings.clone(), kv.clone());
        jobs.spawn("orders", async move { jobs::orders::run(orders, &owned, &kv_lag, stop).await });
        let relay = jobs::outbox_relay::start(settings, mq, db.clone()).await?;
        jobs.spawn("outbox_relay", jobs::outbox_relay::run(relay, jobs.token()));
        let releases = jobs::stock_release::start(settings, mq, db.clone(), kv.clone()).await?;
        jobs.spawn("stock_release", jobs::stock_release::run(releases, jobs.token()));
        let close = jobs::order_close::CloseJob::new(settings, db.clone(), kv.clone());
        jobs.spawn("order_close", jobs::order_close::run(close, jobs.token()));
        let reconciler = jobs::reconciler::start(settings, mq, db.clone(), kv.clone()).await?;
        jobs.spawn("reconciler", jobs::reconciler::run(reconciler, jobs.token()));
        let follows = jobs::follow_events::start(settings, mq, db.clone(), kv.clone()).await?;
        jobs.spawn("follow_events", jobs::follow_events::run(follows, jobs.token()));
        let counts = jobs::follow_counts::CountJob::new(settings, db.clone(), kv.clone());
        jobs.spawn("follow_counts", jobs::follow_counts::run(counts, jobs.token()));
        let owned = settings.clone();
        let stop = jobs.token();
        jobs.spawn("shop_bloom", async move { jobs::shop_bloom::run(&owned, db, kv, stop).await });
        Ok(Self { jobs, stats })
    }

    /// What the order consumer did so far.
    pub fn stats(&self) -> Arc<WorkerStats> {
        Arc::clone(&self.stats)
    }

    /// Stops every job and lets in-flight work finish.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let outcome = self.jobs.shutdown().await;
        tracing::info!("worker stopped");
        outcome
    }
}
