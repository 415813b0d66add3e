//! CityHub's worker (the order worker of the design): every background job
//! of the platform, each under the job supervisor
//! (`cityhub_platform::jobs::Jobs`) and each in its own file under
//! [`jobs`]: the order consumer, the outbox relay, the close job, the
//! stock-release consumer, the reconciler, the shop Bloom filter check, the
//! follow consumer, the follow count correction and the presence beat. Its metrics and health are on
//! its own ops listener (`worker.metrics_addr`).

// The RocketMQ client's consumer type (built with its admin API) is deep
// enough that proving a job future `Send` needs more than 128 levels.
#![recursion_limit = "256"]
#![forbid(unsafe_code)]

pub mod combiner;
pub mod jobs;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::Services;
use cityhub_platform::jobs::{Health, Jobs, Restarts};
use cityhub_platform::mq::ClientRuntime;

/// Connects MySQL and Redis, serves the ops listener and runs every job
/// until `shutdown` resolves; then lets each finish its in-flight work.
pub async fn run(
    settings: Settings,
    mq: &Arc<ClientRuntime>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let metrics = cityhub_core::metrics::install();
    let services = Services::connect(&settings).await?;
    let db = services.db.clone();
    let ops = tokio::net::TcpListener::bind(&settings.worker.metrics_addr)
        .await
        .with_context(|| format!("bind {}", settings.worker.metrics_addr))?;
    let worker = Worker::start(&services, mq).await?;
    let stop = tokio_util::sync::CancellationToken::new();
    let ops =
        tokio::spawn(cityhub_platform::ops::serve(ops, metrics, db, worker.health(), stop.clone().cancelled_owned()));
    let fatal = tokio::select! {
        () = shutdown => false,
        () = worker.fatal() => true,
    };
    let deadline = settings.worker.shutdown_deadline_secs;
    let stopped = worker.shutdown(deadline).await;
    stop.cancel();
    ops.await?.context("ops server")?;
    match stopped {
        Ok(()) if fatal => Err(anyhow::anyhow!("a job ended before shutdown")),
        other => other,
    }
}

/// The running jobs.
pub struct Worker {
    jobs: Jobs,
}

impl Worker {
    /// Starts every job; fails if one cannot start.
    pub async fn start(services: &Services, mq: &Arc<ClientRuntime>) -> anyhow::Result<Self> {
        use jobs::*;
        let (settings, db, kv) = (&services.settings, services.db.clone(), services.kv.clone());
        let w = &settings.worker;
        let mut jobs = Jobs::restarting(Restarts { first: w.job_restart_first_ms, max: w.job_restart_max_secs });
        let orders = orders::start(settings, mq, db.clone(), kv.clone()).await?;
        jobs.spawn(orders::OrdersJob::new(orders));
        jobs.spawn(outbox_relay::RelayJob::start(settings, mq, db.clone()).await?);
        jobs.spawn(stock_release::ReleaseJob::start(settings, mq, db.clone(), kv.clone()).await?);
        jobs.spawn(order_close::CloseJob::new(services));
        jobs.spawn(reconciler::ReconcileJob::start(services, mq).await?);
        jobs.spawn(follow_events::FollowJob::start(settings, mq, db.clone(), kv.clone()).await?);
        jobs.spawn(feed_push::FeedJob::start(settings, mq, db.clone(), services.feed.clone()).await?);
        jobs.spawn(refunds::RefundJob::new(services)?);
        jobs.spawn(follow_counts::CountJob::new(settings, db, kv));
        jobs.spawn(shop_bloom::BloomJob::new(services));
        jobs.spawn(user_bloom::UserBloomJob::new(services));
        let health = jobs.health();
        jobs.spawn(presence::PresenceJob::new(settings, services.kv.clone(), health));
        Ok(Self { jobs })
    }

    /// Which jobs are down, for `/healthz`.
    pub fn health(&self) -> Health {
        self.jobs.health()
    }

    /// Resolves when a job that stops the process on failure has ended.
    pub fn fatal(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.jobs.fatal()
    }

    /// Stops every job and lets in-flight work finish, for up to `deadline`.
    pub async fn shutdown(self, deadline: Duration) -> anyhow::Result<()> {
        let outcome = self.jobs.shutdown(deadline).await;
        tracing::info!("worker stopped");
        outcome
    }
}
