//! Typed wrappers around the Lua scripts in `lua/`, one function per script.
//! Each script is compiled in with `include_str!` and loaded once at connect
//! time; calls go out as EVALSHA (redis-rs reloads on NOSCRIPT).

use std::sync::LazyLock;

use redis::aio::ConnectionManager;
use redis::Script;

use super::Kv;

static RESERVE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill.lua")));
static RELEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_release.lua")));
static CONFIRM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/seckill_confirm.lua")));

pub(super) async fn load_all(conn: &mut ConnectionManager) -> redis::RedisResult<()> {
    for script in [&*RESERVE, &*RELEASE, &*CONFIRM] {
        script.prepare_invoke().load_async(conn).await?;
    }
    Ok(())
}

/// The SHA1 of `lua/seckill.lua`, for `redis-benchmark EVALSHA` comparisons.
pub fn reserve_sha() -> &'static str {
    RESERVE.get_hash()
}

/// What `seckill.lua` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    Accepted,
    SoldOut,
    AlreadyBought,
    NotStarted,
    Ended,
    UnknownVoucher,
}

/// Runs `seckill.lua`: window, stock and one-per-user checks, then decrement
/// and record `user -> order`, atomically.
pub async fn reserve(kv: &Kv, voucher_id: u64, user_id: u64, order_id: u64) -> redis::RedisResult<Reserve> {
    let code: i64 = RESERVE
        .key(kv.keys.seckill_voucher(voucher_id))
        .key(kv.keys.seckill_buyers(voucher_id))
        .arg(user_id)
        .arg(order_id)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok(match code {
        0 => Reserve::Accepted,
        1 => Reserve::SoldOut,
        2 => Reserve::AlreadyBought,
        3 => Reserve::NotStarted,
        4 => Reserve::Ended,
        5 => Reserve::UnknownVoucher,
        other => {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Parse,
                "unexpected seckill.lua result",
                other.to_string(),
            )))
        }
    })
}

/// Runs `seckill_release.lua`: gives the unit back only if `user` still maps
/// to this unconfirmed order. True when released.
pub async fn release(kv: &Kv, voucher_id: u64, user_id: u64, order_id: u64) -> redis::RedisResult<bool> {
    RELEASE
        .key(kv.keys.seckill_voucher(voucher_id))
        .key(kv.keys.seckill_buyers(voucher_id))
        .arg(user_id)
        .arg(order_id)
        .invoke_async(&mut kv.conn())
        .await
}

/// Runs `seckill_confirm.lua` for `(user, order)` pairs of one voucher in
/// one call: for each, true when the reservation is (now) confirmed, false
/// when it was released and the order must not be written.
pub async fn confirm(kv: &Kv, voucher_id: u64, orders: &[(u64, u64)]) -> redis::RedisResult<Vec<bool>> {
    if orders.is_empty() {
        return Ok(Vec::new());
    }
    let mut invocation = CONFIRM.key(kv.keys.seckill_buyers(voucher_id));
    for (user_id, order_id) in orders {
        invocation.arg(user_id).arg(order_id);
    }
    let flags: Vec<i64> = invocation.invoke_async(&mut kv.conn()).await?;
    Ok(flags.into_iter().map(|f| f == 1).collect())
}
