//! CityHub's order worker: consumes accepted seckill orders from RocketMQ and
//! stores them in MySQL. Scheduled jobs (closing unpaid orders, the
//! reconciler) join it in later releases.
#![forbid(unsafe_code)]

mod combiner;
pub mod ops;
pub mod orders;

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::mq::consumer::Consumer;
use cityhub_core::mq::ClientRuntime;
use sqlx::MySqlPool;

pub use orders::{OrderHandler, WorkerStats};

/// Connects MySQL and Redis, serves `/metrics` on `worker.metrics_addr` and
/// consumes orders until `shutdown` resolves; then finishes in-flight batches.
pub async fn run(
    settings: Settings,
    mq: &Arc<ClientRuntime>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let metrics = cityhub_core::metrics::install();
    let db = cityhub_core::db::connect(&settings.database).await.context("connect to MySQL")?;
    let kv = Kv::connect(&settings.redis).await.context("connect to Redis")?;
    let ops = tokio::net::TcpListener::bind(&settings.worker.metrics_addr)
        .await
        .with_context(|| format!("bind {}", settings.worker.metrics_addr))?;
    let worker = Worker::start(&settings, mq, db.clone(), kv).await?;
    let stop = tokio_util::sync::CancellationToken::new();
    let ops = tokio::spawn(ops::serve(ops, metrics, db, stop.clone().cancelled_owned()));
    shutdown.await;
    worker.shutdown().await;
    stop.cancel();
    ops.await?.context("ops server")?;
    Ok(())
}

/// The running worker.
pub struct Worker {
    consumer: Consumer,
    stats: Arc<WorkerStats>,
}

impl Worker {
    /// Makes sure the order topic exists, then starts consuming it.
    pub async fn start(settings: &Settings, mq: &Arc<ClientRuntime>, db: MySqlPool, kv: Kv) -> anyhow::Result<Self> {
        let producer =
            cityhub_core::mq::start_producer(mq, &settings.mq, &format!("{}_admin", settings.mq.order_consumer_group))
                .await
                .context("start topic admin producer")?;
        if let Err(err) =
            cityhub_core::mq::ensure_topic(&producer, &settings.mq.order_topic, settings.mq.topic_queues).await
        {
            tracing::warn!(error = %err, topic = %settings.mq.order_topic, "cannot create order topic; relying on auto-creation");
        }
        let mut producer = producer;
        producer.shutdown().await;

        let stats = Arc::new(WorkerStats::default());
        let handler = Arc::new(OrderHandler::new(db, kv, Arc::clone(&stats), &settings.worker));
        let consumer =
            Consumer::start(mq, &settings.mq, &settings.mq.order_consumer_group, &settings.mq.order_topic, handler)
                .await
                .context("start order consumer")?;
        tracing::info!(topic = %settings.mq.order_topic, group = %settings.mq.order_consumer_group, "order worker consuming");
        Ok(Self { consumer, stats })
    }

    pub fn stats(&self) -> Arc<WorkerStats> {
        Arc::clone(&self.stats)
    }

    /// Stops pulling and lets in-flight batches finish.
    pub async fn shutdown(self) {
        self.consumer.shutdown().await;
        tracing::info!("order worker stopped");
    }
}
