//! Rate limits kept in Redis, so every instance counts against one budget,
//! each decided atomically on Redis's clock by one Lua script:
//!
//! - [`Limit::Window`], a sliding window on a sorted set: never more than
//!   `limit` requests in any window-long interval, so requests saved up
//!   cannot be fired in one instant (scalpers: seckill, login).
//! - [`Limit::Bucket`], a token bucket: bursts up to `capacity`, then
//!   `per_second` on average (flows where bursts are fine: follows, payments).
//!
//! Which limit a route gets, and by which subject (user, client IP, ...), is
//! configuration read by the API layer; this module only counts.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use serde::{Deserialize, Serialize};

use crate::kv::Kv;

static WINDOW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../lua/ratelimit_window.lua")));
static BUCKET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../lua/ratelimit_bucket.lua")));

/// The limiter scripts, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&*WINDOW, &*BUCKET]
}

/// One limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Limit {
    /// At most `limit` requests in any `window_ms`.
    Window { window_ms: u64, limit: u32 },
    /// Bursts up to `capacity`, refilled at `per_second`.
    Bucket { capacity: u32, per_second: f64 },
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

/// Counts one request of `subject` against `limit` under `key`.
pub async fn check(kv: &Kv, key: &str, limit: Limit) -> redis::RedisResult<Decision> {
    let (passed, wait_ms): (i64, i64) = match limit {
        Limit::Window { window_ms, limit } => {
            let member = format!("{:032x}", rand::random::<u128>());
            WINDOW.key(key).arg(window_ms).arg(limit).arg(member).invoke_async(&mut kv.conn()).await?
        }
        Limit::Bucket { capacity, per_second } => {
            BUCKET.key(key).arg(capacity).arg(per_second).invoke_async(&mut kv.conn()).await?
        }
    };
    Ok(match passed {
        1 => Decision::Pass,
        _ => Decision::Refuse { retry_after: Duration::from_millis(wait_ms.max(1) as u64) },
    })
}
