//! Application state, built once from settings and shared by every handler.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::auth::Auth;
use cityhub_core::config::Settings;
use cityhub_core::console::{self, Console};
use cityhub_core::kv::Kv;
use cityhub_core::notes::feed::Feed;
use cityhub_core::notes::Notes;
use cityhub_core::payments::Payments;
use cityhub_core::reconcile::Reconciler;
use cityhub_core::seckill::Seckill;
use cityhub_core::shops::Shops;
use cityhub_core::signin::SignIns;
use cityhub_core::social::Social;
use cityhub_core::vouchers::Vouchers;
use cityhub_platform::ids::NodeLease;
use cityhub_platform::mq::publisher::BatchPublisher;
use cityhub_platform::mq::{ClientRuntime, DefaultMQProducer};
use cityhub_platform::presence::{self, Identity, Status};
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Every handler's state. One `Arc`: axum clones the state for each
/// extractor of each request, so a clone must cost one atomic increment,
/// not a copy of every service handle (it showed in the seckill benchmark).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// The most limit keys (a client's address or user on one route) an
/// instance holds a lease on, and counts failed authentications of.
const LEASED_KEYS: u64 = 100_000;

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The services behind [`AppState`]: the business ones, built by
/// [`cityhub_core::Services`], and the API's own.
pub struct Shared {
    pub settings: Settings,
    /// `http.trusted_proxies`, parsed once.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub db: MySqlPool,
    pub kv: Kv,
    pub auth: Auth,
    pub vouchers: Vouchers,
    pub shops: Shops,
    pub social: Social,
    pub notes: Notes,
    pub feed: Feed,
    pub signins: SignIns,
    pub seckill: Arc<Seckill>,
    pub payments: Payments,
    pub reconciler: Reconciler,
    pub console: Console,
    pub metrics: PrometheusHandle,
    /// Requests whose token authenticated no one, per client (see
    /// `limits.unauthorized_per_sec`); `None` while limits are off.
    pub failed_auth: Option<cityhub_platform::ratelimit::Local>,
    /// This instance's leases on the shared route limits (`crate::limits`).
    pub leases: cityhub_platform::ratelimit::Leases,
    producer: DefaultMQProducer,
    /// The seckill path's publisher, shut down last.
    publisher: BatchPublisher,
    lease: Arc<tokio::sync::Mutex<Option<NodeLease>>>,
    /// The cache invalidation listener and the visitor recorder.
    background: TaskTracker,
    stop: CancellationToken,
    /// Set once shutdown began: `GET /serving` answers 503 `draining`.
    draining: std::sync::atomic::AtomicBool,
}

impl AppState {
    /// Connects MySQL (migrating it), Redis and RocketMQ and wires the services.
    /// A broker that is down does not stop the API from starting: `/readyz`
    /// reports it and seckill answers 503 until it is back.
    pub async fn build(settings: Settings, mq: Arc<ClientRuntime>) -> anyhow::Result<Self> {
        // Before anything connects: there is no default secret to fall back on.
        settings.callback_secret().context("payments")?;
        // First, so the series registered below are recorded.
        let metrics = cityhub_core::metrics::install();
        let services = cityhub_core::Services::connect(&settings).await?;
        let (db, kv) = (services.db.clone(), services.kv.clone());
        services.auth.prepare().await.context("read the token MAC key")?;
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
        services.caches.on_invalidation(cityhub_core::auth::SESSIONS, {
            let auth = services.auth.clone();
            move |hash| {
                let auth = auth.clone();
                async move { auth.forget(hash).await }
            }
        });
        let (background, stop) = (TaskTracker::new(), CancellationToken::new());
        background.spawn(services.caches.clone().listen(stop.clone()));
        if let Some(visits) = services.take_visits() {
            let (shops, stop) = (services.shops.clone(), stop.clone());
            background.spawn(async move { shops.record_visits(visits, stop).await });
        }
        let payments = services.payments()?;
        let group = format!("{}_reconciler", settings.mq.producer_group);
        let reconciler = services.reconciler(&mq, &group).await?;
        let seckill = services.seckill(lease.ids(), publisher.clone());
        let trusted_proxies = settings.http.trusted_proxies().context("http.trusted_proxies")?;
        let limits = &settings.limits;
        let failed_auth = (limits.enabled && limits.unauthorized_per_sec > 0).then(|| {
            cityhub_platform::ratelimit::Local::new(limits.unauthorized_per_sec, Duration::from_secs(1), LEASED_KEYS)
        });
        Ok(Self(Arc::new(Shared {
            trusted_proxies,
            failed_auth,
            leases: cityhub_platform::ratelimit::Leases::new(LEASED_KEYS),
            draining: Default::default(),
            metrics,
            auth: services.auth,
            vouchers: services.vouchers,
            shops: services.shops,
            social: services.social,
            notes: services.notes,
            feed: services.feed,
            signins: services.signins,
            console: services.console,
            settings,
            db,
            kv,
            seckill: Arc::new(seckill),
            payments,
            reconciler,
            producer,
            publisher,
            lease: Arc::new(tokio::sync::Mutex::new(Some(lease))),
            background,
            stop,
        })))
    }

    /// Announces this API in the presence list until [`AppState::close`]:
    /// the dependencies it cannot reach (also on `cityhub_dependency_up`)
    /// and its 202s since it started.
    pub fn announce(&self) {
        let (state, stop) = (self.clone(), self.stop.clone());
        let me = Identity::of_this_process("api");
        self.background.spawn(presence::run(self.kv.clone(), me, stop, move || {
            let state = state.clone();
            async move {
                let checks = crate::routes::health::check(&state).await;
                checks.record();
                let failing = checks.failing();
                let text = cityhub_platform::metrics::render(&state.metrics);
                let accepted = cityhub_core::metrics::SECKILL_REQUESTS;
                let wanted = [(console::FIGURE_ACCEPTED, accepted, &["outcome=\"accepted\""][..])];
                Status { failing, figures: console::figures(&text, &wanted) }
            }
        }));
    }

    pub fn producer(&self) -> &DefaultMQProducer {
        &self.producer
    }

    /// Once the server has drained: waits for seckill work whose shopper
    /// hung up, records the last visits, gives up the order-id lease, stops
    /// the producers (the client runtime's shutdown would wait out a live one).
    /// Shutdown began: the balancer's check (`GET /serving`) fails from now
    /// on, while requests are still served.
    pub fn start_draining(&self) {
        self.draining.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether shutdown began.
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

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
        self.publisher.shutdown().await;
        self.reconciler.shutdown().await;
    }
}
