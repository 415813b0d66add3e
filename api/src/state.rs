//! Application state, built once from settings and shared by every handler.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::auth::Auth;
use cityhub_core::config::Settings;
use cityhub_core::ids::{NodeLease, OrderIds};
use cityhub_core::kv::Kv;
use cityhub_core::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_core::mq::{ClientRuntime, DefaultMQProducer};
use cityhub_core::seckill::Seckill;
use cityhub_core::vouchers::Vouchers;
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::MySqlPool;

#[derive(Clone)]
pub struct AppState {
    pub settings: Arc<Settings>,
    pub db: MySqlPool,
    pub kv: Kv,
    pub auth: Auth,
    pub vouchers: Vouchers,
    pub seckill: Arc<Seckill>,
    pub metrics: PrometheusHandle,
    producer: DefaultMQProducer,
    _lease: Arc<Option<NodeLease>>,
}

impl AppState {
    /// Connects MySQL (migrating it), Redis and RocketMQ and wires the services.
    /// A broker that is down does not stop the API from starting: `/readyz`
    /// reports it and seckill answers 503 until it is back.
    pub async fn build(settings: Settings, mq: Arc<ClientRuntime>) -> anyhow::Result<Self> {
        // First, so the series registered below are recorded.
        let metrics = cityhub_core::metrics::install();
        let db = cityhub_core::db::connect(&settings.database).await.context("connect to MySQL")?;
        let kv = Kv::connect(&settings.redis).await.context("connect to Redis")?;
        let lease = match settings.ids.node_id {
            Some(_) => None,
            None => Some(NodeLease::acquire(&kv).await.context("lease an order-id node")?),
        };
        let node = settings.ids.node_id.or(lease.as_ref().map(|l| l.node)).unwrap_or_default();
        tracing::info!(node, "order ids issued as node {node}");

        let producer = cityhub_core::mq::start_producer(&mq, &settings.mq, &settings.mq.producer_group)
            .await
            .context("start RocketMQ producer")?;
        let topic = &settings.mq.order_topic;
        match tokio::time::timeout(
            Duration::from_secs(5),
            cityhub_core::mq::ensure_topic(&producer, topic, settings.mq.topic_queues),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::warn!(%topic, error = %err, "cannot create the order topic"),
            Err(_) => {
                tracing::warn!(%topic, "RocketMQ did not answer; seckill will answer 503 until it does")
            }
        }

        let publisher = BatchPublisher::spawn(producer.clone(), topic.clone(), BatchConfig::from(&settings.mq));
        let vouchers = Vouchers::new(db.clone(), kv.clone());
        let seckill = Seckill::new(
            kv.clone(),
            vouchers.clone(),
            Arc::new(OrderIds::new(node)),
            publisher,
            Duration::from_secs(settings.orders.pending_ttl_secs),
            Duration::from_millis(settings.seckill.sold_out_cache_ms),
        );
        Ok(Self {
            metrics,
            auth: Auth::new(db.clone(), kv.clone(), &settings.auth),
            settings: Arc::new(settings),
            db,
            kv,
            vouchers,
            seckill: Arc::new(seckill),
            producer,
            _lease: Arc::new(lease),
        })
    }

    pub fn producer(&self) -> &DefaultMQProducer {
        &self.producer
    }

    /// Stops the producer once the server has drained.
    pub async fn close(&self) {
        self.producer.clone().shutdown().await;
    }
}
