//! `Harness`: the worker on a private slice of the real services, with the
//! seckill rules (the same service the API runs) to make real orders.

use std::sync::Arc;
use std::time::Duration;

use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::seckill::scripts::BuyerEntry;
use cityhub_core::seckill::{Seckill, SeckillError};
use cityhub_core::{Services, UserId, VoucherId};
use cityhub_order_worker::Worker;
use cityhub_platform::ids::NodeLease;
use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_platform::parking::Parked;
use cityhub_testkit::invariants::Accepted;
use cityhub_testkit::{mq_client, sale, Fakes, TestEnv};
use sqlx::MySqlPool;

pub const DRAIN: Duration = Duration::from_secs(60);

pub struct Harness {
    pub env: TestEnv,
    pub db: MySqlPool,
    pub kv: Kv,
    pub services: Services,
    pub seckill: Arc<Seckill>,
    pub worker: Option<Worker>,
    lease: Option<NodeLease>,
}

impl Harness {
    /// The seckill rules, and the worker if `worker`.
    pub async fn start(worker: bool, tweak: impl FnOnce(&mut Settings)) -> Self {
        // First, as the binaries do, so every series below is recorded.
        cityhub_core::metrics::install();
        let mut env = TestEnv::new();
        // Every request asks Redis (no "sold out" answered from memory).
        env.settings.seckill.sold_out_cache_ms = Duration::ZERO;
        tweak(&mut env.settings);
        let s = env.settings.clone();
        let services = Services::on(&s, env.db().await, env.kv().await);
        let (db, kv) = (services.db.clone(), services.kv.clone());
        let lease = NodeLease::acquire(&kv, None, (&s.ids).into()).await.unwrap();
        let producer = cityhub_platform::mq::start_producer(&mq_client(), &s.mq, &s.mq.producer_group).await.unwrap();
        cityhub_platform::mq::ensure_topic(&producer, &s.mq.order_topic, s.mq.topic_queues).await;
        let publisher = BatchPublisher::spawn(producer, s.mq.order_topic.clone(), BatchConfig::from(&s.mq));
        let seckill = Arc::new(services.seckill(lease.ids(), publisher));
        let mut harness = Self { env, db, kv, services, seckill, worker: None, lease: Some(lease) };
        if worker {
            harness.start_worker().await;
        }
        harness
    }

    pub async fn start_worker(&mut self) {
        self.start_worker_on(self.kv.clone()).await;
    }

    /// Starts the worker with its own Redis handle (e.g. through a [`crate::outage::Outage`]).
    pub async fn start_worker_on(&mut self, kv: Kv) {
        let services = Services::on(&self.env.settings, self.db.clone(), kv);
        let worker = Worker::start(&services, &mq_client()).await;
        self.worker = Some(worker.expect("worker"));
    }

    /// A seckill voucher of `stock` units, on sale now for an hour.
    pub async fn voucher(&self, stock: u32) -> VoucherId {
        self.services.voucher().stock(stock).on_sale().create().await
    }

    /// `n` users' ids.
    pub async fn users(&self, n: usize) -> Vec<UserId> {
        self.services.users(n).await
    }

    /// One seckill request of `user`, as the API makes it.
    pub async fn buy(&self, user_id: UserId, voucher: VoucherId) -> Result<Accepted, SeckillError> {
        let won = self.seckill.attempt(user_id, voucher, "127.0.0.1".into(), None).await?;
        Ok(Accepted { order_id: won.order_id, user_id })
    }

    /// A publisher of its own on the order topic, to send hand-made messages.
    pub async fn publisher(&self) -> BatchPublisher {
        let s = &self.env.settings.mq;
        let producer = cityhub_platform::mq::start_producer(&mq_client(), s, &format!("{}_replay", s.producer_group))
            .await
            .unwrap();
        BatchPublisher::spawn(producer, s.order_topic.clone(), BatchConfig::from(s))
    }

    pub async fn order_count(&self, voucher: VoucherId) -> i64 {
        sale::order_count(&self.db, voucher).await
    }

    /// Waits until `n` orders of `voucher` are in MySQL; returns the count seen last.
    pub async fn wait_for_orders(&self, voucher: VoucherId, n: i64, timeout: Duration) -> i64 {
        sale::wait_for_orders(&self.db, voucher, n, timeout).await
    }

    pub async fn db_stock(&self, voucher: VoucherId) -> i64 {
        sale::db_stock(&self.db, voucher).await
    }

    pub async fn buyers(&self, voucher: VoucherId) -> std::collections::HashMap<UserId, BuyerEntry> {
        sale::buyers(&self.kv, voucher).await
    }

    /// Every parked message, oldest first.
    pub async fn parked(&self) -> Vec<Parked> {
        cityhub_platform::parking::list(&self.db, true, 100).await.unwrap()
    }

    /// Asserts every invariant of the shared checker, given every 202 of the sale.
    pub async fn assert_invariants(&self, voucher: VoucherId, accepted: &[Accepted]) {
        sale::assert_invariants(&self.db, &self.kv, voucher, accepted).await
    }

    /// Stops the worker (every job), as a deploy would.
    pub async fn stop_worker(&mut self) {
        if let Some(worker) = self.worker.take() {
            worker.shutdown(Duration::from_secs(30)).await.unwrap();
        }
    }

    pub async fn shutdown(mut self) {
        if let Some(worker) = self.worker.take() {
            worker.shutdown(Duration::from_secs(30)).await.unwrap();
        }
        self.seckill.drain(Duration::from_secs(10)).await;
        if let Some(lease) = self.lease.take() {
            lease.release().await;
        }
    }
}
