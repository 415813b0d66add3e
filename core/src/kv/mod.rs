//! Redis: one multiplexed, auto-reconnecting connection per process
//! ([`redis::aio::ConnectionManager`]; concurrent commands are pipelined on
//! it), the key names ([`Keys`]) and the typed Lua scripts ([`scripts`]).

pub mod keys;
pub mod scripts;

use redis::aio::ConnectionManager;

pub use keys::Keys;

use crate::config::RedisSettings;

/// A cheap-to-clone handle: the shared connection plus the key namer.
#[derive(Clone)]
pub struct Kv {
    pub conn: ConnectionManager,
    pub keys: Keys,
}

impl Kv {
    /// Connects and loads every Lua script once, so later calls are EVALSHA.
    pub async fn connect(settings: &RedisSettings) -> redis::RedisResult<Self> {
        let client = redis::Client::open(settings.url.expose())?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(3)))
            .set_response_timeout(Some(std::time::Duration::from_secs(3)));
        let mut conn = ConnectionManager::new_with_config(client, config).await?;
        scripts::load_all(&mut conn).await?;
        Ok(Self { conn, keys: Keys::new(&settings.key_prefix) })
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
