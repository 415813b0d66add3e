//! Redis: one multiplexed, auto-reconnecting connection per process
//! ([`redis::aio::ConnectionManager`]; concurrent commands are pipelined on
//! it), the key prefix ([`Keys`]) and the script runner: every Lua script a
//! process uses is loaded once at connect time, so calls go out as EVALSHA
//! (redis-rs reloads a script on NOSCRIPT, e.g. after a Redis restart).

pub mod keys;

use std::sync::LazyLock;

use redis::aio::ConnectionManager;
use redis::Script;

pub use keys::Keys;
pub use redis::RedisError;

use crate::config::RedisSettings;

/// `lease.lua`: renews or gives up a lease key only for the owner whose
/// token it holds (order-id node leases, cache rebuild locks).
pub(crate) static LEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/lease.lua")));

/// A cheap-to-clone handle: the shared connection plus the key namer.
#[derive(Clone)]
pub struct Kv {
    pub conn: ConnectionManager,
    pub keys: Keys,
    /// For connections of their own (pub/sub).
    pub client: redis::Client,
}

impl Kv {
    /// Connects and loads `scripts` (and the plumbing's own) once.
    pub async fn connect(settings: &RedisSettings, scripts: &[&Script]) -> redis::RedisResult<Self> {
        let client = redis::Client::open(settings.url.expose())?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(3)))
            .set_response_timeout(Some(std::time::Duration::from_secs(3)));
        let mut conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        for script in scripts.iter().copied().chain([&*LEASE]).chain(crate::ratelimit::scripts()) {
            script.prepare_invoke().load_async(&mut conn).await?;
        }
        Ok(Self { conn, keys: Keys::new(&settings.key_prefix), client })
    }

    /// A clone of the shared connection, for commands that need `&mut`.
    pub fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// `PING`, for readiness checks.
    pub async fn ping(&self) -> redis::RedisResult<()> {
        redis::cmd("PING").query_async::<String>(&mut self.conn()).await.map(|_| ())
    }
}

/// True when Redis could not be reached at all (no connection, a dropped
/// one, a timeout): an outage, not a problem of the command.
pub fn is_unreachable(err: &redis::RedisError) -> bool {
    err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() || err.is_timeout()
}
