//! Typed wrappers around the seckill Lua scripts in `lua/`, one function per
//! script. Each script is compiled in with `include_str!` and loaded once at
//! connect time ([`all`]); calls go out as EVALSHA.
//!
//! A buyer's entry in a voucher's buyers hash is one of three states,
//! encoded here and in the scripts only: reserved `<order id>`, confirmed
//! `<order id>:c`, released `<order id>:r` (a tombstone that stays as long as
//! the hash, so it outlives any message the broker may still deliver).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::Outcome;
use crate::kv::{CityKeys, Kv};

static RESERVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!("{}\n{}", cityhub_platform::ratelimit::LUA, include_str!("../../../lua/seckill.lua")))
});
static RELEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_release.lua")));
static CONFIRM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_confirm.lua")));
static RESTORE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_restore.lua")));
static GIVE_BACK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/stock_release.lua")));
static RECOUNT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_recount.lua")));

/// Every seckill script, to load at connect time.
pub fn all() -> [&'static Script; 6] {
    [&*RESERVE, &*RELEASE, &*CONFIRM, &*RESTORE, &*GIVE_BACK, &*RECOUNT]
}

/// The SHA1 of `lua/seckill.lua`, for `redis-benchmark EVALSHA` comparisons
/// and for tests that must recognise the reserve call on the wire.
pub fn reserve_sha() -> &'static str {
    RESERVE.get_hash()
}

fn unexpected(script: &'static str, code: i64) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Parse, script, format!("unexpected result {code}")))
}

/// A sliding window `seckill.lua` counts the attempt in: key, window (ms),
/// most attempts in it.
pub type Window = (String, u64, u32);

/// Runs `seckill.lua`: the shopper's `windows` (the route's limits), then
/// the sale window, one-per-user and stock checks, then decrement and record
/// `user -> order`, atomically. Answers the outcome the script decided
/// (`Accepted` to `RateLimited`) and, when limited, how long until a retry
/// could pass.
pub async fn reserve(
    kv: &Kv,
    voucher_id: u64,
    user_id: u64,
    order_id: u64,
    windows: &[Window],
) -> redis::RedisResult<(Outcome, Duration)> {
    let mut invocation = RESERVE.prepare_invoke();
    invocation.key(kv.keys.seckill_voucher(voucher_id)).key(kv.keys.seckill_buyers(voucher_id));
    invocation.arg(user_id).arg(order_id);
    for (key, window_ms, max) in windows {
        invocation.key(key).arg(window_ms).arg(max);
    }
    let (code, wait_ms): (i64, i64) = invocation.invoke_async(&mut kv.conn()).await?;
    let outcome = Outcome::from_script(code).ok_or_else(|| unexpected("seckill.lua", code))?;
    Ok((outcome, Duration::from_millis(wait_ms.max(0) as u64)))
}

/// Runs a script over KEYS (voucher hash, buyers hash) and ARGV (user, order).
async fn for_one_buyer(
    script: &Script,
    kv: &Kv,
    voucher_id: u64,
    user_id: u64,
    order_id: u64,
) -> redis::RedisResult<i64> {
    script
        .key(kv.keys.seckill_voucher(voucher_id))
        .key(kv.keys.seckill_buyers(voucher_id))
        .arg(user_id)
        .arg(order_id)
        .invoke_async(&mut kv.conn())
        .await
}

/// What `seckill_release.lua` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The reservation is now a tombstone and its unit is back in stock.
    Released,
    /// The worker confirmed the order: it stands.
    Confirmed,
    /// The buyer had no entry (Redis lost it); a tombstone now refuses a late message.
    Unknown,
    /// Another order (or an earlier tombstone) holds the entry; left alone.
    Other,
}

/// Runs `seckill_release.lua`: gives the unit back only if `user` still maps
/// to this unconfirmed order.
pub async fn release(kv: &Kv, voucher_id: u64, user_id: u64, order_id: u64) -> redis::RedisResult<Release> {
    let code = for_one_buyer(&RELEASE, kv, voucher_id, user_id, order_id).await?;
    Ok(match code {
        1 => Release::Released,
        0 => Release::Confirmed,
        2 => Release::Unknown,
        3 => Release::Other,
        other => return Err(unexpected("seckill_release.lua", other)),
    })
}

/// What `seckill_confirm.lua` found for one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// The reservation is (now) confirmed: store the order.
    Confirmed,
    /// Released (the shopper got 503): never store it.
    Revoked,
    /// The buyer holds another order of this voucher: never store a second one.
    Superseded,
    /// Redis has no entry for the buyer: MySQL's guards decide.
    Unknown,
}

/// Runs `seckill_confirm.lua` for `(user, order)` pairs of one voucher in
/// one call; one answer per pair, in order.
pub async fn confirm(kv: &Kv, voucher_id: u64, orders: &[(u64, u64)]) -> redis::RedisResult<Vec<Confirm>> {
    if orders.is_empty() {
        return Ok(Vec::new());
    }
    let mut invocation = CONFIRM.key(kv.keys.seckill_buyers(voucher_id));
    for (user_id, order_id) in orders {
        invocation.arg(user_id).arg(order_id);
    }
    let codes: Vec<i64> = invocation.invoke_async(&mut kv.conn()).await?;
    codes
        .into_iter()
        .map(|c| match c {
            1 => Ok(Confirm::Confirmed),
            0 => Ok(Confirm::Revoked),
            2 => Ok(Confirm::Unknown),
            3 => Ok(Confirm::Superseded),
            other => Err(unexpected("seckill_confirm.lua", other)),
        })
        .collect()
}

/// Runs `seckill_restore.lua`: marks `(user, order)` pairs of orders stored
/// without a Redis entry as confirmed buyers. Returns how many were written.
pub async fn restore(kv: &Kv, voucher_id: u64, orders: &[(u64, u64)]) -> redis::RedisResult<u64> {
    if orders.is_empty() {
        return Ok(0);
    }
    let mut invocation = RESTORE.key(kv.keys.seckill_buyers(voucher_id));
    for (user_id, order_id) in orders {
        invocation.arg(user_id).arg(order_id);
    }
    invocation.invoke_async(&mut kv.conn()).await
}

/// What `stock_release.lua` did with a closed order's release event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveBack {
    /// The unit is back in stock and the buyer may buy again.
    Released,
    /// The event was applied before: nothing changed.
    Duplicate,
    /// The buyer had no entry: a tombstone was written, stock left to the reconciler.
    UnknownBuyer,
    /// The voucher's keys are gone: the reconciler's rebuild counts this release.
    NoVoucher,
    /// The entry holds another order: untouched.
    Other,
}

/// Runs `stock_release.lua` for release event `event` of `order_id` (an
/// outbox event id, or the reconciler's own id for a release it repairs).
pub async fn give_back(
    kv: &Kv,
    event: &str,
    voucher_id: u64,
    user_id: u64,
    order_id: u64,
) -> redis::RedisResult<GiveBack> {
    let code: i64 = GIVE_BACK
        .key(kv.keys.seckill_voucher(voucher_id))
        .key(kv.keys.seckill_buyers(voucher_id))
        .key(kv.keys.seckill_released(voucher_id))
        .arg(event)
        .arg(user_id)
        .arg(order_id)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok(match code {
        1 => GiveBack::Released,
        0 => GiveBack::Duplicate,
        2 => GiveBack::UnknownBuyer,
        3 => GiveBack::NoVoucher,
        4 => GiveBack::Other,
        other => return Err(unexpected("stock_release.lua", other)),
    })
}

/// Runs `seckill_recount.lua`: sets Redis stock to `initial` minus the live
/// buyers, atomically. `(before, after)`, or `None` if the voucher hash is gone.
pub async fn recount(kv: &Kv, voucher_id: u64, initial: i64) -> redis::RedisResult<Option<(i64, i64)>> {
    let (before, after): (i64, i64) = RECOUNT
        .key(kv.keys.seckill_voucher(voucher_id))
        .key(kv.keys.seckill_buyers(voucher_id))
        .arg(initial)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok((before >= 0).then_some((before, after)))
}
