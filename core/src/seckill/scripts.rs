//! Typed wrappers around the seckill Lua scripts in `lua/`, one function per
//! script. Each script is compiled in with `include_str!` and loaded once at
//! connect time ([`all`]); calls go out as EVALSHA. Every one of them is
//! fenced ([`Kv::eval_fenced`]): it acts on a voucher's sale state only
//! while that state was written under Redis's current generation, so a copy
//! of Redis older than the sale (restored, failed over) is paused, not sold
//! from. Only [`rebuild`] and voucher creation write a generation.
//!
//! A buyer's entry in a voucher's buyers hash is one of three states,
//! encoded here and in the scripts only: reserved `<order id>`, confirmed
//! `<order id>:c`, released `<order id>:r` (a tombstone that stays as long as
//! the hash, so it outlives any message the broker may still deliver). A
//! fourth value, [`PASSED`], is no entry: it marks a buyer who found the
//! bucket empty and walked on to the voucher's next bucket (see
//! `vouchers::buckets`); [`BuyerEntry::parse`] refuses it.
//!
//! Every function acts on one bucket of a voucher ([`Sale`]; a voucher id
//! alone is its bucket 0).

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use cityhub_platform::kv::generation::fenced;
use redis::Script;

use super::Outcome;
use crate::ids::{OrderId, Sale, UserId};
use crate::kv::{CityKeys, Kv};

/// A buyer's mark in a bucket they found empty and walked past.
pub const PASSED: &str = "p";

/// A buyer's entry in a voucher's buyers hash, decoded: the one place Rust
/// reads the encoding the scripts write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuyerEntry {
    /// `<order id>`: reserved, the worker has not confirmed it yet.
    Reserved(OrderId),
    /// `<order id>:c`: confirmed by the worker (or written back from MySQL).
    Confirmed(OrderId),
    /// `<order id>:r`: released; the buyer may buy again.
    Released(OrderId),
}

impl BuyerEntry {
    pub fn parse(raw: &str) -> Option<Self> {
        if let Some(id) = raw.strip_suffix(":r") {
            return id.parse().ok().map(BuyerEntry::Released);
        }
        match raw.strip_suffix(":c") {
            Some(id) => id.parse().ok().map(BuyerEntry::Confirmed),
            None => raw.parse().ok().map(BuyerEntry::Reserved),
        }
    }

    /// The order the entry names, whatever its state.
    pub fn order(self) -> OrderId {
        match self {
            BuyerEntry::Reserved(id) | BuyerEntry::Confirmed(id) | BuyerEntry::Released(id) => id,
        }
    }

    /// The order holding a unit: reserved or confirmed, not released.
    pub fn live_order(self) -> Option<OrderId> {
        match self {
            BuyerEntry::Reserved(id) | BuyerEntry::Confirmed(id) => Some(id),
            BuyerEntry::Released(_) => None,
        }
    }
}

impl std::fmt::Display for BuyerEntry {
    /// The encoding the scripts write.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuyerEntry::Reserved(id) => write!(f, "{id}"),
            BuyerEntry::Confirmed(id) => write!(f, "{id}:c"),
            BuyerEntry::Released(id) => write!(f, "{id}:r"),
        }
    }
}

static RESERVE: LazyLock<Script> = LazyLock::new(|| {
    fenced(&format!("{}\n{}", cityhub_platform::ratelimit::LUA, include_str!("../../../lua/seckill.lua")))
});
static REVOKE: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/seckill_revoke.lua")));
static CONFIRM: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/seckill_confirm.lua")));
static RESTORE: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/seckill_restore.lua")));
static GIVE_BACK: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/stock_release.lua")));
static RECOUNT: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/seckill_recount.lua")));
static REBUILD: LazyLock<Script> = LazyLock::new(|| fenced(include_str!("../../../lua/seckill_rebuild.lua")));

/// Every seckill script, to load at connect time.
pub fn all() -> [&'static Script; 7] {
    [&*RESERVE, &*REVOKE, &*CONFIRM, &*RESTORE, &*GIVE_BACK, &*RECOUNT, &*REBUILD]
}

/// A fenced script's state answer: 0 the voucher is current, 7 paused.
const PAUSED: i64 = 7;

fn first(script: &'static str, reply: &[i64]) -> redis::RedisResult<i64> {
    match reply.first() {
        Some(&cityhub_platform::kv::STALE_CALLER) => Err(stale(script)),
        Some(&code) => Ok(code),
        None => Err(unexpected(script, -1)),
    }
}

/// The caller's generation stayed stale through the retries: Redis keeps
/// changing under us; treated like Redis being unreachable.
fn stale(script: &'static str) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Client, script, "Redis generation keeps changing".to_owned()))
}

fn pairs(orders: &[(UserId, OrderId)]) -> Vec<String> {
    orders.iter().flat_map(|(user, order)| [user.to_string(), order.to_string()]).collect()
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
    sale: impl Into<Sale>,
    user_id: UserId,
    order_id: OrderId,
    windows: &[Window],
) -> redis::RedisResult<(Outcome, Duration)> {
    match reserve_in_walk(kv, sale.into(), user_id, order_id, windows, false).await?.0 {
        Step::Decided(outcome, wait) => Ok((outcome, wait)),
        Step::WalkOn { .. } => Err(unexpected("seckill.lua", WALK_ON)),
    }
}

/// `seckill.lua`'s answer: this bucket is empty (or the buyer passed it):
/// walk on.
const WALK_ON: i64 = 9;

/// One bucket's answer in a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The bucket decided (and, when limited, how long until a retry could pass).
    Decided(Outcome, Duration),
    /// Try the next bucket: this one is empty, or the buyer passed it before
    /// (`holds_stock`: it has units again, which this buyer may not take).
    WalkOn { holds_stock: bool },
}

/// [`reserve`] in one bucket of a walk: with `walk_on`, an empty bucket
/// marks the buyer passed and answers [`Step::WalkOn`] instead of sold out.
/// Answers also the Redis generation the bucket's call ran under.
pub async fn reserve_in_walk(
    kv: &Kv,
    sale: Sale,
    user_id: UserId,
    order_id: OrderId,
    windows: &[Window],
    walk_on: bool,
) -> redis::RedisResult<(Step, Arc<str>)> {
    let mut keys = vec![kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale)];
    let mut args = vec![user_id.to_string(), order_id.to_string(), u8::from(walk_on).to_string()];
    for (key, window_ms, max) in windows {
        keys.push(key.clone());
        args.extend([window_ms.to_string(), max.to_string()]);
    }
    let (reply, generation) = kv.eval_fenced_under::<Vec<i64>>(&RESERVE, &keys, &args).await?;
    let code = first("seckill.lua", &reply)?;
    let detail = reply.get(1).copied().unwrap_or_default();
    if code == WALK_ON {
        return Ok((Step::WalkOn { holds_stock: detail > 0 }, generation));
    }
    let outcome = Outcome::from_script(code).ok_or_else(|| unexpected("seckill.lua", code))?;
    Ok((Step::Decided(outcome, Duration::from_millis(detail.max(0) as u64)), generation))
}

/// Whether `sale`'s state was written under Redis's current generation
/// (not paused: see `lua/generation.lua`'s `current`).
pub async fn is_current(kv: &Kv, sale: Sale) -> redis::RedisResult<bool> {
    let key = kv.keys.seckill_voucher(sale);
    let generation = kv.generation.current(&key).await?;
    let written: Option<String> = redis::cmd("HGET").arg(&key).arg("gen").query_async(&mut kv.conn()).await?;
    Ok(written.as_deref() == Some(&*generation))
}

/// What `seckill_revoke.lua` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoke {
    /// The reservation is now a tombstone and its unit is back in stock.
    Revoked,
    /// The worker confirmed the order: it stands.
    Confirmed,
    /// The buyer had no entry (Redis lost it); a tombstone now refuses a late message.
    Unknown,
    /// Another order (or an earlier tombstone) holds the entry; left alone.
    Other,
}

/// Runs `seckill_revoke.lua`: gives the unit back only if `user` still maps
/// to this unconfirmed order.
pub async fn revoke(kv: &Kv, sale: impl Into<Sale>, user_id: UserId, order_id: OrderId) -> redis::RedisResult<Revoke> {
    let sale = sale.into();
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale), kv.keys.seckill_revoked(sale)];
    let reply = kv.eval_fenced::<Vec<i64>>(&REVOKE, &keys, &[user_id.to_string(), order_id.to_string()]).await?;
    Ok(match first("seckill_revoke.lua", &reply)? {
        1 => Revoke::Revoked,
        0 => Revoke::Confirmed,
        2 => Revoke::Unknown,
        3 => Revoke::Other,
        other => return Err(unexpected("seckill_revoke.lua", other)),
    })
}

/// What `seckill_confirm.lua` found for one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// The reservation is (now) confirmed: store the order.
    Confirmed,
    /// Released (the shopper got 503), whatever the buyer holds now: never store it.
    Revoked,
    /// The buyer holds another order of this voucher: never store a second one.
    Superseded,
    /// Redis has no entry for the buyer: MySQL's guards decide.
    Unknown,
    /// The voucher is paused (keys gone or of an older generation): MySQL's
    /// guards decide and nothing is written back; the rebuild counts it.
    Paused,
}

/// Runs `seckill_confirm.lua` for `(user, order)` pairs of one voucher in
/// one call; one answer per pair, in order.
pub async fn confirm(kv: &Kv, sale: impl Into<Sale>, orders: &[(UserId, OrderId)]) -> redis::RedisResult<Vec<Confirm>> {
    if orders.is_empty() {
        return Ok(Vec::new());
    }
    let sale = sale.into();
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale), kv.keys.seckill_revoked(sale)];
    let reply = kv.eval_fenced::<Vec<i64>>(&CONFIRM, &keys, &pairs(orders)).await?;
    first("seckill_confirm.lua", &reply)?;
    if reply.len() != orders.len() + 1 {
        return Err(unexpected("seckill_confirm.lua", reply.len() as i64));
    }
    reply[1..]
        .iter()
        .map(|c| match c {
            1 => Ok(Confirm::Confirmed),
            0 => Ok(Confirm::Revoked),
            2 => Ok(Confirm::Unknown),
            3 => Ok(Confirm::Superseded),
            4 => Ok(Confirm::Paused),
            &other => Err(unexpected("seckill_confirm.lua", other)),
        })
        .collect()
}

/// What `seckill_restore.lua` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Restored {
    /// Entries written back, each taking its unit.
    pub written: u64,
    /// Of those, entries whose unit Redis had already sold (stock was 0).
    pub short: u64,
    /// The voucher is paused: nothing written (its rebuild counts the orders).
    pub paused: bool,
}

/// Runs `seckill_restore.lua`: marks `(user, order)` pairs of orders stored
/// without a Redis entry as confirmed buyers, each taking its unit.
pub async fn restore(kv: &Kv, sale: impl Into<Sale>, orders: &[(UserId, OrderId)]) -> redis::RedisResult<Restored> {
    if orders.is_empty() {
        return Ok(Restored::default());
    }
    let sale = sale.into();
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale)];
    let reply = kv.eval_fenced::<Vec<i64>>(&RESTORE, &keys, &pairs(orders)).await?;
    let state = first("seckill_restore.lua", &reply)?;
    let at = |i: usize| reply.get(i).copied().unwrap_or_default().max(0) as u64;
    Ok(Restored { written: at(1), short: at(2), paused: state == PAUSED })
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
    /// The voucher is paused (keys gone or of an older generation): the
    /// reconciler's rebuild counts this release.
    NoVoucher,
    /// The entry holds another order: untouched.
    Other,
}

/// Runs `stock_release.lua` for release event `event` of `order_id` (an
/// outbox event id, or the reconciler's own id for a release it repairs).
pub async fn give_back(
    kv: &Kv,
    event: &str,
    sale: impl Into<Sale>,
    user_id: UserId,
    order_id: OrderId,
) -> redis::RedisResult<GiveBack> {
    let sale = sale.into();
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale), kv.keys.seckill_released(sale)];
    let reply = kv
        .eval_fenced::<Vec<i64>>(&GIVE_BACK, &keys, &[event.to_owned(), user_id.to_string(), order_id.to_string()])
        .await?;
    Ok(match first("stock_release.lua", &reply)? {
        1 => GiveBack::Released,
        0 => GiveBack::Duplicate,
        2 => GiveBack::UnknownBuyer,
        3 => GiveBack::NoVoucher,
        4 => GiveBack::Other,
        other => return Err(unexpected("stock_release.lua", other)),
    })
}

/// Runs `seckill_recount.lua`: sets Redis stock to `initial` minus the live
/// buyers, atomically. `(before, after)`, or `None` if the voucher is paused.
pub async fn recount(kv: &Kv, sale: impl Into<Sale>, initial: i64) -> redis::RedisResult<Option<(i64, i64)>> {
    let sale = sale.into();
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale)];
    let reply = kv.eval_fenced::<Vec<i64>>(&RECOUNT, &keys, &[initial.to_string()]).await?;
    if first("seckill_recount.lua", &reply)? == PAUSED {
        return Ok(None);
    }
    Ok(Some((reply.get(1).copied().unwrap_or_default(), reply.get(2).copied().unwrap_or_default())))
}

/// A paused voucher's sale state, built from MySQL.
#[derive(Debug, Clone)]
pub struct SaleState {
    pub stock: i64,
    pub begin_ms: i64,
    pub end_ms: i64,
    pub pay_value: u64,
    /// The live orders: (user, order), written as confirmed buyers.
    pub buyers: Vec<(UserId, OrderId)>,
    /// Buyers whose live order is in a later bucket of their walk, marked
    /// [`PASSED`] again so this bucket cannot sell them a second unit.
    pub passed: Vec<UserId>,
}

/// Buyers staged per command while a rebuild writes them.
const STAGE_CHUNK: usize = 1_000;

/// Runs `seckill_rebuild.lua` after staging the buyers in chunks under a
/// key of this call's own: ends the voucher's pause with `state`, unless it
/// is already current (true when this call rebuilt it).
pub async fn rebuild(kv: &Kv, sale: impl Into<Sale>, state: &SaleState) -> redis::RedisResult<bool> {
    let sale = sale.into();
    let staged = kv.keys.seckill_staged(sale, &format!("{:016x}", rand::random::<u64>()));
    let mut conn = kv.conn();
    let buyers = state.buyers.iter().map(|(user, order)| (*user, BuyerEntry::Confirmed(*order).to_string()));
    let fields: Vec<(UserId, String)> = buyers.chain(state.passed.iter().map(|u| (*u, PASSED.to_owned()))).collect();
    for chunk in fields.chunks(STAGE_CHUNK) {
        redis::pipe()
            .hset_multiple(&staged, chunk)
            .ignore()
            .pexpire(&staged, 600_000)
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
    }
    let keys = [kv.keys.seckill_voucher(sale), kv.keys.seckill_buyers(sale), staged];
    let args =
        [state.stock.to_string(), state.begin_ms.to_string(), state.end_ms.to_string(), state.pay_value.to_string()];
    let reply = kv.eval_fenced::<Vec<i64>>(&REBUILD, &keys, &args).await?;
    Ok(first("seckill_rebuild.lua", &reply)? == 1)
}

#[cfg(test)]
mod tests {
    use super::BuyerEntry;
    use crate::ids::OrderId;

    #[test]
    fn a_buyer_entry_reads_back_what_it_prints_and_refuses_anything_else() {
        let order = OrderId(7);
        for entry in [BuyerEntry::Reserved(order), BuyerEntry::Confirmed(order), BuyerEntry::Released(order)] {
            assert_eq!(BuyerEntry::parse(&entry.to_string()), Some(entry));
            assert_eq!(entry.order(), order);
        }
        assert_eq!(BuyerEntry::Confirmed(order).to_string(), "7:c");
        assert_eq!(BuyerEntry::Released(order).live_order(), None);
        for raw in ["", ":c", "7:x", "x", "7:c:c", "-1", super::PASSED] {
            assert_eq!(BuyerEntry::parse(raw), None, "{raw:?}");
        }
    }
}
