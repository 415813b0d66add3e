//! Rate limits kept in Redis, so every instance counts against one budget,
//! each decided atomically on Redis's clock by one Lua script:
//!
//! - [`Limit::Window`], a sliding window on a sorted set: never more than
//!   `max` requests in any window-long interval, so requests saved up
//!   cannot be fired in one instant (scalpers: seckill, login).
//! - [`Limit::Bucket`], a token bucket: bursts up to `capacity`, then
//!   `per_second` on average (flows where bursts are fine: follows, payments).
//!
//! A request counts against several limits at once (one per [`Subject`]:
//! its user, its client IP, ...) and passes only if every one admits it; a
//! refused request uses up nothing. The rules themselves are written once,
//! in `lua/ratelimit.lua`, which is prepended to every script that limits
//! ([`LUA`]; the seckill script uses it to limit in its own round trip).
//!
//! Which routes are limited, and by what, is configuration ([`Rules`], one
//! line per route) read by the API; this module only parses and counts.
//!
//! [`Local`] counts in process instead, per instance and bounded in memory:
//! for what must be refused without a Redis round trip (a client sending
//! requests that fail authentication).

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::kv::Kv;

/// The limiter functions (`window_admit`, `bucket_admit`, `now_ms`), to
/// prepend to a script that limits.
pub const LUA: &str = include_str!("../../lua/ratelimit.lua");

static WINDOW: LazyLock<Script> =
    LazyLock::new(|| Script::new(&format!("{LUA}\n{}", include_str!("../../lua/ratelimit_window.lua"))));
static BUCKET: LazyLock<Script> =
    LazyLock::new(|| Script::new(&format!("{LUA}\n{}", include_str!("../../lua/ratelimit_bucket.lua"))));

/// The limiter scripts, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&*WINDOW, &*BUCKET]
}

/// One limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most `max` requests in any `window_ms`.
    Window { window_ms: u64, max: u32 },
    /// Bursts up to `capacity`, refilled at `per_second`.
    Bucket { capacity: u32, per_second: f64 },
}

impl Limit {
    fn same_kind(self, other: Limit) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// What part of a request a limit counts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// Every request of the route together.
    Global,
    /// The signed-in user (requests without a valid session are not counted).
    User,
    /// The client's IP (see the API's client IP rule).
    Ip,
}

impl Subject {
    pub const ALL: [Subject; 3] = [Subject::Global, Subject::User, Subject::Ip];

    pub fn as_str(self) -> &'static str {
        match self {
            Subject::Global => "global",
            Subject::User => "user",
            Subject::Ip => "ip",
        }
    }
}

/// One limit on one subject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub by: Subject,
    pub limit: Limit,
}

/// A route's limits, written in config as one line:
/// `"<subject>: <max> per <duration>; <subject>: bucket <capacity> at <rate>/s"`,
/// e.g. `"user: 5 per 1s; ip: 100 per 1s"` or `"user: bucket 100 at 1/s"`.
/// Subjects are `global`, `user` and `ip`; durations end in `ms`,
/// `s` or `m`. Every rule of a route is of one kind (window or bucket), so a
/// request is decided in one script call. Empty: no limit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Rules(pub Vec<Rule>);

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Rule> {
        self.0.iter()
    }

    /// True when a rule counts by `subject`.
    pub fn counts_by(&self, subject: Subject) -> bool {
        self.0.iter().any(|r| r.by == subject)
    }

    /// True when every rule is a sliding window.
    pub fn all_windows(&self) -> bool {
        self.0.iter().all(|r| matches!(r.limit, Limit::Window { .. }))
    }
}

impl FromStr for Rules {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let rules: Vec<Rule> =
            s.split(';').map(str::trim).filter(|r| !r.is_empty()).map(parse_rule).collect::<Result<_, _>>()?;
        if rules.windows(2).any(|w| !w[0].limit.same_kind(w[1].limit)) {
            return Err(format!("{s:?}: one route's limits must all be windows or all buckets"));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = rules.iter().find(|r| !seen.insert(r.by)) {
            return Err(format!("{s:?}: {} is limited twice", twice.by.as_str()));
        }
        Ok(Self(rules))
    }
}

impl TryFrom<String> for Rules {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Rules> for String {
    fn from(rules: Rules) -> String {
        rules.to_string()
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, rule) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            match rule.limit {
                Limit::Window { window_ms, max } if window_ms % 1000 == 0 => {
                    write!(f, "{sep}{}: {max} per {}s", rule.by.as_str(), window_ms / 1000)?
                }
                Limit::Window { window_ms, max } => write!(f, "{sep}{}: {max} per {window_ms}ms", rule.by.as_str())?,
                Limit::Bucket { capacity, per_second } => {
                    write!(f, "{sep}{}: bucket {capacity} at {per_second}/s", rule.by.as_str())?
                }
            }
        }
        Ok(())
    }
}

fn parse_rule(rule: &str) -> Result<Rule, String> {
    let bad = |why: &str| format!("limit {rule:?}: {why}");
    let (subject, limit) = rule.split_once(':').ok_or_else(|| bad("expected `<subject>: <limit>`"))?;
    let by = Subject::ALL
        .into_iter()
        .find(|s| s.as_str() == subject.trim())
        .ok_or_else(|| bad("the subject is one of global, user, ip"))?;
    let words: Vec<&str> = limit.split_whitespace().collect();
    let limit = match words.as_slice() {
        [max, "per", window] => {
            let max: u32 = max.parse().map_err(|_| bad("the most requests is a whole number"))?;
            let window_ms = parse_ms(window).ok_or_else(|| bad("the window is like 500ms, 1s or 1m"))?;
            Limit::Window { window_ms, max }
        }
        ["bucket", capacity, "at", rate] => {
            let capacity: u32 = capacity.parse().map_err(|_| bad("the capacity is a whole number"))?;
            let per_second: f64 = rate
                .strip_suffix("/s")
                .and_then(|r| r.parse().ok())
                .filter(|r: &f64| r.is_finite())
                .ok_or_else(|| bad("the rate is like 1/s or 0.5/s"))?;
            Limit::Bucket { capacity, per_second }
        }
        _ => return Err(bad("expected `<max> per <duration>` or `bucket <capacity> at <rate>/s`")),
    };
    let positive = match limit {
        Limit::Window { window_ms, max } => window_ms > 0 && max > 0,
        Limit::Bucket { capacity, per_second } => capacity > 0 && per_second > 0.0,
    };
    if !positive {
        return Err(bad("every number must be positive"));
    }
    Ok(Rule { by, limit })
}

fn parse_ms(s: &str) -> Option<u64> {
    let (n, unit) = s.find(|c: char| !c.is_ascii_digit()).map(|i| s.split_at(i))?;
    let n: u64 = n.parse().ok()?;
    match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        _ => None,
    }
}

/// A fixed window per key, counted in this process: at most `max` hits a
/// key per `window`, keeping at most `keys` keys (the least used go first),
/// so a client sending made-up keys cannot grow it without bound.
pub struct Local {
    max: u32,
    window: Duration,
    counts: moka::sync::Cache<String, std::sync::Arc<std::sync::atomic::AtomicU32>>,
}

impl Local {
    pub fn new(max: u32, window: Duration, keys: u64) -> Self {
        let counts = moka::sync::Cache::builder().max_capacity(keys).time_to_live(window).build();
        Self { max, window, counts }
    }

    /// The wait before `key` may hit again, if it is over its window now.
    pub fn refused(&self, key: &str) -> Option<Duration> {
        let hits = self.counts.get(key)?.load(std::sync::atomic::Ordering::Relaxed);
        (hits >= self.max).then_some(self.window)
    }

    /// Counts one hit of `key`.
    pub fn hit(&self, key: &str) {
        let count = self.counts.get_with_by_ref(key, Default::default);
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What one check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Pass,
    /// Refused; the earliest a retry can pass.
    Refuse {
        retry_after: Duration,
    },
}

impl Decision {
    /// The decision a limiter script's answer means: 0 passes, else the ms to wait.
    pub fn from_wait_ms(wait_ms: i64) -> Self {
        match wait_ms {
            0 => Decision::Pass,
            ms => Decision::Refuse { retry_after: Duration::from_millis(ms.max(1) as u64) },
        }
    }
}

/// Counts one request against every `(key, limit)` at once: it passes only
/// if all admit it. The limits must be of one kind (as [`Rules`] ensures).
pub async fn check(kv: &Kv, counted: &[(String, Limit)]) -> redis::RedisResult<Decision> {
    let Some((_, first)) = counted.first() else {
        return Ok(Decision::Pass);
    };
    let mut invocation = match first {
        Limit::Window { .. } => {
            let mut i = WINDOW.prepare_invoke();
            i.arg(format!("{:032x}", rand::random::<u128>()));
            i
        }
        Limit::Bucket { .. } => BUCKET.prepare_invoke(),
    };
    for (key, limit) in counted {
        invocation.key(key);
        match *limit {
            Limit::Window { window_ms, max } => invocation.arg(window_ms).arg(max),
            Limit::Bucket { capacity, per_second } => invocation.arg(capacity).arg(per_second),
        };
    }
    let wait_ms: i64 = invocation.invoke_async(&mut kv.conn()).await?;
    Ok(Decision::from_wait_ms(wait_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_print_back_the_same() {
        for line in
            ["user: 5 per 1s; ip: 100 per 1s", "user: bucket 100 at 1/s", "ip: 1 per 60s", "global: 3 per 250ms", ""]
        {
            let rules: Rules = line.parse().unwrap();
            assert_eq!(rules.to_string(), line);
        }
        let rules: Rules = "ip: 20 per 1m".parse().unwrap();
        assert_eq!(rules.0, [Rule { by: Subject::Ip, limit: Limit::Window { window_ms: 60_000, max: 20 } }]);
    }

    #[test]
    fn a_local_window_refuses_past_its_most_and_forgets_after_it() {
        let local = Local::new(2, Duration::from_millis(200), 10);
        local.hit("a");
        assert_eq!(local.refused("a"), None);
        local.hit("a");
        assert_eq!(local.refused("a"), Some(Duration::from_millis(200)));
        assert_eq!(local.refused("b"), None, "keys count apart");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(local.refused("a"), None, "the window ended");
    }

    #[test]
    fn bad_rules_are_refused() {
        for bad in [
            "user 5 per 1s",
            "admin: 5 per 1s",
            "phone: 1 per 60s",
            "user: 0 per 1s",
            "user: 5 per 0s",
            "user: 5 per 1h",
            "user: 5 every 1s",
            "user: bucket 0 at 1/s",
            "user: bucket 10 at 0/s",
            "user: bucket 10 at 1",
            "user: 5 per 1s; ip: bucket 10 at 1/s",
            "user: 5 per 1s; user: 10 per 1m",
        ] {
            assert!(bad.parse::<Rules>().is_err(), "{bad:?} was taken");
        }
    }
}
