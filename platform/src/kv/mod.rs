//! Redis: one multiplexed, auto-reconnecting connection per process
//! ([`redis::aio::ConnectionManager`]; concurrent commands are pipelined on
//! it), the key prefix ([`Keys`]) and the script runner: every Lua script a
//! process uses is loaded once at connect time, so calls go out as EVALSHA
//! (redis-rs reloads a script on NOSCRIPT, e.g. after a Redis restart),
//! except fenced scripts ([`Kv::eval_fenced`]), which verify the server's
//! [`generation`] first.

pub mod generation;
pub mod keys;

use std::sync::{Arc, LazyLock};

use redis::aio::ConnectionManager;
use redis::Script;

pub use generation::Generation;
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
    /// Which copy of its data the server holds (see [`generation`]).
    pub generation: Arc<Generation>,
}

impl Kv {
    /// Connects and loads `scripts` (and the plumbing's own) once.
    pub async fn connect(settings: &RedisSettings, scripts: &[&Script]) -> redis::RedisResult<Self> {
        let client = redis::Client::open(settings.url.expose())?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(3)))
            .set_response_timeout(Some(std::time::Duration::from_secs(3)));
        let mut conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        let keys = Keys::new(&settings.key_prefix);
        let generation = Generation::new(conn.clone(), keys.key(format_args!("redis:generation")));
        // Before any script is loaded: see `generation`.
        generation.verify().await?;
        let own = [&*LEASE].into_iter().chain(crate::ratelimit::scripts()).chain(crate::ids::scripts());
        for script in scripts.iter().copied().chain(own) {
            script.prepare_invoke().load_async(&mut conn).await?;
        }
        Ok(Self { conn, keys, client, generation })
    }

    /// Runs a fenced script (one whose source starts with
    /// [`generation::LUA`]): KEYS are the mark then `keys`, ARGV the verified
    /// generation then `args`. The script answers an array whose first
    /// element is the integer 8 when the caller's generation is not the
    /// server's; then, and on NOSCRIPT (the server restarted or changed) or a
    /// lost connection, the generation is verified again before one more try.
    pub async fn eval_fenced<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: &[String],
    ) -> redis::RedisResult<T> {
        let mut conn = self.conn();
        for attempt in 0..3 {
            let last = attempt == 2;
            let generation = self.generation.current().await?;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(script.get_hash()).arg(keys.len() + 1).arg(self.generation.mark_key()).arg(keys);
            cmd.arg(&*generation).arg(args);
            match cmd.query_async::<redis::Value>(&mut conn).await {
                Ok(reply) if is_stale_caller(&reply) && !last => self.generation.suspect(),
                Ok(reply) => return Ok(redis::from_redis_value(reply)?),
                Err(err) if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) && !last => {
                    self.generation.suspect();
                    self.generation.verify().await?;
                    script.prepare_invoke().load_async(&mut conn).await?;
                }
                Err(err) => {
                    if is_unreachable(&err) {
                        self.generation.suspect();
                    }
                    return Err(err);
                }
            }
        }
        unreachable!("the last attempt returns")
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

/// A fenced script's first answer when the caller's generation is stale.
pub const STALE_CALLER: i64 = 8;

fn is_stale_caller(reply: &redis::Value) -> bool {
    matches!(reply, redis::Value::Array(items) if matches!(items.first(), Some(redis::Value::Int(STALE_CALLER))))
}

/// True when Redis could not be reached at all (no connection, a dropped
/// one, a timeout): an outage, not a problem of the command.
pub fn is_unreachable(err: &redis::RedisError) -> bool {
    err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() || err.is_timeout()
}
