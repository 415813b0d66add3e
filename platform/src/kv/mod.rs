//! Redis: one multiplexed, auto-reconnecting connection per process to one
//! server or to a Redis Cluster (`redis.cluster_nodes`; see [`conn`]), the
//! key prefix ([`Keys`]) and the script runner: every Lua script a process
//! uses is loaded once at connect time (on every master of a cluster), so
//! calls go out as EVALSHA (redis-rs reloads a script on NOSCRIPT, e.g. after
//! a restart or on a promoted replica), except fenced scripts
//! ([`Kv::eval_fenced`]), which verify the [`generation`] of the copy that
//! holds their keys first.

pub mod conn;
pub mod generation;
pub mod keys;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::Script;

pub use conn::Conn;
pub use generation::Generation;
pub use keys::Keys;
pub use redis::RedisError;

use crate::config::RedisSettings;

/// `lease.lua`: renews or gives up a lease key only for the owner whose
/// token it holds (order-id node leases, cache rebuild locks).
pub(crate) static LEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/lease.lua")));

/// How long a connection attempt or a reply may take.
const TIMEOUT: Duration = Duration::from_secs(3);

/// A cheap-to-clone handle: the shared connection plus the key namer.
#[derive(Clone)]
pub struct Kv {
    pub conn: Conn,
    pub keys: Keys,
    /// For connections of their own (pub/sub): the server, or each node
    /// of the cluster (a message published on any node reaches them all).
    subscribable: Arc<[redis::Client]>,
    /// Which copy of its data the server holds (see [`generation`]).
    pub generation: Arc<Generation>,
}

impl Kv {
    /// Connects and loads `scripts` (and the plumbing's own) once.
    pub async fn connect(settings: &RedisSettings, scripts: &[&Script]) -> redis::RedisResult<Self> {
        let nodes = settings.cluster_node_urls();
        let (mut conn, subscribable) = if nodes.is_empty() {
            let client = redis::Client::open(settings.url.expose())?;
            let config = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(Some(TIMEOUT))
                .set_response_timeout(Some(TIMEOUT));
            let conn = ConnectionManager::new_with_config(client.clone(), config).await?;
            (Conn::Single(conn), vec![client])
        } else {
            let cluster = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                .connection_timeout(TIMEOUT)
                .response_timeout(TIMEOUT)
                .build()?;
            let conn = cluster.get_async_connection().await?;
            let clients = nodes.iter().map(|url| redis::Client::open(url.as_str())).collect::<Result<_, _>>()?;
            (Conn::Cluster(conn), clients)
        };
        let keys = Keys::new(&settings.key_prefix);
        let generation = Generation::new(conn.clone(), keys.key(format_args!("redis:generation")));
        // Before any script is loaded: see `generation`.
        generation.start().await?;
        let own = [&*LEASE].into_iter().chain(crate::ratelimit::scripts()).chain(crate::ids::scripts());
        for script in scripts.iter().copied().chain(own) {
            script.prepare_invoke().load_async(&mut conn).await?;
        }
        Ok(Self { conn, keys, subscribable: subscribable.into(), generation })
    }

    /// A pub/sub connection of its own: to the server, or to the first
    /// cluster node that answers.
    pub async fn pubsub(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut last = None;
        for client in self.subscribable.iter() {
            match client.get_async_pubsub().await {
                Ok(pubsub) => return Ok(pubsub),
                Err(err) => last = Some(err),
            }
        }
        Err(last
            .unwrap_or_else(|| redis::RedisError::from((redis::ErrorKind::Client, "no Redis node to subscribe on"))))
    }

    /// Runs a fenced script (one whose source starts with
    /// [`generation::LUA`]): KEYS are the mark of `keys[0]`'s copy then
    /// `keys`, ARGV that copy's verified generation then `args`. The script answers an array whose first
    /// element is the integer 8 when the caller's generation is not the
    /// server's; then, and on NOSCRIPT (the server restarted or changed) or a
    /// lost connection, the generation is verified again before one more try.
    pub async fn eval_fenced<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: &[String],
    ) -> redis::RedisResult<T> {
        Ok(self.eval_fenced_under(script, keys, args).await?.0)
    }

    /// [`eval_fenced`](Self::eval_fenced), answering also the generation
    /// the script ran under (for [`Generation::confirmed_within`] before a
    /// client is told that what it did took effect).
    pub async fn eval_fenced_under<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: &[String],
    ) -> redis::RedisResult<(T, Arc<str>)> {
        let mut conn = self.conn();
        let first = keys.first().map(String::as_str).unwrap_or_default();
        for attempt in 0..3 {
            let last = attempt == 2;
            let verified = self.generation.verified(first).await?;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(script.get_hash()).arg(keys.len() + 1).arg(self.generation.mark_for(first)).arg(keys);
            cmd.arg(&*verified.generation).arg(args);
            let sent = std::time::Instant::now();
            match cmd.query_async::<redis::Value>(&mut conn).await {
                Ok(reply) if is_stale_caller(&reply) && !last => self.generation.suspect(),
                Ok(reply) => {
                    if !is_stale_caller(&reply) {
                        verified.confirm(sent);
                    }
                    return Ok((redis::from_redis_value(reply)?, Arc::clone(&verified.generation)));
                }
                Err(err) if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) && !last => {
                    self.generation.suspect();
                    self.generation.verified(first).await?;
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
    pub fn conn(&self) -> Conn {
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
/// one, a timeout, a cluster without a master for the slot): an outage, not
/// a problem of the command.
pub fn is_unreachable(err: &redis::RedisError) -> bool {
    use redis::{ErrorKind::Server, ServerErrorKind::*};
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_timeout()
        || matches!(err.kind(), Server(ClusterDown | TryAgain | MasterDown))
}
