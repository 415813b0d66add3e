//! Settings loading, layered: the defaults (one TOML text, the project's
//! `config/cityhub.example.toml`, compiled in by the caller), then an
//! optional TOML file (`CITYHUB_CONFIG`, else `config/cityhub.toml` if
//! present), then environment variables `CITYHUB__<SECTION>__<KEY>`
//! (e.g. `CITYHUB__DATABASE__URL`). Unknown keys are refused.
//!
//! Also the settings of the plumbing itself. Durations are `Duration`s,
//! written in the files as whole seconds (fields named `_secs`, [`secs`]) or
//! milliseconds (`_ms`, [`millis`]). Each field's range is declared on the
//! field (`validator`), and [`validated`] turns the first failure into a
//! [`ConfigError`]. Secrets never appear in `Debug` output.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use validator::{Validate, ValidationError, ValidationErrors, ValidationErrorsKind};

/// Why settings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read settings")]
    Load(#[from] config::ConfigError),
    #[error("invalid setting {field}: {reason}")]
    Invalid { field: String, reason: String },
}

/// `settings` checked against the ranges declared on their fields; the
/// first failure names its field by path (`section.key`).
pub fn validated<T: Validate>(settings: &T) -> Result<(), ConfigError> {
    match settings.validate() {
        Ok(()) => Ok(()),
        Err(errors) => {
            let (field, reason) = first_failure(&errors, "");
            Err(ConfigError::Invalid { field, reason })
        }
    }
}

fn first_failure(errors: &ValidationErrors, path: &str) -> (String, String) {
    let mut fields: Vec<_> = errors.errors().iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    let (name, kind) = fields.into_iter().next().expect("a failed validation names a field");
    let path = if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
    match kind {
        ValidationErrorsKind::Struct(inner) => first_failure(inner, &path),
        ValidationErrorsKind::List(items) => {
            let (_, inner) = items.iter().next().expect("a failed list names an item");
            first_failure(inner, &path)
        }
        ValidationErrorsKind::Field(failures) => {
            let reason = failures
                .first()
                .map(|f| match (&f.message, f.params.get("min"), f.params.get("max")) {
                    (Some(message), _, _) => message.to_string(),
                    (None, Some(min), Some(max)) => format!("must be {min} to {max}"),
                    (None, Some(min), None) => format!("must be at least {min}"),
                    (None, None, Some(max)) => format!("must be at most {max}"),
                    (None, None, None) => f.code.to_string(),
                })
                .unwrap_or_default();
            (path, reason)
        }
    }
}

/// A validation failure with `message`, for a field's custom check.
pub fn failure(message: &'static str) -> ValidationError {
    ValidationError::new("invalid").with_message(Cow::Borrowed(message))
}

/// A custom check: the duration is not zero.
pub fn positive(d: &Duration) -> Result<(), ValidationError> {
    if d.is_zero() {
        return Err(failure("must be positive"));
    }
    Ok(())
}

/// Serde for a `Duration` written as whole seconds.
pub mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}

/// Serde for a `Duration` written as whole milliseconds.
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// `defaults` (TOML), then the settings file, then `CITYHUB__*` variables
/// (`vars` in place of the process environment when given).
pub fn layered<T: DeserializeOwned>(defaults: &str, vars: Option<HashMap<String, String>>) -> Result<T, ConfigError> {
    let file = std::env::var("CITYHUB_CONFIG").unwrap_or_else(|_| "config/cityhub.toml".into());
    let settings = config::Config::builder()
        .add_source(config::File::from_str(defaults, config::FileFormat::Toml))
        .add_source(config::File::with_name(&file).required(std::env::var("CITYHUB_CONFIG").is_ok()))
        .add_source(
            config::Environment::with_prefix("CITYHUB")
                .prefix_separator("__")
                .separator("__")
                .try_parsing(true)
                .source(vars.map(|v| v.into_iter().collect())),
        )
        .build()?
        .try_deserialize()?;
    Ok(settings)
}

/// `defaults` alone.
pub fn defaults<T: DeserializeOwned>(defaults: &str) -> Result<T, ConfigError> {
    Ok(config::Config::builder()
        .add_source(config::File::from_str(defaults, config::FileFormat::Toml))
        .build()?
        .try_deserialize()?)
}

/// Settings as `CITYHUB__*` variables (the inverse of [`layered`]'s
/// environment layer), e.g. to start a binary with them.
pub fn to_vars<T: Serialize>(settings: &T) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    let tree = serde_json::to_value(settings).expect("settings serialize");
    for (section, fields) in tree.as_object().into_iter().flatten() {
        for (key, value) in fields.as_object().into_iter().flatten() {
            let value = match value {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            vars.insert(format!("CITYHUB__{}__{}", section.to_uppercase(), key.to_uppercase()), value);
        }
    }
    vars
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Address the public API listens on.
    pub addr: String,
    /// The API's ops listener (`/metrics`, `/healthz`), kept off the public port.
    pub metrics_addr: String,
    /// Comma-separated IPs of the reverse proxies in front of the API: only
    /// when the direct peer is one of them is `X-Forwarded-For` believed.
    #[validate(custom(function = "ip_list"))]
    pub trusted_proxies: String,
    /// A connection that has not sent a whole request head within this long
    /// (idle between requests, or sending it slowly) is closed, ms.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub header_timeout_ms: Duration,
    /// The most bytes of a request head (431 past it; at least 8192).
    #[validate(range(min = 8192))]
    pub max_header_bytes: usize,
    /// Open connections one instance keeps; past it new ones wait in the
    /// listen backlog.
    #[validate(range(min = 1))]
    pub max_connections: usize,
    /// Requests one instance handles at once; past it, 503 `overloaded`.
    #[validate(range(min = 1))]
    pub max_in_flight: usize,
    /// The longest one request is worked on before 503 `request_timeout`, ms.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub request_timeout_ms: Duration,
    /// After SIGTERM, how long the API keeps serving while `GET /serving`
    /// answers 503 `draining`, so that the balancer takes it out of its pool
    /// before it stops accepting (at least the balancer's check interval
    /// times its fall count), ms; 0: stop accepting at once.
    #[serde(with = "millis")]
    pub drain_ms: Duration,
}

fn ip_list(list: &str) -> Result<(), ValidationError> {
    let parsed: Result<Vec<std::net::IpAddr>, _> =
        list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::parse).collect();
    parsed.map(|_| ()).map_err(|_| failure("must be comma-separated IP addresses"))
}

impl HttpSettings {
    /// The trusted proxies, parsed.
    pub fn trusted_proxies(&self) -> Result<Vec<std::net::IpAddr>, std::net::AddrParseError> {
        self.trusted_proxies.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::parse).collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// MySQL/MariaDB URL.
    pub url: Secret,
    /// Pool size.
    #[validate(range(min = 1))]
    pub max_connections: u32,
    /// Create the database if missing and apply migrations at start-up
    /// (the API does this; the worker waits for it).
    pub migrate: bool,
    /// How long a statement of CityHub's waits for a row lock before it
    /// fails (`innodb_lock_wait_timeout` of each of its sessions; the
    /// server's default is 50 s). A failed order batch is retried, so this
    /// bounds how long a lock held elsewhere holds the order stream back.
    #[validate(range(min = 1, max = 3600))]
    pub lock_wait_secs: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct RedisSettings {
    /// The one server, when `cluster_nodes` is empty.
    pub url: Secret,
    /// Comma-separated `host:port` of some nodes of a Redis Cluster (the
    /// rest are discovered); empty for the one server at `url`.
    pub cluster_nodes: String,
    /// Prefix of every key CityHub writes.
    pub key_prefix: String,
}

impl RedisSettings {
    /// The cluster nodes as `redis://` URLs; empty for one server.
    pub fn cluster_node_urls(&self) -> Vec<String> {
        self.cluster_nodes
            .split(',')
            .map(str::trim)
            .filter(|node| !node.is_empty())
            .map(|node| if node.contains("://") { node.to_owned() } else { format!("redis://{node}") })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct MqSettings {
    /// RocketMQ name server.
    pub namesrv_addr: String,
    /// Topic of accepted seckill orders.
    pub order_topic: String,
    /// Producer group of the API.
    pub producer_group: String,
    /// Consumer group of the order worker.
    pub order_consumer_group: String,
    /// Queues per topic when CityHub creates it.
    #[validate(range(min = 1))]
    pub topic_queues: u32,
    /// Most messages in one `send_batch`.
    #[validate(range(min = 1, max = 1024))]
    pub batch_max: usize,
    /// Longest wait for a batch to fill.
    #[serde(with = "millis")]
    pub batch_linger_ms: Duration,
    /// Batches in flight at once.
    #[validate(range(min = 1))]
    pub batch_in_flight: usize,
    /// Send timeout; past it a seckill reservation is released and the shopper gets 503.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub send_timeout_ms: Duration,
    /// The longest a message waits in the publisher for its send to start;
    /// past it, it is not sent and its shopper gets 503. With the send
    /// timeout it bounds when a published order can reach the broker (the
    /// reconciler's wait after a Redis loss).
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub publish_wait_max_ms: Duration,
    /// Most messages handed to a consumer's handler at once.
    #[validate(range(min = 1))]
    pub consume_batch_max: u32,
    /// Batches a consumer hands its handler at once (1 to 32, the client
    /// runtime's blocking lane): more in flight lets the order worker
    /// combine more rows into each transaction.
    #[validate(range(min = 1, max = 32))]
    pub consume_threads: u32,
    /// How often a consumer samples its lag into `cityhub_consumer_lag_messages`.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub lag_sample_ms: Duration,
    /// How long the order worker keeps trying a message that fails with an
    /// error (not an outage: those are waited out) before parking it as
    /// `gave_up`.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub give_up_after_secs: Duration,
    /// After 5 failed connects to one broker or name server, a client refuses
    /// that address for this long before it tries once more: the longest a
    /// returned broker waits to be used again.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub reconnect_after_ms: Duration,
    /// How long the broker holds a consumer's pull that finds no message;
    /// the consumer gives up on its answer 2 s after that, so a pull sent on
    /// a connection that died (the broker killed) is retried by then. The
    /// consumer's committed offsets ride on its next pull, so this also
    /// bounds how late an idle queue's progress reaches the broker.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub pull_hold_ms: Duration,
    /// A consumer's pause before pulling a queue again after a pull failed.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub pull_backoff_ms: Duration,
    /// How often a consumer re-balances its queues with its group (at most
    /// once a second): how soon a consumer that joins or leaves, or a broker
    /// that returns, is given or relieved of queues.
    #[serde(with = "millis")]
    #[validate(custom(function = "at_least_a_second"))]
    pub rebalance_every_ms: Duration,
    /// How often a consumer reports its consumed offsets to the broker (at
    /// least once a second): how soon the broker knows an order was stored,
    /// which a rebuild after a Redis loss waits for.
    #[serde(with = "millis")]
    #[validate(custom(function = "at_least_a_second"))]
    pub offset_commit_every_ms: Duration,
}

fn at_least_a_second(every: &Duration) -> Result<(), ValidationError> {
    if *every < Duration::from_secs(1) {
        return Err(failure("must be at least 1000 ms"));
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[validate(schema(function = "window_within_ttl"))]
pub struct IdSettings {
    /// Fixed node id (0..=1023) for order ids, still leased in Redis (start-up
    /// fails while another process holds it). Unset: any free node.
    #[validate(range(max = 1023))]
    pub node_id: Option<u16>,
    /// TTL of a node lease in Redis.
    #[serde(with = "millis")]
    pub lease_ttl_ms: Duration,
    /// Ids are issued only within this long of the last confirmed renewal
    /// (renewed every third of it); at least 30 ms, shorter than `lease_ttl_ms`.
    #[serde(with = "millis")]
    pub lease_window_ms: Duration,
}

fn window_within_ttl(ids: &IdSettings) -> Result<(), ValidationError> {
    if ids.lease_window_ms < Duration::from_millis(30) || ids.lease_window_ms >= ids.lease_ttl_ms {
        return Err(failure("ids.lease_window_ms must be at least 30 ms and below ids.lease_ttl_ms"));
    }
    Ok(())
}

/// The two-level cache (`crate::cache`). Each use sets its own logical TTL
/// and freshness; these are the knobs they share.
#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct CacheSettings {
    /// Most entries per cache in L1 (moka, in process).
    #[validate(range(min = 1))]
    pub l1_capacity: u64,
    /// How long L1 keeps an entry: the bound on staleness when an
    /// invalidation message is lost.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub l1_ttl_ms: Duration,
    /// How long an explicit "none" (a MySQL miss) is cached in Redis.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub null_ttl_secs: Duration,
    /// Each expiry written is lengthened by a random 0 to this share of its
    /// TTL, percent, so keys written together do not expire together.
    #[validate(range(max = 100))]
    pub jitter_percent: u64,
    /// Lease of the rebuild lock; longer than any rebuild, at least 100 ms.
    #[serde(with = "millis")]
    #[validate(custom(function = "lock_lease"))]
    pub lock_lease_ms: Duration,
    /// How long a caller that must not be served stale waits for another
    /// caller's rebuild before it answers "busy".
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub wait_ms: Duration,
}

fn lock_lease(d: &Duration) -> Result<(), ValidationError> {
    if *d < Duration::from_millis(100) {
        return Err(failure("must be at least 100 ms"));
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct OutboxSettings {
    /// Most rows one relay round claims.
    #[validate(range(min = 1))]
    pub batch_max: usize,
    /// Pause between relay rounds that found less than a full batch.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub poll_ms: Duration,
    /// How long published rows are kept before they are purged.
    #[serde(with = "secs")]
    pub retention_secs: Duration,
    /// Longest backoff after failed publishes.
    #[serde(with = "millis")]
    pub backoff_max_ms: Duration,
    /// Which relay publishes the outbox (see [`RelayKind`]).
    pub relay: RelayKind,
    /// The binlog relay's replica id, unique among the server's replicas
    /// (the server drops an earlier stream opened with the same id).
    #[validate(range(min = 1))]
    pub binlog_server_id: u32,
    /// How often the server sends a heartbeat on a quiet binlog stream; a
    /// stream silent for three periods counts as lost.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub binlog_heartbeat_ms: Duration,
    /// With the binlog relay, rows still unpublished this long after they
    /// were written are published by a poll sweep, run this often.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub sweep_after_secs: Duration,
}

/// The outbox relay a worker runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelayKind {
    /// Claims due rows every `poll_ms` (`FOR UPDATE SKIP LOCKED`).
    Poll,
    /// Reads the rows' inserts from MariaDB's binlog (row format); needs
    /// `log_bin`, `binlog_format=ROW`, `binlog_row_metadata=FULL` and a user
    /// with `REPLICATION SLAVE`.
    Binlog,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `pretty` or `json`.
    #[validate(custom(function = "log_format"))]
    pub format: String,
    /// `tracing` filter; `RUST_LOG` wins when set.
    pub filter: String,
}

fn log_format(format: &str) -> Result<(), ValidationError> {
    if !matches!(format, "pretty" | "json") {
        return Err(failure("must be `pretty` or `json`"));
    }
    Ok(())
}

/// A string that never shows in `Debug` or logs.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}
