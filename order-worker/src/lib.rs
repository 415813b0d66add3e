//! CityHub's order worker: consumes accepted seckill orders from RocketMQ and
//! stores them in MySQL. Scheduled jobs (closing unpaid orders, the
//! reconciler) join it in later releases.
#![forbid(unsafe_code)]

pub mod orders;

use std::sync::Arc;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::mq::consumer::Consumer;
use cityhub_core::mq::ClientRuntime;
use sqlx::MySqlPool;

pub use orders::{OrderHandler, WorkerStats};

/// The running worker.
pub struct Worker {
    consumer: Consumer,
    stats: Arc<WorkerStats>,
}

impl Worker {
    /// Makes sure the order topic exists, then starts consuming it.
    pub async fn start(
        settings: &Settings,
        mq: &Arc<ClientRuntime>,
        db: MySqlPool,
        kv: Kv,
    ) -> anyhow::Result<Self> {
        let producer = cityhub_core::mq::start_producer(
            mq,
            &settings.mq,
            &format!("{}_admin", settings.mq.order_consumer_group),
        )
        .await
        .context("start topic admin producer")?;
        if let Err(err) = cityhub_core::mq::ensure_topic(
            &producer,
            &settings.mq.order_topic,
            settings.mq.topic_queues,
        )
        .await
        {
            tracing::warn!(error = %err, topic = %settings.mq.order_topic, "cannot create order topic; relying on auto-creation");
        }
        let mut producer = producer;
        producer.shutdown().await;

        let stats = Arc::new(WorkerStats::default());
        let handler = Arc::new(OrderHandler::new(
            db,
            kv,
            Arc::clone(&stats),
            settings.worker.db_attempts,
        ));
        let consumer = Consumer::start(
            mq,
            &settings.mq,
            &settings.mq.order_consumer_group,
            &settings.mq.order_topic,
            handler,
        )
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
