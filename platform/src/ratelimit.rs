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
//! [`Leases`] keeps the shared limits off the hot path. Per key, each
//! instance lets a tenth of a limit through on its own in every window (the
//! allowance: a client far below its limit never costs a Redis call), and
//! past it takes a tenth of the limit at a time from Redis (a lease: at most
//! [`LEASE_MOST`] requests, each counted in Redis at once) to spend in
//! memory. The price, bounded: per window-long interval a key passes at
//! most `max` plus, per instance, one allowance and one lease (credits
//! leased just before the interval may be spent in it); a bucket's burst
//! grows by as much. A lease and an allowance last one window (a bucket's
//! full refill).
//!
//! [`Local`] counts in process instead, per instance and bounded in memory:
//! for what must be refused without a Redis round trip (a client sending
//! requests that fail authentication).

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::kv::Kv;

/// The limiter functions (`window_lease`, `window_admit`, `bucket_lease`, `now_ms`), to
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

/// The most requests one lease takes.
pub const LEASE_MOST: u32 = 100;

impl Limit {
    fn same_kind(self, other: Limit) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// Requests one lease takes: a tenth of the limit, 1 to [`LEASE_MOST`].
    pub fn lease_size(self) -> u32 {
        self.allowance().max(1)
    }

    /// Requests an instance lets through on its own per window: a tenth of
    /// the limit, at most [`LEASE_MOST`] (none below 10: a small limit is
    /// counted exactly, in Redis).
    pub fn allowance(self) -> u32 {
        let most = match self {
            Limit::Window { max, .. } => max,
            Limit::Bucket { capacity, .. } => capacity,
        };
        (most / 10).min(LEASE_MOST)
    }

    /// How long a lease may be spent: the window, or a bucket's full refill.
    pub fn lease_life(self) -> Duration {
        match self {
            Limit::Window { window_ms, .. } => Duration::from_millis(window_ms),
            Limit::Bucket { capacity, per_second } => Duration::from_secs_f64(f64::from(capacity) / per_second),
        }
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
/// key per `window`. Keys are hashed (under a key random per instance) into
/// shards, each a plain map cleared when its window ends, holding at most
/// `keys` keys in all (a key arriving at a full shard is not counted that
/// window), so a client sending made-up keys cannot grow it without bound,
/// and a reader never pays for others' expiries: a check is one short lock
/// and one map lookup.
pub struct Local {
    max: u32,
    window: Duration,
    keys_per_shard: usize,
    ids: std::hash::RandomState,
    shards: [Mutex<Shard>; LOCAL_SHARDS],
}

const LOCAL_SHARDS: usize = 16;

struct Shard {
    started: Instant,
    counts: std::collections::HashMap<u64, u32>,
}

impl Local {
    pub fn new(max: u32, window: Duration, keys: u64) -> Self {
        let now = Instant::now();
        Self {
            max,
            window,
            keys_per_shard: (keys as usize).div_ceil(LOCAL_SHARDS),
            ids: Default::default(),
            shards: std::array::from_fn(|_| Mutex::new(Shard { started: now, counts: Default::default() })),
        }
    }

    /// The wait before `key` may hit again, if it is over its window now.
    pub fn refused(&self, key: impl std::hash::Hash) -> Option<Duration> {
        let id = std::hash::BuildHasher::hash_one(&self.ids, key);
        let shard = self.shard(id);
        let left = self.window.saturating_sub(shard.started.elapsed());
        (shard.counts.get(&id).copied().unwrap_or(0) >= self.max).then_some(left.max(Duration::from_millis(1)))
    }

    /// Counts one hit of `key`.
    pub fn hit(&self, key: impl std::hash::Hash) {
        let id = std::hash::BuildHasher::hash_one(&self.ids, key);
        let mut shard = self.shard(id);
        let room = shard.counts.len() < self.keys_per_shard;
        match shard.counts.get_mut(&id) {
            Some(count) => *count = count.saturating_add(1),
            None if room => {
                shard.counts.insert(id, 1);
            }
            None => {}
        }
    }

    /// `id`'s shard, its window renewed if it ended.
    fn shard(&self, id: u64) -> std::sync::MutexGuard<'_, Shard> {
        let mut shard = self.shards[(id % LOCAL_SHARDS as u64) as usize].lock().unwrap_or_else(|e| e.into_inner());
        if shard.started.elapsed() >= self.window {
            shard.started = Instant::now();
            shard.counts.clear();
        }
        shard
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

/// Counts one request against every `(key, limit)` at once, in Redis: it
/// passes only if all admit it. The limits must be of one kind (as [`Rules`]
/// ensures).
pub async fn check(kv: &Kv, counted: &[(String, Limit)]) -> redis::RedisResult<Decision> {
    let wanted: Vec<_> = counted.iter().map(|(key, limit)| (key.as_str(), *limit, 1)).collect();
    Ok(take(kv, &wanted).await?.map_or_else(Decision::from_wait_ms, |_| Decision::Pass))
}

/// One script call: takes `want` requests' worth from each limit, all or
/// none. `Ok(Ok(grants))` (each at least 1), or `Ok(Err(ms to wait))`.
async fn take(kv: &Kv, wanted: &[(&str, Limit, u32)]) -> redis::RedisResult<Result<Vec<u32>, i64>> {
    let Some((_, first, _)) = wanted.first() else {
        return Ok(Ok(Vec::new()));
    };
    let mut invocation = match first {
        Limit::Window { .. } => {
            let mut i = WINDOW.prepare_invoke();
            i.arg(format!("{:032x}", rand::random::<u128>()));
            i
        }
        Limit::Bucket { .. } => BUCKET.prepare_invoke(),
    };
    for &(key, limit, want) in wanted {
        invocation.key(key);
        match limit {
            Limit::Window { window_ms, max } => invocation.arg(window_ms).arg(max).arg(want),
            Limit::Bucket { capacity, per_second } => invocation.arg(capacity).arg(per_second).arg(want),
        };
    }
    let answer: Vec<i64> = invocation.invoke_async(&mut kv.conn()).await?;
    Ok(match answer.split_first() {
        Some((0, grants)) => Ok(grants.iter().map(|&g| g.max(1) as u32).collect()),
        Some((&wait, _)) => Err(wait),
        None => Err(1),
    })
}

/// The leases this instance holds, one per limit key, at most `keys` of
/// them (the least used go first; a lease dropped early only wastes its
/// credits), so clients sending made-up keys cannot grow it without bound.
pub struct Leases {
    held: moka::sync::Cache<u64, Arc<Mutex<Lease>>>,
    /// Keys' memory ids: random per instance, so no client can aim its key
    /// at another's lease.
    ids: std::hash::RandomState,
}

#[derive(Debug, Default)]
struct Lease {
    /// Credits leased from Redis, spendable until `until`.
    left: u32,
    until: Option<Instant>,
    /// The allowance left in the window ending at `window_end`.
    free: u32,
    window_end: Option<Instant>,
}

/// Where a request's credit came from, to give it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credit {
    Free,
    Leased,
}

impl Lease {
    /// One request's credit from memory: the window's allowance first,
    /// then the lease; `None` when both are spent.
    fn take_one(&mut self, limit: Limit, now: Instant) -> Option<Credit> {
        if self.window_end.is_none_or(|end| now >= end) {
            self.window_end = Some(now + limit.lease_life());
            self.free = limit.allowance();
        }
        if self.free > 0 {
            self.free -= 1;
            return Some(Credit::Free);
        }
        let live = self.left > 0 && self.until.is_some_and(|until| now < until);
        live.then(|| {
            self.left -= 1;
            Credit::Leased
        })
    }

    fn give_back(&mut self, credit: Credit) {
        match credit {
            Credit::Free => self.free += 1,
            Credit::Leased => self.left += 1,
        }
    }
}

impl Leases {
    pub fn new(keys: u64) -> Self {
        Self { held: moka::sync::Cache::builder().max_capacity(keys).build(), ids: Default::default() }
    }

    /// The memory id of the limit key made of `parts` (the same parts as
    /// its Redis key), so that a request within its credit builds no key.
    pub fn id(&self, parts: impl std::hash::Hash) -> u64 {
        std::hash::BuildHasher::hash_one(&self.ids, parts)
    }

    /// Counts one request against every `(id, limit)` (ids from
    /// [`id`](Self::id)), as [`check`] does, from this instance's allowance
    /// and leases where it holds credit, and takes a new lease in Redis (one
    /// script call for all) for the rest, under the keys `key_of(i)` makes
    /// for them. A refused request gives back what it took from memory.
    pub async fn admit(
        &self,
        kv: &Kv,
        counted: &[(u64, Limit)],
        key_of: impl Fn(usize) -> String,
    ) -> redis::RedisResult<Decision> {
        let now = Instant::now();
        let mut spent = Vec::new();
        let mut short = Vec::new();
        for (i, &(id, limit)) in counted.iter().enumerate() {
            let lease = self.held.get_with(id, Default::default);
            let took = lease.lock().unwrap_or_else(|e| e.into_inner()).take_one(limit, now);
            match took {
                Some(credit) => spent.push((lease, credit)),
                None => short.push((key_of(i), limit, lease)),
            }
        }
        if short.is_empty() {
            return Ok(Decision::Pass);
        }
        let wanted: Vec<_> = short.iter().map(|(key, limit, _)| (key.as_str(), *limit, limit.lease_size())).collect();
        let grants = match take(kv, &wanted).await {
            Ok(Ok(grants)) => grants,
            other => {
                for (lease, credit) in spent {
                    lease.lock().unwrap_or_else(|e| e.into_inner()).give_back(credit);
                }
                return other.map(|refused| Decision::from_wait_ms(refused.err().unwrap_or(1)));
            }
        };
        for ((_, limit, lease), granted) in short.iter().zip(grants) {
            let mut lease = lease.lock().unwrap_or_else(|e| e.into_inner());
            // Credits of a lease taken meanwhile keep their own, earlier end.
            if lease.until.is_some_and(|until| now < until) {
                lease.left += granted - 1;
            } else {
                (lease.left, lease.until) = (granted - 1, Some(now + limit.lease_life()));
            }
        }
        Ok(Decision::Pass)
    }
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
        let wait = local.refused("a").expect("refused past its most");
        assert!(wait <= Duration::from_millis(200), "{wait:?}");
        assert_eq!(local.refused("b"), None, "keys count apart");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(local.refused("a"), None, "the window ended");
    }

    #[test]
    fn a_local_window_holds_at_most_its_keys() {
        let local = Local::new(1, Duration::from_secs(60), 32);
        for i in 0..10_000u32 {
            local.hit(i);
        }
        let held: usize = local.shards.iter().map(|s| s.lock().unwrap().counts.len()).sum();
        assert!(held <= 32, "{held} keys held");
        assert_eq!((0..10_000u32).filter(|i| local.refused(i).is_some()).count(), held);
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
