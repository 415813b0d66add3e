//! Settings loading, layered: the defaults (one TOML text, the project's
//! `config/cityhub.example.toml`, compiled in by the caller), then an
//! optional TOML file (`CITYHUB_CONFIG`, else `config/cityhub.toml` if
//! present), then environment variables `CITYHUB__<SECTION>__<KEY>`
//! (e.g. `CITYHUB__DATABASE__URL`). Unknown keys are refused.
//!
//! Also the settings of the plumbing itself; each section checks its own
//! ranges ([`Check`]). Secrets never appear in `Debug` output.

use std::collections::HashMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Why settings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read settings")]
    Load(#[from] config::ConfigError),
    #[error("invalid setting {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}

/// A section's own range checks.
pub trait Check {
    fn check(&self) -> Result<(), ConfigError>;
}

/// `Err(Invalid)` for `field`.
pub fn invalid(field: &'static str, reason: &str) -> Result<(), ConfigError> {
    Err(ConfigError::Invalid { field, reason: reason.into() })
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Address the public API listens on.
    pub addr: String,
    /// The API's ops listener (`/metrics`, `/healthz`), kept off the public port.
    pub metrics_addr: String,
    /// Comma-separated IPs of the reverse proxies in front of the API: only
    /// when the direct peer is one of them is `X-Forwarded-For` believed.
    pub trusted_proxies: String,
}

impl HttpSettings {
    /// The trusted proxies, parsed.
    pub fn trusted_proxies(&self) -> Result<Vec<std::net::IpAddr>, std::net::AddrParseError> {
        self.trusted_proxies.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::parse).collect()
    }
}

impl Check for HttpSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if self.trusted_proxies().is_err() {
            return invalid("http.trusted_proxies", "must be comma-separated IP addresses");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// MySQL/MariaDB URL.
    pub url: Secret,
    /// Pool size.
    pub max_connections: u32,
    /// Create the database if missing and apply migrations at start-up
    /// (the API does this; the worker waits for it).
    pub migrate: bool,
}

impl Check for DatabaseSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if self.max_connections == 0 {
            return invalid("database.max_connections", "must be at least 1");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSettings {
    pub url: Secret,
    /// Prefix of every key CityHub writes.
    pub key_prefix: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    pub topic_queues: u32,
    /// Most messages in one `send_batch`.
    pub batch_max: usize,
    /// Longest wait for a batch to fill, in ms.
    pub batch_linger_ms: u64,
    /// Batches in flight at once.
    pub batch_in_flight: usize,
    /// Send timeout in ms; past it a seckill reservation is released and the shopper gets 503.
    pub send_timeout_ms: u64,
    /// Most messages handed to a consumer's handler at once.
    pub consume_batch_max: u32,
    /// How often a consumer samples its lag into `cityhub_consumer_lag_messages`, in ms.
    pub lag_sample_ms: u64,
    /// Redeliveries of a failing message before its last delivery, which
    /// parks it if it fails again (the broker's dead-letter limit).
    pub max_redeliveries: i32,
}

impl Check for MqSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if self.batch_max == 0 || self.batch_max > 1024 {
            return invalid("mq.batch_max", "must be 1..=1024");
        }
        if self.batch_in_flight == 0 || self.consume_batch_max == 0 || self.lag_sample_ms == 0 {
            return invalid("mq.batch_in_flight / mq.consume_batch_max / mq.lag_sample_ms", "must be positive");
        }
        if self.max_redeliveries < 1 {
            return invalid("mq.max_redeliveries", "must be at least 1");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdSettings {
    /// Fixed node id (0..=1023) for order ids, still leased in Redis (start-up
    /// fails while another process holds it). Unset: any free node.
    pub node_id: Option<u16>,
    /// TTL of a node lease in Redis, ms.
    pub lease_ttl_ms: u64,
    /// Ids are issued only within this long of the last confirmed renewal
    /// (renewed every third of it), ms; shorter than `lease_ttl_ms`.
    pub lease_window_ms: u64,
}

/// The two-level cache (`crate::cache`). Each use sets its own logical TTL
/// and freshness; these are the knobs they share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSettings {
    /// Most entries per cache in L1 (moka, in process).
    pub l1_capacity: u64,
    /// How long L1 keeps an entry, ms: the bound on staleness when an
    /// invalidation message is lost.
    pub l1_ttl_ms: u64,
    /// How long an explicit "none" (a MySQL miss) is cached in Redis, seconds.
    pub null_ttl_secs: u64,
    /// Each expiry written is lengthened by a random 0 to this share of its
    /// TTL, percent, so keys written together do not expire together.
    pub jitter_percent: u64,
    /// Lease of the rebuild lock, ms; longer than any rebuild.
    pub lock_lease_ms: u64,
    /// How long a caller that must not be served stale waits for another
    /// caller's rebuild before it answers "busy", ms.
    pub wait_ms: u64,
}

impl Check for CacheSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if self.l1_capacity == 0 || self.l1_ttl_ms == 0 || self.null_ttl_secs == 0 {
            return invalid("cache.l1_capacity / cache.l1_ttl_ms / cache.null_ttl_secs", "must be positive");
        }
        if self.jitter_percent > 100 {
            return invalid("cache.jitter_percent", "must be 0 to 100");
        }
        if self.lock_lease_ms < 100 || self.wait_ms == 0 {
            return invalid("cache.lock_lease_ms / cache.wait_ms", "lease at least 100 ms, wait positive");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutboxSettings {
    /// Most rows one relay round claims.
    pub batch_max: usize,
    /// Pause between relay rounds that found less than a full batch, ms.
    pub poll_ms: u64,
    /// How long published rows are kept before they are purged, seconds.
    pub retention_secs: u64,
    /// Longest backoff after failed publishes, ms.
    pub backoff_max_ms: u64,
}

impl Check for OutboxSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if self.batch_max == 0 || self.poll_ms == 0 {
            return invalid("outbox.batch_max / outbox.poll_ms", "must be positive");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `pretty` or `json`.
    pub format: String,
    /// `tracing` filter; `RUST_LOG` wins when set.
    pub filter: String,
}

impl Check for LogSettings {
    fn check(&self) -> Result<(), ConfigError> {
        if !matches!(self.format.as_str(), "pretty" | "json") {
            return invalid("log.format", "must be `pretty` or `json`");
        }
        Ok(())
    }
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
