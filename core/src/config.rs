//! The whole configuration of the binaries: the plumbing's sections (from
//! `cityhub_platform::config`) and the business rules' knobs. The defaults are
//! written once, in `config/cityhub.example.toml`, compiled in as the base
//! layer; then the settings file, then `CITYHUB__<SECTION>__<KEY>` variables
//! (see `cityhub_platform::config`). [`Settings::validate`] runs at start-up.

use std::collections::HashMap;
use std::time::Duration;

use cityhub_platform::config::{self as layers, millis, positive, secs};
pub use cityhub_platform::config::{
    CacheSettings, ConfigError, DatabaseSettings, HttpSettings, IdSettings, LogSettings, MqSettings, OutboxSettings,
    RedisSettings, Secret,
};
use cityhub_platform::ratelimit::Rules;
use serde::{Deserialize, Serialize};
use validator::{Validate, ValidationError};

/// Every default, in one place.
pub const DEFAULTS: &str = include_str!("../../config/cityhub.example.toml");

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[validate(nested)]
    pub http: HttpSettings,
    #[validate(nested)]
    pub database: DatabaseSettings,
    #[validate(nested)]
    pub redis: RedisSettings,
    #[validate(nested)]
    pub mq: MqSettings,
    #[validate(nested)]
    pub auth: AuthSettings,
    #[validate(nested)]
    pub ids: IdSettings,
    #[validate(nested)]
    pub seckill: SeckillSettings,
    #[validate(nested)]
    pub vouchers: VoucherSettings,
    #[validate(nested)]
    pub shops: ShopSettings,
    #[validate(nested)]
    pub cache: CacheSettings,
    #[validate(nested)]
    pub orders: OrderSettings,
    #[validate(nested)]
    pub payments: PaymentSettings,
    #[validate(nested)]
    pub limits: LimitSettings,
    #[validate(nested)]
    pub reconcile: ReconcileSettings,
    #[validate(nested)]
    pub social: SocialSettings,
    #[validate(nested)]
    pub notes: NoteSettings,
    #[validate(nested)]
    pub worker: WorkerSettings,
    #[validate(nested)]
    pub outbox: OutboxSettings,
    #[validate(nested)]
    pub log: LogSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Lifetime of a login token, renewed on use, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub token_ttl_secs: Duration,
    /// Lifetime of a login code, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub code_ttl_secs: Duration,
    /// How long a session, once read from Redis, is served from memory, ms.
    /// A token deleted in Redis stops working within this time.
    #[serde(with = "millis")]
    pub session_cache_ms: Duration,
    /// Write each login code to the log at INFO (development only: there is
    /// no SMS gateway); `scripts/run` turns it on.
    pub log_codes: bool,
    /// Least time between two SMS of a phone's code, seconds; a request in
    /// between gets a challenge for the code already sent.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub code_resend_secs: Duration,
    /// Codes sent to one phone per day window (`day_secs`); the day's last
    /// code stays valid until the window renews.
    #[validate(range(min = 1))]
    pub codes_per_phone_day: u32,
    /// Guesses one challenge (one code request) allows.
    #[validate(range(min = 1))]
    pub code_tries: u32,
    /// Wrong guesses at one phone per day window, from all clients together,
    /// before each further guess needs a proof of work.
    pub wrong_codes_per_phone_day: u32,
    /// Leading zero bits of a proof of work (about 2^bits hashes a guess).
    #[validate(range(max = 32))]
    pub proof_bits: u32,
    /// The window of the per-phone day counts, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub day_secs: Duration,
    /// Bits of the Bloom filter of user ids (made-up ids cost no MySQL).
    #[validate(range(min = 1024))]
    pub user_bloom_bits: u64,
    /// Hash functions of that filter.
    #[validate(range(min = 1, max = 16))]
    pub user_bloom_hashes: u32,
    /// How often the worker checks that Redis holds the whole filter (and
    /// builds it from MySQL if not), seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub user_bloom_check_secs: Duration,
    /// Code requests one client may make across phones within the window.
    pub code_requests_per_client: u32,
    /// Wrong guesses one client may make across phones within the window.
    pub wrong_codes_per_client: u32,
    /// How long strikes count, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub strike_window_secs: Duration,
    /// How long a client over a limit is locked out of login, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub lockout_secs: Duration,
}

/// `[limits]`: each guarded route's rate limits, one line a route (the
/// syntax is [`Rules`]'). docs/GUARANTEES.md's "Rate limits" lists them.
#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Off: no route is limited (a load test from one machine).
    pub enabled: bool,
    /// `POST /vouchers/{id}/seckill`, per voucher; sliding windows by
    /// `user`, `ip` or `global`, counted inside the seckill script.
    #[validate(custom(function = "seckill_rules"))]
    pub seckill: Rules,
    /// `POST /auth/code`.
    pub login_code: Rules,
    /// `POST /auth/login`.
    pub login: Rules,
    /// `POST /orders/{id}/pay`.
    pub payment: Rules,
    /// `PUT`/`DELETE /users/{id}/follow` and `/users/{id}/block`, one budget.
    pub follow: Rules,
    /// The public reads (`GET /shops`, `/shops/{id}`, `/shops/nearby`,
    /// `/shop-types`, `/vouchers/{id}`, `/shops/{id}/vouchers`), one budget:
    /// against crawlers.
    pub reads: Rules,
    /// `POST /vouchers/{id}/claim`, across coupons: against a shopper
    /// sweeping coupons up.
    pub claims: Rules,
    /// `GET /healthz`, `/readyz`.
    pub probes: Rules,
    /// Every `/admin/` route.
    pub admin: Rules,
    /// A shopper's own reads (`/users/me`, orders, vouchers, sign-ins) and logout.
    pub account: Rules,
    /// The social reads (lists, counts, matches, status, blocks, recommendations).
    pub social: Rules,
    /// `POST /notes`.
    pub notes: Rules,
    /// `PUT /notes/{id}/like`.
    pub likes: Rules,
    /// `GET /feed`.
    pub feed: Rules,
    /// `POST /payments/callback` (the provider's calls; a forged one is
    /// refused by its signature, in process).
    pub callback: Rules,
    /// `POST /users/me/sign`.
    pub signin: Rules,
    /// Requests with a bearer token that authenticates no one, per client
    /// per second, counted in each instance's memory (no Redis, no MySQL);
    /// past it, the client's authenticated requests get 429 until the second
    /// ends. 0: not limited.
    pub unauthorized_per_sec: u32,
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

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct SeckillSettings {
    /// Once Redis answers "sold out" for a voucher, this instance answers
    /// "sold out" from memory for this long (ms) without asking Redis. Stock
    /// released meanwhile is sold after it lapses. 0 disables.
    #[serde(with = "millis")]
    pub sold_out_cache_ms: Duration,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct VoucherSettings {
    /// Logical TTL of a voucher's details in the Redis cache, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub cache_ttl_secs: Duration,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ShopSettings {
    /// Logical TTL of a shop in the Redis cache, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub cache_ttl_secs: Duration,
    /// Bits of the Bloom filter of existing shop ids.
    #[validate(range(min = 1024))]
    pub bloom_bits: u64,
    /// Hash functions of the Bloom filter.
    #[validate(range(min = 1, max = 16))]
    pub bloom_hashes: u32,
    /// How often the worker checks that the Bloom filter and the GEO
    /// indexes exist (and rebuilds them from MySQL), seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub index_check_secs: Duration,
    /// Days a daily unique-visitor HyperLogLog is kept.
    #[validate(range(min = 1))]
    pub uv_retention_days: u32,
    /// Most days one unique-visitor query spans.
    #[validate(range(min = 1))]
    pub uv_max_days: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct OrderSettings {
    /// How long an accepted order stays visible as `queued` before the worker
    /// stores it, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub pending_ttl_secs: Duration,
    /// An unpaid order is closed this long after it was accepted, seconds;
    /// its owner reads it as closed from then on.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub payment_timeout_secs: Duration,
    /// When the worker's close job runs: a cron expression with seconds
    /// (`sec min hour day-of-month month day-of-week`), in UTC.
    #[validate(custom(function = "cron"))]
    pub close_cron: String,
    /// Most orders the close job reads and closes per batch.
    #[validate(range(min = 1))]
    pub close_batch: u32,
    /// Topic of stock-release events (a closed order gives its unit back).
    pub release_topic: String,
    /// Consumer group that applies stock-release events to Redis.
    pub release_group: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct PaymentSettings {
    /// Secret of the provider's signed callbacks (HMAC-SHA256 of the body).
    /// No default: the API and the worker refuse to start without one of
    /// at least 32 characters.
    #[validate(custom(function = "callback_secret"))]
    pub callback_secret: Secret,
    /// A signed callback older than this (by its `ts`) is refused, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub callback_max_age_secs: Duration,
    /// How often the worker's refund job retries unfinished refunds, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub refund_retry_secs: Duration,
    /// Where the provider posts callbacks; empty: this API's own address.
    pub callback_url: String,
    /// The simulated provider's delay before it answers, ms.
    #[serde(with = "millis")]
    pub provider_delay_ms: Duration,
    /// The share of payments the simulated provider fails, 0.0 to 1.0.
    #[validate(range(min = 0.0, max = 1.0))]
    pub provider_failure_rate: f64,
    /// The simulated provider refuses the first this-many refund calls of
    /// each transaction (a flaky provider, for tests and drills).
    pub provider_refund_failures: u32,
}

/// Shortest callback secret the API and the worker accept.
pub const MIN_CALLBACK_SECRET: usize = 32;

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ReconcileSettings {
    /// How often the worker reconciles the vouchers on sale, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub every_secs: Duration,
    /// Age (from the order id's time) past which a reservation without an
    /// order is re-published, seconds.
    #[serde(with = "secs")]
    pub grace_secs: Duration,
    /// How long after a sale's end it is still reconciled, seconds.
    #[serde(with = "secs")]
    pub recent_secs: Duration,
    /// A re-published order is not sent again for this long (its copy could
    /// still be on its way to MySQL), seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub republish_quiet_secs: Duration,
    /// Most orders one pass re-publishes per voucher; the rest wait for the
    /// next pass.
    #[validate(range(min = 1))]
    pub republish_max: u32,
}

/// `[notes]`: notes, their likes, the hot list and the follow feed.
#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct NoteSettings {
    /// Logical TTL of a note, and of a shop's latest notes, in the Redis
    /// cache, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub cache_ttl_secs: Duration,
    /// Logical TTL of a page of the hot list (by likes), seconds: its order
    /// and like counts are this old at most.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub hot_ttl_secs: Duration,
    /// Topic of "note published" events (written through the outbox).
    #[validate(length(min = 1))]
    pub feed_topic: String,
    /// Consumer group that pushes published notes into inboxes.
    #[validate(length(min = 1))]
    pub feed_group: String,
    /// Most note ids an inbox (and an author's own list) keeps; older ones
    /// are trimmed as new ones arrive.
    #[validate(range(min = 10))]
    pub inbox_max: u32,
    /// An author with more followers than this is not pushed: their
    /// followers pull the author's notes when they read their feed.
    pub pull_above_followers: u64,
}

/// `[social]`: the follow flow, its lists and its correction job.
#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct SocialSettings {
    /// Topic of follow events (written through the outbox).
    #[validate(length(min = 1))]
    pub follow_topic: String,
    /// Consumer group that applies follow events.
    #[validate(length(min = 1))]
    pub follow_group: String,
    /// A list with at least this many entries has its first page kept in
    /// process memory.
    pub hot_list_min: u64,
    /// How long such a first page is served from memory, ms.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub hot_page_ttl_ms: Duration,
    /// Most first pages kept in memory per process.
    #[validate(range(min = 1))]
    pub hot_pages_max: u64,
    /// A follow list in Redis nobody read for this long expires; its next
    /// reader rebuilds it from MySQL, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub list_ttl_secs: Duration,
    /// The count correction also compares up to this many members of each
    /// checked user's two lists with MySQL, and drops a list that drifted.
    pub list_sample: u32,
    /// How long a user's computed recommendations are kept, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub recommendations_ttl_secs: Duration,
    /// Most recommendations computed per user.
    #[validate(range(min = 1))]
    pub recommendations_max: u32,
    /// How often the worker's count correction runs, seconds.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub count_check_secs: Duration,
    /// Each run rechecks the users whose relations changed this recently, seconds.
    #[serde(with = "secs")]
    pub count_recent_secs: Duration,
    /// ... and this many other users, in id order, so everyone is rechecked slowly.
    pub count_sweep_batch: u32,
    /// How long applied follow events are remembered against redelivery, days.
    #[validate(range(min = 1))]
    pub dedup_retention_days: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, Validate)]
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
    /// Transactions the worker's order writer runs at once.
    #[validate(range(min = 1, max = 16))]
    pub writers: usize,
    /// How long the worker waits for its jobs at shutdown before aborting them.
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub shutdown_deadline_secs: Duration,
    /// How long a restarted job waits before its first new run, doubling
    /// up to `job_restart_max_secs` while it keeps ending.
    #[serde(with = "millis")]
    #[validate(custom(function = "positive"))]
    pub job_restart_first_ms: Duration,
    #[serde(with = "secs")]
    #[validate(custom(function = "positive"))]
    pub job_restart_max_secs: Duration,
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

    /// The callback secret, for the binaries that take payments (the API and
    /// the worker): there is no default, so one must have been set.
    pub fn callback_secret(&self) -> Result<&[u8], ConfigError> {
        let secret = self.payments.callback_secret.expose();
        if secret.is_empty() {
            return Err(ConfigError::Invalid {
                field: "payments.callback_secret".into(),
                reason: "has no default: set CITYHUB__PAYMENTS__CALLBACK_SECRET to 32 or more random characters".into(),
            });
        }
        Ok(secret.as_bytes())
    }

    fn checked(settings: Self) -> Result<Self, ConfigError> {
        settings.validate()?;
        Ok(settings)
    }

    /// Checks the ranges declared on each field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        layers::validated(self)
    }
}

fn callback_secret(secret: &Secret) -> Result<(), ValidationError> {
    let secret = secret.expose();
    if !secret.is_empty() && secret.len() < MIN_CALLBACK_SECRET {
        return Err(layers::failure("must be at least 32 characters"));
    }
    Ok(())
}

fn cron(expr: &str) -> Result<(), ValidationError> {
    cityhub_platform::jobs::check_cron(expr)
        .map_err(|_| layers::failure("must be a cron expression with seconds, e.g. \"*/10 * * * * *\""))
}

fn seckill_rules(rules: &Rules) -> Result<(), ValidationError> {
    if !rules.all_windows() {
        return Err(layers::failure("sliding windows by user, ip or global only"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Settings::defaults().validate().unwrap();
    }

    /// Prometheus (9090), the Pushgateway (9091), Alertmanager (9093) and the
    /// exporters' registry (9100 to 9999) keep their ports on a host that
    /// also runs them.
    #[test]
    fn the_default_ops_ports_stay_clear_of_prometheus_and_its_exporters() {
        let s = Settings::defaults();
        for addr in [&s.http.metrics_addr, &s.worker.metrics_addr, &s.http.addr] {
            let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
            assert!(!(9090..=9999).contains(&port), "{addr} is in Prometheus's range");
        }
    }

    #[test]
    fn the_close_schedule_is_a_cron_expression() {
        let mut s = Settings::defaults();
        assert_eq!(s.orders.close_cron, "*/10 * * * * *");
        s.orders.close_cron = "every ten seconds".into();
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains("close_cron"), "{err}");
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let mut s = Settings::defaults();
        s.payments.callback_secret = Secret::new("a-callback-secret-of-forty-characters-xx");
        assert!(!format!("{s:?}").contains("a-callback-secret"));
    }

    #[test]
    fn the_callback_secret_has_no_default_and_no_short_value() {
        let mut s = Settings::defaults();
        let field = |r: Result<_, ConfigError>| match r {
            Err(ConfigError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(s.callback_secret().map(|_| ())), "payments.callback_secret");
        s.payments.callback_secret = Secret::new("dev-payment-secret");
        assert_eq!(field(s.validate()), "payments.callback_secret");
        s.payments.callback_secret = Secret::new("x".repeat(MIN_CALLBACK_SECRET));
        s.validate().unwrap();
        assert_eq!(s.callback_secret().unwrap().len(), MIN_CALLBACK_SECRET);
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
        assert!(matches!(s.validate(), Err(ConfigError::Invalid { field, .. }) if field == "ids.node_id"));
    }

    /// Every row of the configuration table (docs/TUNING.md) names a real setting,
    /// and a default given there in backticks is the real one.
    #[test]
    fn the_configuration_table_matches_the_defaults() {
        let readme = include_str!("../../docs/TUNING.md");
        let defaults = Settings::defaults().to_vars();
        let mut checked = 0;
        for line in readme.lines().filter(|l| l.starts_with("| `CITYHUB__")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells[1].trim_matches('`');
            let known = serde_json::to_value(Settings::defaults()).unwrap();
            let (section, key) = name.trim_start_matches("CITYHUB__").split_once("__").unwrap();
            assert!(
                known[section.to_lowercase()].get(key.to_lowercase()).is_some(),
                "docs/TUNING.md names {name}, which is no setting"
            );
            if let Some(value) = cells[2].strip_prefix('`').and_then(|v| v.split('`').next()) {
                assert_eq!(defaults.get(name).map(String::as_str), Some(value), "docs/TUNING.md default of {name}");
                checked += 1;
            }
        }
        assert!(checked >= 10, "docs/TUNING.md lists the defaults ({checked} rows)");
    }
}
