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

use rocketmq_client_rust::ClientRuntime;
use sqlx::MySqlPool;

use crate::config::{Secret, Settings};
use crate::kv::Kv;
use crate::mq::runtime::MqRuntime;

pub mod logs {
    //! Test logging: events go to the test's output and into an in-memory
    //! buffer that tests search ([`contains`]), e.g. to follow a request id
    //! from the API to the worker.

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

    impl<S: tracing::Subscriber> Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
            let mut line = Line(event.metadata().target().to_owned());
            event.record(&mut line);
            let mut lines = LINES.lock().unwrap_or_else(|p| p.into_inner());
            if lines.len() < MAX_LINES {
                lines.push(line.0);
            }
        }
    }

    pub(super) fn init() {
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn,cityhub=info"));
        let _ = tracing_subscriber::registry()
            .with(filter)
            .with(tracing_subscriber::fmt::layer().with_test_writer())
            .with(Capture)
            .try_init();
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
        let mut settings = Settings::default();
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
        Self { settings, id, db_name }
    }

    /// Creates and migrates this test's database.
    pub async fn db(&self) -> MySqlPool {
        crate::db::connect(&self.settings.database).await.expect("test database")
    }

    pub async fn kv(&self) -> Kv {
        Kv::connect(&self.settings.redis).await.expect("test redis")
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
