//! The whole configuration of the binaries: the plumbing's sections (from
//! `cityhub_platform::config`) and the business rules' knobs. The defaults are
//! written once, in `config/cityhub.example.toml`, compiled in as the base
//! layer; then the settings file, then `CITYHUB__<SECTION>__<KEY>` variables
//! (see `cityhub_platform::config`). [`Settings::validate`] runs at start-up.

use std::collections::HashMap;

use cityhub_platform::config::{self as layers, invalid, Check};
pub use cityhub_platform::config::{
    CacheSettings, ConfigError, DatabaseSettings, HttpSettings, IdSettings, LogSettings, MqSettings, OutboxSettings,
    RedisSettings, Secret,
};
use cityhub_platform::ratelimit::{Rules, Subject};
use serde::{Deserialize, Serialize};

/// Every default, in one place.
pub const DEFAULTS: &str = include_str!("../../config/cityhub.example.toml");

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub redis: RedisSettings,
    pub mq: MqSettings,
    pub auth: AuthSettings,
    pub ids: IdSettings,
    pub seckill: SeckillSettings,
    pub vouchers: VoucherSettings,
    pub shops: ShopSettings,
    pub cache: CacheSettings,
    pub orders: OrderSettings,
    pub payments: PaymentSettings,
    pub limits: LimitSettings,
    pub reconcile: ReconcileSettings,
    pub social: SocialSettings,
    pub worker: WorkerSettings,
    pub outbox: OutboxSettings,
    pub log: LogSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Lifetime of a login token, renewed on use, seconds.
    pub token_ttl_secs: u64,
    /// Lifetime of a login code, seconds.
    pub code_ttl_secs: u64,
    /// How long a session, once read from Redis, is served from memory, ms.
    /// A token deleted in Redis stops working within this time.
    pub session_cache_ms: u64,
    /// Write each login code to the log at INFO (development only: there is
    /// no SMS gateway); `scripts/run` turns it on.
    pub log_codes: bool,
    /// Code requests allowed per phone within `strike_window_secs`; one more
    /// locks the phone out.
    pub code_requests_per_phone: u32,
    /// Code requests allowed per client IP within the window.
    pub code_requests_per_ip: u32,
    /// Wrong codes allowed per phone within the window, across codes.
    pub wrong_codes_per_phone: u32,
    /// Wrong codes allowed per client IP within the window.
    pub wrong_codes_per_ip: u32,
    /// How long strikes count, seconds.
    pub strike_window_secs: u64,
    /// How long a phone or IP over a limit is locked out of login, seconds.
    pub lockout_secs: u64,
}

/// `[limits]`: each guarded route's rate limits, one line a route (the
/// syntax is [`Rules`]'). The README's "Limits" table lists them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Off: no route is limited (a load test from one machine).
    pub enabled: bool,
    /// `POST /vouchers/{id}/seckill`, per voucher; sliding windows by
    /// `user`, `ip` or `global`, counted inside the seckill script.
    pub seckill: Rules,
    /// `POST /auth/code`.
    pub login_code: Rules,
    /// `POST /auth/login`.
    pub login: Rules,
    /// `POST /orders/{id}/pay`.
    pub payment: Rules,
    /// `PUT`/`DELETE /users/{id}/follow` and `/users/{id}/block`, one budget.
    pub follow: Rules,
}

impl LimitSettings {
    /// `rules` (one of this section's routes) while limits are on, else none.
    pub fn in_force<'a>(&self, rules: &'a Rules) -> &'a Rules {
        static NONE: Rules = Rules(Vec::new());
        if self.enabled {
            rules
        } else {
            &NONE
        }
    }

    /// The seckill route's rules in force.
    pub fn seckill(&self) -> Rules {
        self.in_force(&self.seckill).clone()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeckillSettings {
    /// Once Redis answers "sold out" for a voucher, this instance answers
    /// "sold out" from memory for this long (ms) without asking Redis. Stock
    /// released meanwhile is sold after it lapses. 0 disables.
    pub sold_out_cache_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoucherSettings {
    /// Logical TTL of a voucher's details in the Redis cache, seconds.
    pub cache_ttl_secs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShopSettings {
    /// Logical TTL of a shop in the Redis cache, seconds.
    pub cache_ttl_secs: u64,
    /// Bits of the Bloom filter of existing shop ids.
    pub bloom_bits: u64,
    /// Hash functions of the Bloom filter.
    pub bloom_hashes: u32,
    /// How often the worker checks that the Bloom filter and the GEO
    /// indexes exist (and rebuilds them from MySQL), seconds.
    pub index_check_secs: u64,
    /// Days a daily unique-visitor HyperLogLog is kept.
    pub uv_retention_days: u32,
    /// Most days one unique-visitor query spans.
    pub uv_max_days: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderSettings {
    /// How long an accepted order stays visible as `queued` before the worker
    /// stores it, seconds.
    pub pending_ttl_secs: u64,
    /// An unpaid order is closed this long after it was accepted, seconds;
    /// its owner reads it as closed from then on.
    pub payment_timeout_secs: u64,
    /// How often the worker's close job runs, seconds.
    pub close_every_secs: u64,
    /// Most orders the close job reads and closes per batch.
    pub close_batch: u32,
    /// Topic of stock-release events (a closed order gives its unit back).
    pub release_topic: String,
    /// Consumer group that applies stock-release events to Redis.
    pub release_group: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentSettings {
    /// Secret of the provider's signed callbacks (HMAC-SHA256 of the body).
    pub callback_secret: Secret,
    /// Where the provider posts callbacks; empty: this API's own address.
    pub callback_url: String,
    /// The simulated provider's delay before it answers, ms.
    pub provider_delay_ms: u64,
    /// The share of payments the simulated provider fails, 0.0 to 1.0.
    pub provider_failure_rate: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconcileSettings {
    /// How often the worker reconciles the vouchers on sale, seconds.
    pub every_secs: u64,
    /// Age (from the order id's time) past which a reservation without an
    /// order is re-published, seconds.
    pub grace_secs: u64,
    /// How long after a sale's end it is still reconciled, seconds.
    pub recent_secs: u64,
}

/// `[social]`: the follow flow, its lists and its correction job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocialSettings {
    /// Topic of follow events (written through the outbox).
    pub follow_topic: String,
    /// Consumer group that applies follow events.
    pub follow_group: String,
    /// A list with at least this many entries has its first page kept in
    /// process memory.
    pub hot_list_min: u64,
    /// How long such a first page is served from memory, ms.
    pub hot_page_ttl_ms: u64,
    /// Most first pages kept in memory per process.
    pub hot_pages_max: u64,
    /// How long a user's computed recommendations are kept, seconds.
    pub recommendations_ttl_secs: u64,
    /// Most recommendations computed per user.
    pub recommendations_max: u32,
    /// How often the worker's count correction runs, seconds.
    pub count_check_secs: u64,
    /// Each run rechecks the users whose relations changed this recently, seconds.
    pub count_recent_secs: u64,
    /// ... and this many other users, in id order, so everyone is rechecked slowly.
    pub count_sweep_batch: u32,
    /// How long applied follow events are remembered against redelivery, days.
    pub dedup_retention_days: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSettings {
    /// Attempts at a batch on database errors before the messages go back to
    /// the broker for a later retry.
    pub db_attempts: u32,
    /// The worker's ops listener (`/metrics`, `/healthz`).
    pub metrics_addr: String,
    /// Most orders the worker stores in one transaction when consumed
    /// batches queue up (group commit).
    pub combine_max_rows: usize,
}

impl Settings {
    /// Defaults, then the settings file, then `CITYHUB__*` variables; validated.
    pub fn load() -> Result<Self, ConfigError> {
        Self::checked(layers::layered(DEFAULTS, None)?)
    }

    /// As [`Settings::load`], with `vars` in place of the process environment
    /// (used to check deployment files against what the binaries accept).
    pub fn from_vars(vars: HashMap<String, String>) -> Result<Self, ConfigError> {
        Self::checked(layers::layered(DEFAULTS, Some(vars))?)
    }

    /// The defaults alone.
    pub fn defaults() -> Self {
        layers::defaults(DEFAULTS).expect("the compiled-in defaults load")
    }

    /// These settings as `CITYHUB__*` variables, e.g. to start a binary with them.
    pub fn to_vars(&self) -> HashMap<String, String> {
        layers::to_vars(self)
    }

    fn checked(settings: Self) -> Result<Self, ConfigError> {
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what serde cannot: ranges and non-empty values.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.http.check()?;
        self.database.check()?;
        self.mq.check()?;
        self.ids.check()?;
        self.log.check()?;
        self.outbox.check()?;
        self.cache.check()?;
        if self.vouchers.cache_ttl_secs == 0 || self.shops.cache_ttl_secs == 0 || self.shops.index_check_secs == 0 {
            return invalid(
                "vouchers.cache_ttl_secs / shops.cache_ttl_secs / shops.index_check_secs",
                "must be positive",
            );
        }
        if self.shops.bloom_bits < 1024 || self.shops.bloom_hashes == 0 || self.shops.bloom_hashes > 16 {
            return invalid("shops.bloom_bits / shops.bloom_hashes", "at least 1024 bits and 1 to 16 hashes");
        }
        if self.shops.uv_retention_days == 0 || self.shops.uv_max_days == 0 {
            return invalid("shops.uv_retention_days / shops.uv_max_days", "must be positive");
        }
        if self.payments.callback_secret.expose().len() < 8 {
            return invalid("payments.callback_secret", "must be at least 8 characters");
        }
        if !(0.0..=1.0).contains(&self.payments.provider_failure_rate) {
            return invalid("payments.provider_failure_rate", "must be 0.0 to 1.0");
        }
        if self.orders.payment_timeout_secs == 0 || self.orders.close_every_secs == 0 || self.orders.close_batch == 0 {
            return invalid("orders.payment_timeout_secs / close_every_secs / close_batch", "must be positive");
        }
        if !self.limits.seckill.all_windows() || self.limits.seckill.counts_by(Subject::Phone) {
            return invalid("limits.seckill", "sliding windows by user, ip or global only");
        }
        let social = &self.social;
        if social.hot_page_ttl_ms == 0
            || social.hot_pages_max == 0
            || social.recommendations_ttl_secs == 0
            || social.recommendations_max == 0
            || social.count_check_secs == 0
            || social.dedup_retention_days == 0
        {
            return invalid("social.*", "TTLs, sizes, count_check_secs and dedup_retention_days must be positive");
        }
        if social.follow_topic.is_empty() || social.follow_group.is_empty() {
            return invalid("social.follow_topic / social.follow_group", "must not be empty");
        }
        if self.reconcile.every_secs == 0 {
            return invalid("reconcile.every_secs", "must be positive");
        }
        if self.auth.token_ttl_secs == 0 || self.auth.code_ttl_secs == 0 {
            return invalid("auth.*_ttl_secs", "must be positive");
        }
        if self.auth.strike_window_secs == 0 || self.auth.lockout_secs == 0 {
            return invalid("auth.strike_window_secs / auth.lockout_secs", "must be positive");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Settings::defaults().validate().unwrap();
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let s = Settings::defaults();
        assert!(!format!("{s:?}").contains("dev-payment-secret"));
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
        let mut s = Settings::defaults();
        s.mq.order_topic = "t1".into();
        s.ids.node_id = Some(9);
        let back = Settings::from_vars(s.to_vars()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&s).unwrap());
    }

    #[test]
    fn out_of_range_node_id_is_rejected() {
        let mut s = Settings::defaults();
        s.ids.node_id = Some(4096);
        assert!(matches!(s.validate(), Err(ConfigError::Invalid { field: "ids.node_id", .. })));
    }

    /// Every row of the README's configuration table names a real setting,
    /// and a default given there in backticks is the real one.
    #[test]
    fn the_readme_table_matches_the_defaults() {
        let readme = include_str!("../../README.md");
        let defaults = Settings::defaults().to_vars();
        let mut checked = 0;
        for line in readme.lines().filter(|l| l.starts_with("| `CITYHUB__")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells[1].trim_matches('`');
            let known = serde_json::to_value(Settings::defaults()).unwrap();
            let (section, key) = name.trim_start_matches("CITYHUB__").split_once("__").unwrap();
            assert!(
                known[section.to_lowercase()].get(key.to_lowercase()).is_some(),
                "the README names {name}, which is no setting"
            );
            if let Some(value) = cells[2].strip_prefix('`').and_then(|v| v.split('`').next()) {
                assert_eq!(defaults.get(name).map(String::as_str), Some(value), "README default of {name}");
                checked += 1;
            }
        }
        assert!(checked >= 10, "the README lists the defaults ({checked} rows)");
    }
}
