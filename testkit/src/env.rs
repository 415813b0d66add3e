//! One test's private slice of the real services: each [`TestEnv`] gets its own MariaDB
//! database (created and migrated), Redis key prefix and RocketMQ topic and
//! group names, so tests run in parallel on the shared services and never see
//! each other's data. Dropping a `TestEnv` drops its database and keys.
//!
//! Services are found at `CITYHUB_TEST_MYSQL` (default
//! `mysql://root@127.0.0.1:3306`), `CITYHUB_TEST_REDIS` (default
//! `redis://127.0.0.1:6379`) and `CITYHUB_TEST_NAMESRV` (default
//! `127.0.0.1:9876`). With `CITYHUB_TEST_REDIS_CLUSTER` (comma-separated
//! `host:port` of cluster nodes) every test runs on that Redis Cluster
//! instead: the suite's cluster profile (`scripts/test --cluster`). With
//! `CITYHUB_TEST_OUTBOX_RELAY=binlog` (and `CITYHUB_TEST_MYSQL` on a server
//! writing a row binlog, `scripts/stack binlog`) every relay is the binlog
//! relay: the suite's binlog profile. Each test's relay has a replica id of
//! its own, since the server drops a stream when another opens with its id.

use std::sync::{Arc, OnceLock};

use cityhub_core::config::{Secret, Settings};
use cityhub_core::kv::Kv;
use cityhub_platform::mq::runtime::MqRuntime;
use cityhub_platform::mq::ClientRuntime;
use sqlx::MySqlPool;

use crate::logs;

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
        // Counters recorded before a recorder exists are lost.
        cityhub_core::metrics::install();
        let id = format!("{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff);
        let db_name = format!("cityhub_t_{id}");
        let mut settings = Settings::defaults();
        settings.http.addr = "127.0.0.1:0".into();
        // Tests stop their API at once; the drain has a test of its own.
        settings.http.drain_ms = std::time::Duration::ZERO;
        settings.database.url =
            Secret::new(format!("{}/{db_name}", env_or("CITYHUB_TEST_MYSQL", "mysql://root@127.0.0.1:3306")));
        settings.database.max_connections = 8;
        settings.redis.url = Secret::new(env_or("CITYHUB_TEST_REDIS", "redis://127.0.0.1:6379"));
        settings.redis.cluster_nodes = env_or("CITYHUB_TEST_REDIS_CLUSTER", "");
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
        settings.notes.feed_topic = format!("cityhub_feed_t{id}");
        settings.notes.feed_group = format!("cityhub_feed_t{id}");
        if env_or("CITYHUB_TEST_OUTBOX_RELAY", "poll") == "binlog" {
            settings.outbox.relay = cityhub_platform::config::RelayKind::Binlog;
        }
        settings.outbox.binlog_server_id = 10_000 + rand::random::<u32>() % 1_000_000_000;
        // Tests fire many requests from one address on purpose; the limit
        // tests turn limits back on.
        settings.limits.enabled = false;
        Self { settings, id, db_name }
    }

    /// As [`TestEnv::new`], on the MariaDB that writes a row binlog
    /// (`CITYHUB_TEST_BINLOG_MYSQL`, default `mysql://root@127.0.0.1:3307`,
    /// `scripts/stack binlog`), with the binlog relay: the binlog relay's own
    /// tests, in every profile.
    pub fn on_binlog() -> Self {
        let mut env = Self::new();
        let server = env_or("CITYHUB_TEST_BINLOG_MYSQL", "mysql://root@127.0.0.1:3307");
        env.settings.database.url = Secret::new(format!("{server}/{}", env.db_name));
        env.settings.outbox.relay = cityhub_platform::config::RelayKind::Binlog;
        env
    }

    /// Creates and migrates this test's database.
    pub async fn db(&self) -> MySqlPool {
        cityhub_platform::db::connect(&self.settings.database).await.expect("test database")
    }

    pub async fn kv(&self) -> Kv {
        cityhub_core::connect_redis(&self.settings.redis).await.expect("test redis")
    }
}

impl TestEnv {
    /// `cityhub_consumer_messages_total` of this test's order topic for
    /// `result` (`stored`, `redelivered`, `parked`): what the order
    /// consumer did, as `/metrics` shows it.
    pub fn order_messages(&self, result: &str) -> u64 {
        let result = format!("result=\"{result}\"");
        metric(cityhub_platform::metrics::CONSUMER_MESSAGES, &[&self.order_topic_label(), &result]) as u64
    }

    /// `cityhub_consumer_held_batches_total` of this test's order topic:
    /// batches that failed and were tried again in place.
    pub fn held_batches(&self) -> u64 {
        metric(cityhub_platform::metrics::CONSUMER_HELD_BATCHES, &[&self.order_topic_label()]) as u64
    }

    fn order_topic_label(&self) -> String {
        format!("topic=\"{}\"", self.settings.mq.order_topic)
    }
}

/// The sum of the series of metric `name` carrying every label of `labels`
/// (`key="value"`) that this process recorded; 0 when there is none.
/// (Each test runs in a process of its own.)
pub fn metric(name: &str, labels: &[&str]) -> f64 {
    let text = cityhub_platform::metrics::render(&cityhub_core::metrics::install());
    cityhub_platform::metrics::sample(&text, name, labels).unwrap_or(0.0)
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let (db_name, prefix) = (self.db_name.clone(), self.settings.redis.key_prefix.clone());
        let url = self.settings.database.url.expose();
        let mysql = url.strip_suffix(&format!("/{db_name}")).unwrap_or(url).to_owned();
        let redis = self.settings.redis.clone();
        // Async clean-up from a sync Drop: a short-lived runtime on its own thread.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async move {
                use sqlx::Connection;
                if let Ok(mut conn) = sqlx::MySqlConnection::connect(&mysql).await {
                    let _ = sqlx::Executor::execute(&mut conn, format!("DROP DATABASE IF EXISTS `{db_name}`").as_str())
                        .await;
                }
                drop_keys(&redis, &prefix).await;
            });
            Some(())
        })
        .join();
    }
}

/// Deletes every key under `prefix` (on a cluster, KEYS asks every master
/// and each key is deleted on its own node).
async fn drop_keys(redis: &cityhub_platform::config::RedisSettings, prefix: &str) {
    let nodes = redis.cluster_node_urls();
    let conn = if nodes.is_empty() {
        let Ok(client) = redis::Client::open(redis.url.expose()) else { return };
        let Ok(conn) = client.get_connection_manager().await else { return };
        cityhub_platform::kv::Conn::Single(conn)
    } else {
        let Ok(client) = redis::cluster::ClusterClient::new(nodes) else { return };
        let Ok(conn) = client.get_async_connection().await else { return };
        cityhub_platform::kv::Conn::Cluster(conn)
    };
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{prefix}*")).query_async(&mut conn.clone()).await.unwrap_or_default();
    let _ = conn.query_each(keys.iter().map(redis::Cmd::del).collect()).await;
}
