//! Reads of one voucher's sale, for assertions in every crate's tests.

use std::collections::HashMap;
use std::time::Duration;

use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::seckill::scripts::BuyerEntry;
use cityhub_core::{OrderId, UserId, VoucherId};
use redis::AsyncCommands;
use sqlx::MySqlPool;

use crate::invariants::{self, Accepted, Scope};

pub async fn order_count(db: &MySqlPool, voucher: VoucherId) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE voucher_id = ?").bind(voucher).fetch_one(db).await.unwrap()
}

/// Waits until `n` orders of `voucher` are in MySQL; returns the count seen last.
pub async fn wait_for_orders(db: &MySqlPool, voucher: VoucherId, n: i64, timeout: Duration) -> i64 {
    crate::eventually(timeout, || async { order_count(db, voucher).await >= n }).await;
    order_count(db, voucher).await
}

pub async fn db_stock(db: &MySqlPool, voucher: VoucherId) -> i64 {
    sqlx::query_scalar("SELECT stock FROM seckill_vouchers WHERE voucher_id = ?")
        .bind(voucher)
        .fetch_one(db)
        .await
        .unwrap()
}

/// The voucher's buyers hash, decoded (an unreadable entry fails the test).
pub async fn buyers(kv: &Kv, voucher: VoucherId) -> HashMap<UserId, BuyerEntry> {
    let raw: HashMap<UserId, String> = kv.conn().hgetall(kv.keys.seckill_buyers(voucher)).await.unwrap();
    raw.into_iter().map(|(user, e)| (user, BuyerEntry::parse(&e).unwrap_or_else(|| panic!("entry {e:?}")))).collect()
}

/// Asserts the stock invariants of a sale whose orders may have been
/// closed or refunded: DB stock == initial − live orders; Redis stock +
/// live buyers == initial (over every stock bucket); the live buyers are
/// exactly the live orders.
pub async fn assert_stock_agrees(db: &MySqlPool, kv: &Kv, voucher: VoucherId) {
    let (initial, stock): (i64, i64) =
        sqlx::query_as("SELECT CAST(initial_stock AS SIGNED), stock FROM seckill_vouchers WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(db)
            .await
            .unwrap();
    let live: HashMap<UserId, OrderId> = sqlx::query_as::<_, (UserId, OrderId)>(
        "SELECT user_id, id FROM orders WHERE voucher_id = ? AND status IN ('unpaid', 'paid')",
    )
    .bind(voucher)
    .fetch_all(db)
    .await
    .unwrap()
    .into_iter()
    .collect();
    assert_eq!(stock, initial - live.len() as i64, "DB stock against {} live orders", live.len());
    // Every stock bucket's, summed and merged.
    let state = invariants::load(db, kv, voucher).await.unwrap();
    let redis_stock = state.redis_stock.expect("the sale's Redis keys");
    let live_buyers: HashMap<UserId, OrderId> =
        state.buyers.into_iter().filter_map(|(user, e)| Some((user, e.live_order()?))).collect();
    assert_eq!(redis_stock + live_buyers.len() as i64, initial, "Redis stock {redis_stock} against its buyers");
    assert_eq!(live_buyers, live, "live Redis buyers against live orders");
}

/// Asserts every invariant of the shared checker, given every 202 of the sale.
pub async fn assert_invariants(db: &MySqlPool, kv: &Kv, voucher: VoucherId, accepted: &[Accepted]) {
    let state = invariants::load(db, kv, voucher).await.unwrap();
    for check in invariants::check(accepted, &state, Scope::WholeSale) {
        assert!(check.pass, "{}: {}", check.name, check.detail);
    }
}
