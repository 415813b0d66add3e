//! The composition root: every business service, built once from the
//! settings on one MySQL pool, one Redis handle (with every domain's Lua
//! scripts loaded, [`connect_redis`]) and one set of caches. The API, the
//! order worker, the CLI and the test harnesses take their services from
//! here; none calls a service's constructor itself. The parts bound to
//! RocketMQ or to an order-id lease (the seckill's publisher, the
//! reconciler's producer and progress reader) are built here too, by the
//! processes that need them ([`Services::seckill`], [`Services::reconciler`]).
//!
//! This is the one module that knows every domain; no domain imports it.

use std::sync::{Arc, Mutex};

use anyhow::Context;
use cityhub_platform::cache::Caches;
use cityhub_platform::ids::OrderIds;
use cityhub_platform::mq::publisher::BatchPublisher;
use cityhub_platform::mq::ClientRuntime;
use sqlx::MySqlPool;
use tokio::sync::mpsc::Receiver;

use crate::auth::Auth;
use crate::config::{ConfigError, Settings};
use crate::console::Console;
use crate::kv::Kv;
use crate::notes::feed::Feed;
use crate::notes::Notes;
use crate::orders::lifecycle::Lifecycle;
use crate::payments::{Payments, Provider};
use crate::reconcile::Reconciler;
use crate::seckill::Seckill;
use crate::shops::visitors::Visit;
use crate::shops::Shops;
use crate::signin::SignIns;
use crate::social::Social;
use crate::vouchers::Vouchers;

/// Connects Redis with every business Lua script loaded once (and the
/// platform's own): the one place that knows every domain's scripts.
pub async fn connect_redis(settings: &cityhub_platform::config::RedisSettings) -> redis::RedisResult<Kv> {
    let scripts: Vec<&redis::Script> = crate::seckill::scripts::all()
        .into_iter()
        .chain(crate::auth::guard::scripts())
        .chain([crate::shops::geo::script(), crate::social::projection::script(), crate::vouchers::claims::script()])
        .chain(crate::social::lists::scripts())
        .chain(crate::auth::scripts())
        .chain(crate::notes::scripts())
        .collect();
    Kv::connect(settings, &scripts).await
}

/// The business services of one process. Clone freely (handles).
#[derive(Clone)]
pub struct Services {
    pub settings: Settings,
    pub db: MySqlPool,
    pub kv: Kv,
    pub caches: Caches,
    pub auth: Auth,
    pub vouchers: Vouchers,
    pub shops: Shops,
    pub social: Social,
    pub notes: Notes,
    pub feed: Feed,
    pub signins: SignIns,
    pub lifecycle: Lifecycle,
    pub console: Console,
    /// The shop-visit queue, for the one recorder of the process.
    visits: Arc<Mutex<Option<Receiver<Visit>>>>,
}

impl Services {
    /// Connects MySQL (migrating it when `database.migrate`) and Redis, then
    /// builds every service.
    pub async fn connect(settings: &Settings) -> anyhow::Result<Self> {
        let db = cityhub_platform::db::connect(&settings.database).await.context("connect to MySQL")?;
        let kv = connect_redis(&settings.redis).await.context("connect to Redis")?;
        Ok(Self::on(settings, db, kv))
    }

    /// The services on a pool and a Redis handle already open.
    pub fn on(settings: &Settings, db: MySqlPool, kv: Kv) -> Self {
        let caches = Caches::new(&kv, &settings.cache);
        let auth = Auth::new(db.clone(), kv.clone(), &settings.auth);
        let vouchers = Vouchers::new(db.clone(), kv.clone(), &caches, &settings.vouchers);
        let (shops, visits) = Shops::new(db.clone(), kv.clone(), &caches, &settings.cache, &settings.shops);
        let social = Social::new(db.clone(), kv.clone(), auth.known().clone(), &settings.social, &settings.cache);
        let notes = Notes::new(db.clone(), kv.clone(), &caches, &settings.notes, &settings.cache);
        let feed = Feed::new(db.clone(), kv.clone(), social.clone(), &settings.notes, settings.social.list_ttl_secs);
        let lifecycle = Lifecycle::new(db.clone(), kv.clone(), &settings.orders);
        let signins = SignIns::new(kv.clone());
        let console = Console::new(db.clone(), kv.clone(), lifecycle.window());
        Self {
            settings: settings.clone(),
            db,
            kv,
            caches,
            auth,
            vouchers,
            shops,
            social,
            notes,
            feed,
            signins,
            lifecycle,
            console,
            visits: Arc::new(Mutex::new(Some(visits))),
        }
    }

    /// Payments, which need the callback secret (it has no default).
    pub fn payments(&self) -> Result<Payments, ConfigError> {
        let secret = self.settings.callback_secret()?;
        Ok(Payments::new(
            self.lifecycle.clone(),
            self.kv.clone(),
            self.vouchers.clone(),
            Provider::new(&self.settings.payments),
            secret,
            self.settings.payments.callback_max_age_secs,
        ))
    }

    /// The seckill, issuing order ids from `ids` and publishing through
    /// `publisher`.
    pub fn seckill(&self, ids: Arc<OrderIds>, publisher: BatchPublisher) -> Seckill {
        let s = &self.settings;
        Seckill::new(
            self.kv.clone(),
            self.vouchers.clone(),
            ids,
            publisher,
            s.orders.pending_ttl_secs,
            s.seckill.sold_out_cache_ms,
            s.limits.seckill(),
        )
    }

    /// The reconciler, re-publishing orders under producer group `group`.
    pub async fn reconciler(&self, mq: &Arc<ClientRuntime>, group: &str) -> anyhow::Result<Reconciler> {
        Reconciler::start(self.db.clone(), self.kv.clone(), mq, &self.settings, group)
            .await
            .context("start the reconciler")
    }

    /// The shop-visit queue, for the process's one recorder
    /// ([`Shops::record_visits`]); `None` once taken.
    pub fn take_visits(&self) -> Option<Receiver<Visit>> {
        self.visits.lock().expect("visits lock").take()
    }
}
