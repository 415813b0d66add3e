//! Typed settings, layered: built-in defaults, then an optional TOML file
//! (`CITYHUB_CONFIG`, else `config/cityhub.toml` if present), then environment
//! variables `CITYHUB__<SECTION>__<KEY>` (e.g. `CITYHUB__DATABASE__URL`).
//!
//! Every field has a documented default so a bare `cityhub-api` runs against
//! the local stack. [`Settings::validate`] runs at start-up; secrets never
//! appear in `Debug` output.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The whole configuration of both binaries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub redis: RedisSettings,
    pub mq: MqSettings,
    pub auth: AuthSettings,
    pub ids: IdSettings,
    pub seckill: SeckillSettings,
    pub orders: OrderSettings,
    pub worker: WorkerSettings,
    pub log: LogSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Address the API listens on. Default `127.0.0.1:8080`.
    pub addr: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseSettings {
    /// MySQL/MariaDB URL. Default `mysql://root@127.0.0.1:3306/cityhub`.
    pub url: Secret,
    /// Pool size. Default 16.
    pub max_connections: u32,
    /// Create the database if missing and apply migrations at start-up
    /// (the API does this; the worker waits for it). Default true.
    pub migrate: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisSettings {
    /// Default `redis://127.0.0.1:6379`.
    pub url: Secret,
    /// Prefix of every key CityHub writes. Default `cityhub:`.
    pub key_prefix: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MqSettings {
    /// RocketMQ name server. Default `127.0.0.1:9876`.
    pub namesrv_addr: String,
    /// Topic of accepted seckill orders. Default `cityhub_orders`.
    pub order_topic: String,
    /// Producer group of the API. Default `cityhub_api`.
    pub producer_group: String,
    /// Consumer group of the order worker. Default `cityhub_order_worker`.
    pub order_consumer_group: String,
    /// Queues per topic when CityHub creates it. Default 8.
    pub topic_queues: u32,
    /// Most orders in one `send_batch`. Default 128.
    pub batch_max: usize,
    /// Longest wait for a batch to fill, in ms. Default 2.
    pub batch_linger_ms: u64,
    /// Batches in flight at once. Default 4.
    pub batch_in_flight: usize,
    /// Send timeout in ms; past it the order is released and the shopper gets 503. Default 3000.
    pub send_timeout_ms: u64,
    /// Most messages handed to the order consumer at once. Default 64.
    pub consume_batch_max: u32,
    /// How often a consumer samples its lag into `cityhub_consumer_lag_messages`, in ms. Default 5000.
    pub lag_sample_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    /// Lifetime of a login token, renewed on use. Default 7200 s.
    pub token_ttl_secs: u64,
    /// Lifetime of a login code. Default 300 s.
    pub code_ttl_secs: u64,
    /// How long a session, once read from Redis, is served from memory. A
    /// token deleted in Redis stops working within this time. Default 5000 ms.
    pub session_cache_ms: u64,
    /// Bearer token that admin routes accept. Default `dev-admin-token`;
    /// set `CITYHUB__AUTH__ADMIN_TOKEN` anywhere but a laptop.
    pub admin_token: Secret,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IdSettings {
    /// Fixed node id (0..=1023) for order ids. Default: leased from Redis.
    pub node_id: Option<u16>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SeckillSettings {
    /// Once Redis answers "sold out" for a voucher, this instance answers
    /// "sold out" from memory for this long without asking Redis. Stock
    /// released meanwhile is sold after it lapses. 0 disables. Default 200 ms.
    pub sold_out_cache_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrderSettings {
    /// How long an accepted order stays visible as `queued` before the worker
    /// stores it. Default 86400 s.
    pub pending_ttl_secs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkerSettings {
    /// Attempts at a batch on transient database errors before the messages
    /// go back to the broker for a later retry. Default 5.
    pub db_attempts: u32,
    /// Where the worker serves `/metrics` and `/healthz`. Default `127.0.0.1:9091`.
    pub metrics_addr: String,
    /// Most orders the worker stores in one transaction when consumed
    /// batches queue up (group commit). Default 512.
    pub combine_max_rows: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `pretty` (default) or `json`.
    pub format: String,
    /// `tracing` filter; `RUST_LOG` wins when set. Default `info`.
    pub filter: String,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self { addr: "127.0.0.1:8080".into() }
    }
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        Self { url: Secret::new("mysql://root@127.0.0.1:3306/cityhub"), max_connections: 16, migrate: true }
    }
}

impl Default for RedisSettings {
    fn default() -> Self {
        Self { url: Secret::new("redis://127.0.0.1:6379"), key_prefix: "cityhub:".into() }
    }
}

impl Default for MqSettings {
    fn default() -> Self {
        Self {
            namesrv_addr: "127.0.0.1:9876".into(),
            order_topic: "cityhub_orders".into(),
            producer_group: "cityhub_api".into(),
            order_consumer_group: "cityhub_order_worker".into(),
            topic_queues: 8,
            batch_max: 128,
            batch_linger_ms: 2,
            batch_in_flight: 4,
            send_timeout_ms: 3000,
            consume_batch_max: 64,
            lag_sample_ms: 5000,
        }
    }
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            token_ttl_secs: 7200,
            code_ttl_secs: 300,
            session_cache_ms: 5000,
            admin_token: Secret::new("dev-admin-token"),
        }
    }
}

impl Default for SeckillSettings {
    fn default() -> Self {
        Self { sold_out_cache_ms: 200 }
    }
}

impl Default for OrderSettings {
    fn default() -> Self {
        Self { pending_ttl_secs: 86_400 }
    }
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self { db_attempts: 5, metrics_addr: "127.0.0.1:9091".into(), combine_max_rows: 512 }
    }
}

impl Default for LogSettings {
    fn default() -> Self {
        Self { format: "pretty".into(), filter: "info".into() }
    }
}

/// Why settings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read settings")]
    Load(#[from] config::ConfigError),
    #[error("invalid setting {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}

impl Settings {
    /// Defaults, then the settings file, then `CITYHUB__*` variables; validated.
    pub fn load() -> Result<Self, ConfigError> {
        Self::layered(None)
    }

    /// As [`Settings::load`], with `vars` in place of the process environment
    /// (used to check deployment files against what the binaries accept).
    pub fn from_vars(vars: HashMap<String, String>) -> Result<Self, ConfigError> {
        Self::layered(Some(vars.into_iter().collect()))
    }

    /// These settings as `CITYHUB__*` variables (the inverse of
    /// [`Settings::from_vars`]), e.g. to start a binary with them.
    pub fn to_vars(&self) -> HashMap<String, String> {
        let mut vars = HashMap::new();
        let tree = serde_json::to_value(self).expect("settings serialize");
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

    fn layered(vars: Option<config::Map<String, String>>) -> Result<Self, ConfigError> {
        let file = std::env::var("CITYHUB_CONFIG").unwrap_or_else(|_| "config/cityhub.toml".into());
        let settings: Settings = config::Config::builder()
            .add_source(config::File::with_name(&file).required(std::env::var("CITYHUB_CONFIG").is_ok()))
            .add_source(
                config::Environment::with_prefix("CITYHUB")
                    .prefix_separator("__")
                    .separator("__")
                    .try_parsing(true)
                    .source(vars),
            )
            .build()?
            .try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what serde cannot: ranges and non-empty values.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, reason: &str| Err(ConfigError::Invalid { field, reason: reason.into() });
        if self.database.max_connections == 0 {
            return invalid("database.max_connections", "must be at least 1");
        }
        if self.auth.admin_token.expose().len() < 8 {
            return invalid("auth.admin_token", "must be at least 8 characters");
        }
        if self.auth.token_ttl_secs == 0 || self.auth.code_ttl_secs == 0 {
            return invalid("auth.*_ttl_secs", "must be positive");
        }
        if self.mq.batch_max == 0 || self.mq.batch_max > 1024 {
            return invalid("mq.batch_max", "must be 1..=1024");
        }
        if self.mq.batch_in_flight == 0 || self.mq.consume_batch_max == 0 || self.mq.lag_sample_ms == 0 {
            return invalid("mq.batch_in_flight / mq.consume_batch_max / mq.lag_sample_ms", "must be positive");
        }
        if matches!(self.ids.node_id, Some(n) if n > crate::ids::MAX_NODE) {
            return invalid("ids.node_id", "must be 0..=1023");
        }
        if !matches!(self.log.format.as_str(), "pretty" | "json") {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Settings::default().validate().unwrap();
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let s = Settings::default();
        assert!(!format!("{s:?}").contains("dev-admin-token"));
    }

    #[test]
    fn environment_variables_override_defaults_and_typos_are_refused() {
        let vars = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let s = Settings::from_vars(vars(&[("CITYHUB__MQ__BATCH_MAX", "64"), ("CITYHUB__REDIS__KEY_PREFIX", "x:")]))
            .unwrap();
        assert_eq!((s.mq.batch_max, s.redis.key_prefix.as_str()), (64, "x:"));
        assert!(Settings::from_vars(vars(&[("CITYHUB__DATABASE__URI", "mysql://x")])).is_err());
        assert!(Settings::from_vars(vars(&[("CITYHUB__MQ__BATCH_MAX", "0")])).is_err());
    }

    #[test]
    fn settings_survive_a_round_trip_through_variables() {
        let mut s = Settings::default();
        s.mq.order_topic = "t1".into();
        s.ids.node_id = Some(9);
        let back = Settings::from_vars(s.to_vars()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&s).unwrap());
    }

    #[test]
    fn the_example_file_lists_every_default() {
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../config/cityhub.example.toml");
        let file: Settings = config::Config::builder()
            .add_source(config::File::new(example, config::FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        assert_eq!(serde_json::to_value(&file).unwrap(), serde_json::to_value(Settings::default()).unwrap());
    }

    #[test]
    fn out_of_range_node_id_is_rejected() {
        let mut s = Settings::default();
        s.ids.node_id = Some(4096);
        assert!(matches!(s.validate(), Err(ConfigError::Invalid { field: "ids.node_id", .. })));
    }
}
