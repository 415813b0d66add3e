//! Application state, built once from settings and shared by every handler.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::auth::Auth;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::orders::lifecycle::Lifecycle;
use cityhub_core::payments::{Payments, Provider};
use cityhub_core::reconcile::Reconciler;
use cityhub_core::seckill::Seckill;
use cityhub_core::shops::Shops;
use cityhub_core::social::Social;
use cityhub_core::vouchers::Vouchers;
use cityhub_platform::cache::Caches;
use cityhub_platform::ids::NodeLease;
use cityhub_platform::mq::publisher::BatchPublisher;
use cityhub_platform::mq::{ClientRuntime, DefaultMQProducer};
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Every handler's state. One `Arc`: axum clones the state for each
/// extractor of each request, so a clone must cost one atomic increment,
/// not a copy of every service handle (it showed in the seckill benchmark).
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The services behind [`AppState`].
pub struct Services {
    pub settings: Settings,
    /// `http.trusted_proxies`, parsed once.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub db: MySqlPool,
    pub kv: Kv,
    pub auth: Auth,
    pub vouchers: Vouchers,
    pub shops: Shops,
    pub social: Social,
    pub seckill: Arc<Seckill>,
    pub payments: Payments,
    pub reconciler: Reconciler,
    pub metrics: PrometheusHandle,
    producer: DefaultMQProducer,
    lease: Arc<tokio::sync::Mutex<Option<NodeLease>>>,
    /// The cache invalidation listener and the visitor recorder.
    background: TaskTracker,
    stop: CancellationToken,
}

impl AppState {
    /// Connects MySQL (migrating it), Redis and RocketMQ and wires the services.
    /// A broker that is down does not stop the API from starting: `/readyz`
    /// reports it and seckill answers 503 until it is back.
    pub async fn build(settings: Settings, mq: Arc<ClientRuntime>) -> anyhow::Result<Self> {
        // Before anything connects: there is no default secret to fall back on.
        let callback_secret = settings.callback_secret().context("payments")?.to_vec();
        // First, so the series registered below are recorded.
        let metrics = cityhub_core::metrics::install();
        let db = cityhub_platform::db::connect(&settings.database).await.context("connect to MySQL")?;
        let kv = cityhub_core::connect_redis(&settings.redis).await.context("connect to Redis")?;
        let lease = NodeLease::acquire(&kv, settings.ids.node_id, (&settings.ids).into())
            .await
            .context("lease an order-id node")?;

        let producer = cityhub_platform::mq::start_producer(&mq, &settings.mq, &settings.mq.producer_group)
            .await
            .context("start RocketMQ producer")?;
        let topic = &settings.mq.order_topic;
        cityhub_platform::mq::ensure_topic(&producer, topic, settings.mq.topic_queues).await;

        // A publisher of its own, which replaces its producer after a broker outage.
        let publisher = BatchPublisher::start(&mq, &settings.mq, &settings.mq.producer_group, topic.clone())
            .await
            .context("start the order publisher")?;
        let caches = Caches::new(&kv, &settings.cache);
        let auth = Auth::new(db.clone(), kv.clone(), &settings.auth);
        caches.on_invalidation(cityhub_core::auth::SESSIONS, {
            let auth = auth.clone();
            move |hash| {
                let auth = auth.clone();
                async move { auth.forget(hash).await }
            }
        });
        let vouchers = Vouchers::new(db.clone(), kv.clone(), &caches, &settings.vouchers);
        let (shops, visits) = Shops::new(db.clone(), kv.clone(), &caches, &settings.cache, &settings.shops);
        let (background, stop) = (TaskTracker::new(), CancellationToken::new());
        background.spawn(caches.listen(stop.clone()));
        background.spawn({
            let (shops, stop) = (shops.clone(), stop.clone());
            async move { shops.record_visits(visits, stop).await }
        });
        let social = Social::new(db.clone(), kv.clone(), &settings.social, &settings.cache);
        let lifecycle = Lifecycle::new(db.clone(), kv.clone(), &settings.orders);
        let provider = Provider::new(&settings.payments);
        let payments = Payments::new(
            lifecycle,
            kv.clone(),
            vouchers.clone(),
            provider,
            &callback_secret,
            settings.payments.callback_max_age_secs,
        );
        let group = format!("{}_reconciler", settings.mq.producer_group);
        let reconciler =
            Reconciler::start(db.clone(), kv.clone(), &mq, &settings, &group).await.context("start the reconciler")?;
        let seckill = Seckill::new(
            kv.clone(),
            vouchers.clone(),
            lease.ids(),
            publisher,
            settings.orders.pending_ttl_secs,
            settings.seckill.sold_out_cache_ms,
            settings.limits.seckill(),
        );
        let trusted_proxies = settings.http.trusted_proxies().context("http.trusted_proxies")?;
        Ok(Self(Arc::new(Services {
            trusted_proxies,
            metrics,
            auth,
            settings,
            db,
            kv,
            vouchers,
            shops,
            social,
            seckill: Arc::new(seckill),
            payments,
            reconciler,
            producer,
            lease: Arc::new(tokio::sync::Mutex::new(Some(lease))),
            background,
            stop,
        })))
    }

    pub fn producer(&self) -> &DefaultMQProducer {
        &self.producer
    }

    /// Once the server has drained: waits for seckill work whose shopper
    /// hung up, records the last visits, gives up the order-id lease, stops
    /// the producer.
    pub async fn close(&self) {
        self.stop.cancel();
        self.background.close();
        if tokio::time::timeout(Duration::from_secs(5), self.background.wait()).await.is_err() {
            tracing::warn!("background tasks still running at shutdown");
        }
        if !self.seckill.drain(Duration::from_secs(10)).await {
            tracing::warn!("seckill tasks still running at shutdown");
        }
        if let Some(lease) = self.lease.lock().await.take() {
            lease.release().await;
        }
        self.producer.clone().shutdown().await;
    }
}
