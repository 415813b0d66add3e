//! Test support (feature `testkit`): each [`TestEnv`] gets its own MariaDB
//! database (created and migrated), Redis key prefix and RocketMQ topic and
//! group names, so tests run in parallel on the shared services and never see
//! each other's data. Dropping a `TestEnv` drops its database and keys.
//!
//! Services are found at `CITYHUB_TEST_MYSQL` (default
//! `mysql://root@127.0.0.1:3306`), `CITYHUB_TEST_REDIS` (default
//! `redis://127.0.0.1:6379`) and `CITYHUB_TEST_NAMESRV` (default
//! `127.0.0.1:9876`).

use std::sync::{Arc, OnceLock};

use cityhub_platform::mq::runtime::MqRuntime;
use cityhub_platform::mq::ClientRuntime;
use sqlx::MySqlPool;

use crate::config::{Secret, Settings};
use crate::kv::Kv;

pub mod logs {
    //! Test logging: events go to the test's output and into an in-memory
    //! buffer that tests search ([`contains`], [`any`]), e.g. to follow a
    //! request id from the API to the worker. Span fields are captured too.

    use std::fmt::Write as _;
    use std::sync::Mutex;

    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, SubscriberExt};
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{EnvFilter, Layer};

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());
    const MAX_LINES: usize = 200_000;

    struct Capture;

    struct Line(String);

    impl Visit for Line {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, " {}={:?}", field.name(), value);
        }

        fn record_str(&mut self, field: &Field, value: &str) {
            let _ = write!(self.0, " {}={}", field.name(), value);
        }
    }

    fn keep(line: Line) {
        let mut lines = LINES.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() < MAX_LINES {
            lines.push(line.0);
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
            let mut line = Line(event.metadata().target().to_owned());
            event.record(&mut line);
            keep(line);
        }

        fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, _id: &tracing::span::Id, _ctx: Context<'_, S>) {
            let mut line = Line(format!("{} span {}", attrs.metadata().target(), attrs.metadata().name()));
            attrs.record(&mut line);
            keep(line);
        }

        fn on_record(&self, _id: &tracing::span::Id, values: &tracing::span::Record<'_>, _ctx: Context<'_, S>) {
            let mut line = Line("span record".to_owned());
            values.record(&mut line);
            keep(line);
        }
    }

    pub(super) fn init() {
        init_with("warn,cityhub=info");
    }

    /// Starts capturing with `filter` (unless `RUST_LOG` is set) if nothing
    /// captures yet in this process; call it before [`super::TestEnv::new`]
    /// to capture more than the default.
    pub fn init_with(filter: &str) {
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(filter));
        let _ = tracing_subscriber::registry()
            .with(filter)
            .with(tracing_subscriber::fmt::layer().with_test_writer())
            .with(Capture)
            .try_init();
    }

    /// True when some captured line satisfies `f`.
    pub fn any(f: impl Fn(&str) -> bool) -> bool {
        LINES.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|l| f(l))
    }

    /// True when a captured event's target and fields contain every needle.
    pub fn contains(needles: &[&str]) -> bool {
        let lines = LINES.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().any(|l| needles.iter().all(|n| l.contains(n)))
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// The RocketMQ client runtime shared by every test of this process.
pub fn mq_client() -> Arc<ClientRuntime> {
    static RT: OnceLock<MqRuntime> = OnceLock::new();
    RT.get_or_init(|| MqRuntime::new("test").expect("mq runtime")).client()
}

/// One test's private slice of the real services.
pub struct TestEnv {
    pub settings: Settings,
    pub id: String,
    db_name: String,
}

impl TestEnv {
    /// Settings pointing at fresh names; nothing is created until used.
    pub fn new() -> Self {
        logs::init();
        let id = format!("{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff);
        let db_name = format!("cityhub_t_{id}");
        let mut settings = Settings::defaults();
        settings.http.addr = "127.0.0.1:0".into();
        settings.database.url =
            Secret::new(format!("{}/{db_name}", env_or("CITYHUB_TEST_MYSQL", "mysql://root@127.0.0.1:3306")));
        settings.database.max_connections = 8;
        settings.redis.url = Secret::new(env_or("CITYHUB_TEST_REDIS", "redis://127.0.0.1:6379"));
        settings.redis.key_prefix = format!("t{id}:");
        settings.mq.namesrv_addr = env_or("CITYHUB_TEST_NAMESRV", "127.0.0.1:9876");
        settings.mq.order_topic = format!("cityhub_orders_t{id}");
        settings.mq.producer_group = format!("cityhub_api_t{id}");
        settings.mq.order_consumer_group = format!("cityhub_worker_t{id}");
        settings.mq.topic_queues = 4;
        settings.payments.callback_secret = Secret::new(hex::encode(rand::random::<[u8; 24]>()));
        settings.orders.release_topic = format!("cityhub_release_t{id}");
        settings.orders.release_group = format!("cityhub_release_t{id}");
        settings.social.follow_topic = format!("cityhub_follow_t{id}");
        settings.social.follow_group = format!("cityhub_follow_t{id}");
        // Tests fire many requests from one address on purpose; the limit
        // tests turn limits back on.
        settings.limits.enabled = false;
        Self { settings, id, db_name }
    }

    /// Creates and migrates this test's database.
    pub async fn db(&self) -> MySqlPool {
        cityhub_platform::db::connect(&self.settings.database).await.expect("test database")
    }

    pub async fn kv(&self) -> Kv {
        crate::connect_redis(&self.settings.redis).await.expect("test redis")
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let (db_name, prefix) = (self.db_name.clone(), self.settings.redis.key_prefix.clone());
        let (mysql, redis_url) =
            (env_or("CITYHUB_TEST_MYSQL", "mysql://root@127.0.0.1:3306"), self.settings.redis.url.clone());
        // Async clean-up from a sync Drop: a short-lived runtime on its own thread.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async move {
                use sqlx::Connection;
                if let Ok(mut conn) = sqlx::MySqlConnection::connect(&mysql).await {
                    let _ = sqlx::Executor::execute(&mut conn, format!("DROP DATABASE IF EXISTS `{db_name}`").as_str())
                        .await;
                }
                if let Ok(client) = redis::Client::open(redis_url.expose()) {
                    if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
                        let keys: Vec<String> = redis::cmd("KEYS")
                            .arg(format!("{prefix}*"))
                            .query_async(&mut conn)
                            .await
                            .unwrap_or_default();
                        if !keys.is_empty() {
                            let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query_async(&mut conn).await;
                        }
                    }
                }
            });
            Some(())
        })
        .join();
    }
}

/// Polls `check` until it is true or `timeout` passes; returns its last value.
pub async fn eventually<F, Fut>(timeout: std::time::Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    loop {
        if check().await {
            return true;
        }
        if start.elapsed() > timeout {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Reads of one voucher's sale, for assertions in the API's and the
/// worker's tests alike.
pub mod sale {
    use std::collections::HashMap;
    use std::time::Duration;

    use redis::AsyncCommands;
    use sqlx::MySqlPool;

    use crate::invariants::{self, Accepted, Scope};
    use crate::kv::{CityKeys, Kv};
    use crate::seckill::scripts::BuyerEntry;

    pub async fn order_count(db: &MySqlPool, voucher: u64) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(db)
            .await
            .unwrap()
    }

    /// Waits until `n` orders of `voucher` are in MySQL; returns the count seen last.
    pub async fn wait_for_orders(db: &MySqlPool, voucher: u64, n: i64, timeout: Duration) -> i64 {
        super::eventually(timeout, || async { order_count(db, voucher).await >= n }).await;
        order_count(db, voucher).await
    }

    pub async fn db_stock(db: &MySqlPool, voucher: u64) -> i64 {
        sqlx::query_scalar("SELECT stock FROM seckill_vouchers WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(db)
            .await
            .unwrap()
    }

    /// The voucher's buyers hash, decoded (an unreadable entry fails the test).
    pub async fn buyers(kv: &Kv, voucher: u64) -> HashMap<u64, BuyerEntry> {
        let raw: HashMap<u64, String> = kv.conn().hgetall(kv.keys.seckill_buyers(voucher)).await.unwrap();
        raw.into_iter()
            .map(|(user, e)| (user, BuyerEntry::parse(&e).unwrap_or_else(|| panic!("entry {e:?}"))))
            .collect()
    }

    /// Asserts the stock invariants of a sale whose orders may have been
    /// closed or refunded: DB stock == initial − live orders; Redis stock +
    /// live buyers == initial; the live buyers are exactly the live orders.
    pub async fn assert_stock_agrees(db: &MySqlPool, kv: &Kv, voucher: u64) {
        let (initial, stock): (i64, i64) =
            sqlx::query_as("SELECT CAST(initial_stock AS SIGNED), stock FROM seckill_vouchers WHERE voucher_id = ?")
                .bind(voucher)
                .fetch_one(db)
                .await
                .unwrap();
        let live: HashMap<u64, u64> = sqlx::query_as::<_, (u64, u64)>(
            "SELECT user_id, id FROM orders WHERE voucher_id = ? AND status IN ('unpaid', 'paid')",
        )
        .bind(voucher)
        .fetch_all(db)
        .await
        .unwrap()
        .into_iter()
        .collect();
        assert_eq!(stock, initial - live.len() as i64, "DB stock against {} live orders", live.len());
        let redis_stock: i64 = kv.conn().hget(kv.keys.seckill_voucher(voucher), "stock").await.unwrap();
        let live_buyers: HashMap<u64, u64> =
            buyers(kv, voucher).await.into_iter().filter_map(|(user, e)| Some((user, e.live_order()?))).collect();
        assert_eq!(redis_stock + live_buyers.len() as i64, initial, "Redis stock {redis_stock} against its buyers");
        assert_eq!(live_buyers, live, "live Redis buyers against live orders");
    }

    /// Asserts every invariant of the shared checker, given every 202 of the sale.
    pub async fn assert_invariants(db: &MySqlPool, kv: &Kv, voucher: u64, accepted: &[Accepted]) {
        let state = invariants::load(db, kv, voucher).await.unwrap();
        for check in invariants::check(accepted, &state, Scope::WholeSale) {
            assert!(check.pass, "{}: {}", check.name, check.detail);
        }
    }
}

/// A Redis server of one test's own, on a free port, with its data in a
/// folder of its own: for failures the shared server must never see (a
/// restart from an older snapshot, a failover). Killed when dropped.
pub struct PrivateRedis {
    pub port: u16,
    dir: std::path::PathBuf,
    child: Option<std::process::Child>,
}

impl PrivateRedis {
    /// Starts an empty server (no automatic snapshots, no AOF).
    pub async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("cityhub-redis-{port}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Self { port, dir, child: None };
        redis.spawn().await;
        redis
    }

    async fn spawn(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--dbfilename", "dump.rdb", "--logfile", "redis.log"])
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        let url = self.url();
        let up = eventually(std::time::Duration::from_secs(10), || async {
            let Ok(client) = redis::Client::open(url.as_str()) else { return false };
            let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return false };
            redis::cmd("PING").query_async::<String>(&mut conn).await.is_ok()
        })
        .await;
        assert!(up, "the private Redis did not start");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn command(&self, cmd: &mut redis::Cmd) -> redis::RedisResult<redis::Value> {
        let client = redis::Client::open(self.url())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        cmd.query_async(&mut conn).await
    }

    /// `SAVE`: the snapshot a later restart comes back with.
    pub async fn snapshot(&self) {
        self.command(&mut redis::cmd("SAVE")).await.expect("SAVE");
    }

    /// `FLUSHALL`: the server keeps running with no data.
    pub async fn flush_all(&self) {
        self.command(&mut redis::cmd("FLUSHALL")).await.expect("FLUSHALL");
    }

    /// Kills the server (nothing saved) and starts it again from the last
    /// snapshot: Redis comes back older than it was, keys and all.
    pub async fn restart_from_snapshot(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawn().await;
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
