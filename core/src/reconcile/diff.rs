//! The reconciler's diff step: pure, from a [`Snapshot`] to what differs and
//! how each difference is to be repaired. No I/O here, so every rule is
//! tested on literal snapshots below.

use std::collections::HashMap;

use super::snapshot::{RedisSide, Snapshot};
use super::Kind;
use crate::ids::{OrderId, UserId};
use crate::orders::lifecycle::StockRelease;
use crate::seckill::scripts::BuyerEntry;

/// How a difference is repaired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// Not at all: an operator must look.
    Report,
    /// Publish these orders (user, order) again on the order topic.
    Republish(Vec<(UserId, OrderId)>),
    /// Give these releases back in Redis (`stock_release.lua`).
    GiveBack(Vec<StockRelease>),
    /// Write these buyers' entries back (`seckill_restore.lua`).
    Restore(Vec<(UserId, OrderId)>),
    /// Rebuild the paused voucher from MySQL once nothing is in flight.
    Rebuild,
}

/// One difference found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: Kind,
    pub order_ids: Vec<OrderId>,
    pub detail: String,
    pub repair: Repair,
}

/// What differs in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    pub findings: Vec<Finding>,
    pub live_orders: i64,
    pub live_buyers: i64,
    /// Reservations without an order younger than the grace period, left alone.
    pub in_flight: i64,
    /// Redis stock did not match its buyers in the snapshot: recount it
    /// (atomically; the snapshot's reads were not one moment).
    pub recount: bool,
}

/// What differs between Redis and MySQL in `s`, judging an order without a
/// row as late (not lost) until it is `grace_ms` old, or until its node's
/// holder stopped (its API is gone: nothing more can come from it).
///
/// MySQL's stock is the whole voucher's: it is judged in bucket 0's
/// snapshot only; everything else is judged per bucket.
pub fn diff(s: &Snapshot, grace_ms: u64) -> Diff {
    let live = s.orders.values().filter(|o| o.status.is_live());
    let live_orders = live.clone().filter(|o| o.bucket == s.bucket).count() as i64;
    let mut d = Diff { live_orders, ..Diff::default() };
    let v = &s.voucher;
    let live_orders = live.count() as i64;
    if s.bucket == 0 && v.db_stock != v.initial - live_orders {
        d.findings.push(Finding {
            kind: Kind::DbStock,
            order_ids: Vec::new(),
            detail: format!(
                "DB stock {} but initial {} - live orders {live_orders} = {}",
                v.db_stock,
                v.initial,
                v.initial - live_orders
            ),
            repair: Repair::Report,
        });
    }
    match &s.redis {
        Some(redis) => compare(s, redis, grace_ms, &mut d),
        None if s.keys_exist() => d.findings.push(Finding {
            kind: Kind::StaleCopy,
            order_ids: Vec::new(),
            detail: "the voucher's Redis keys are of an older Redis generation (restart, failover or restore)".into(),
            repair: Repair::Rebuild,
        }),
        None => d.findings.push(Finding {
            kind: Kind::KeysMissing,
            order_ids: Vec::new(),
            detail: "the voucher's Redis keys are gone".into(),
            repair: Repair::Rebuild,
        }),
    }
    d
}

fn compare(s: &Snapshot, redis: &RedisSide, grace_ms: u64, d: &mut Diff) {
    let past_grace = |at_ms: u64| at_ms + grace_ms < s.now_ms;
    let (mut unconfirmed, mut without_order, mut parked) = (Vec::new(), Vec::new(), Vec::new());
    let (mut releases, mut owners) = (Vec::new(), Vec::new());
    let mut holds: HashMap<UserId, OrderId> = HashMap::new();
    let mut buyers: Vec<(&UserId, &BuyerEntry)> = redis.buyers.iter().collect();
    buyers.sort_by_key(|(user, _)| **user);
    for (&user_id, &entry) in buyers {
        let Some(order_id) = entry.live_order() else { continue };
        d.live_buyers += 1;
        holds.insert(user_id, order_id);
        match s.orders.get(&order_id) {
            Some(o) if o.user_id != user_id => owners.push((order_id, user_id, o.user_id)),
            Some(o) if o.status.is_live() => {}
            Some(o) => {
                if o.closed_at_ms.is_some_and(past_grace) {
                    releases.push(StockRelease { order_id, user_id, voucher_id: s.voucher_id, bucket: s.bucket });
                }
            }
            None if !past_grace(order_id.issued_at_ms()) && !s.stopped_nodes.contains(&order_id.node()) => {
                d.in_flight += 1
            }
            None if s.parked.contains(&order_id) => parked.push(order_id),
            None if matches!(entry, BuyerEntry::Confirmed(_)) => without_order.push((user_id, order_id)),
            None => unconfirmed.push((user_id, order_id)),
        }
    }
    if !owners.is_empty() {
        d.findings.push(Finding {
            kind: Kind::OwnerMismatch,
            order_ids: owners.iter().map(|(id, _, _)| *id).collect(),
            detail: owners
                .iter()
                .map(|(id, entry, stored)| {
                    format!("order {id}: held by user {entry}'s entry, stored for user {stored}")
                })
                .collect::<Vec<_>>()
                .join("; "),
            repair: Repair::Report,
        });
    }
    let late = |kind, pairs: Vec<(UserId, OrderId)>, what: &str| Finding {
        kind,
        order_ids: pairs.iter().map(|(_, id)| *id).collect(),
        detail: format!("{} {what} past the grace period", pairs.len()),
        repair: Repair::Republish(pairs),
    };
    if !unconfirmed.is_empty() {
        d.findings.push(late(Kind::UnconfirmedReservation, unconfirmed, "reservations without an order"));
    }
    if !without_order.is_empty() {
        d.findings.push(late(Kind::ConfirmedWithoutOrder, without_order, "confirmed buyers without an order"));
    }
    if !parked.is_empty() {
        d.findings.push(Finding {
            kind: Kind::ParkedAccepted,
            detail: format!(
                "{} confirmed buyers whose accepted order was parked; see `cityhub parked list`",
                parked.len()
            ),
            order_ids: parked,
            repair: Repair::Report,
        });
    }
    if !releases.is_empty() {
        d.findings.push(Finding {
            kind: Kind::ReleasePending,
            order_ids: releases.iter().map(|r| r.order_id).collect(),
            detail: format!("{} dead orders whose buyer still held the unit past the grace period", releases.len()),
            repair: Repair::GiveBack(releases),
        });
    }
    let mut missing: Vec<(UserId, OrderId)> = s
        .orders
        .iter()
        .filter(|(_, o)| o.bucket == s.bucket && o.status.is_live())
        .filter(|(id, o)| holds.get(&o.user_id) != Some(id) && past_grace(id.issued_at_ms()))
        .map(|(id, o)| (o.user_id, *id))
        .collect();
    missing.sort();
    if !missing.is_empty() {
        d.findings.push(Finding {
            kind: Kind::OrderWithoutBuyer,
            order_ids: missing.iter().map(|(_, id)| *id).collect(),
            detail: format!("{} live orders had no buyer entry", missing.len()),
            repair: Repair::Restore(missing),
        });
    }
    d.recount = redis.stock + d.live_buyers != s.initial();
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use cityhub_platform::ids::EPOCH_MS;

    use super::*;
    use crate::ids::VoucherId;
    use crate::orders::OrderStatus;
    use crate::reconcile::snapshot::{OrderRow, VoucherRow};

    const NOW: u64 = EPOCH_MS + 1_000_000_000;
    const GRACE: u64 = 60_000;

    /// An order id issued `age_ms` before `NOW`, distinct per `n`.
    fn id(age_ms: u64, n: u64) -> OrderId {
        OrderId(((NOW - age_ms - EPOCH_MS) << 22) | n)
    }

    fn old(n: u64) -> OrderId {
        id(GRACE * 2, n)
    }

    fn order(user: u64, status: OrderStatus) -> OrderRow {
        OrderRow { user_id: UserId(user), bucket: 0, status, closed_at_ms: None }
    }

    /// 10 units, `orders` in MySQL, `buyers` in Redis, stock as Redis says.
    fn snapshot(stock: i64, buyers: &[(u64, BuyerEntry)], orders: &[(OrderId, OrderRow)]) -> Snapshot {
        let live = orders.iter().filter(|(_, o)| o.status.is_live()).count() as i64;
        Snapshot {
            voucher_id: VoucherId(1),
            bucket: 0,
            voucher: VoucherRow {
                initial: 10,
                buckets: 1,
                db_stock: 10 - live,
                begin_ms: 0,
                end_ms: 0,
                pay_value: 100,
            },
            redis: Some(RedisSide {
                stock,
                buyers: buyers.iter().map(|&(user, entry)| (UserId(user), entry)).collect(),
            }),
            redis_stock: Some(stock),
            orders: orders.iter().cloned().collect(),
            parked: HashSet::new(),
            now_ms: NOW,
            stopped_nodes: HashSet::new(),
        }
    }

    fn kinds(d: &Diff) -> Vec<Kind> {
        d.findings.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_sale_where_redis_and_mysql_agree_shows_nothing() {
        let (a, b) = (old(1), old(2));
        let s = snapshot(
            8,
            &[(7, BuyerEntry::Confirmed(a)), (8, BuyerEntry::Confirmed(b)), (9, BuyerEntry::Released(old(3)))],
            &[(a, order(7, OrderStatus::Unpaid)), (b, order(8, OrderStatus::Paid))],
        );
        let d = diff(&s, GRACE);
        assert_eq!((d.findings.len(), d.live_buyers, d.live_orders, d.recount), (0, 2, 2, false), "{d:?}");
    }

    #[test]
    fn a_reservation_without_an_order_is_late_within_the_grace_period_and_republished_after_it() {
        let young = id(GRACE / 2, 1);
        let d = diff(&snapshot(9, &[(7, BuyerEntry::Reserved(young))], &[]), GRACE);
        assert_eq!((d.findings.len(), d.in_flight), (0, 1), "{d:?}");

        let late = old(2);
        let d = diff(&snapshot(9, &[(7, BuyerEntry::Reserved(late))], &[]), GRACE);
        assert_eq!(d.findings[0].kind, Kind::UnconfirmedReservation);
        assert_eq!(d.findings[0].repair, Repair::Republish(vec![(UserId(7), late)]));
    }

    #[test]
    fn a_young_reservation_of_a_stopped_node_is_republished_at_once_and_one_of_a_live_node_waits() {
        // Nodes 1 and 2 (the node sits above the 12 bits of sequence).
        let (live, orphan) = (id(GRACE / 2, 1 << 12), id(GRACE / 2, 2 << 12));
        assert_ne!(live.node(), orphan.node());
        let mut s = snapshot(8, &[(7, BuyerEntry::Reserved(live)), (8, BuyerEntry::Reserved(orphan))], &[]);
        s.stopped_nodes.insert(orphan.node());
        let d = diff(&s, GRACE);
        assert_eq!(d.in_flight, 1, "{d:?}");
        assert_eq!(d.findings[0].repair, Repair::Republish(vec![(UserId(8), orphan)]));
    }

    #[test]
    fn a_confirmed_buyer_without_an_order_is_republished_unless_it_was_parked() {
        let (a, b) = (old(1), old(2));
        let mut s = snapshot(8, &[(7, BuyerEntry::Confirmed(a)), (8, BuyerEntry::Confirmed(b))], &[]);
        s.parked.insert(b);
        let d = diff(&s, GRACE);
        assert_eq!(kinds(&d), vec![Kind::ConfirmedWithoutOrder, Kind::ParkedAccepted]);
        assert_eq!(d.findings[0].repair, Repair::Republish(vec![(UserId(7), a)]));
        assert_eq!((d.findings[1].order_ids.clone(), d.findings[1].repair.clone()), (vec![b], Repair::Report));
    }

    #[test]
    fn a_live_order_without_its_entry_is_restored_and_an_entry_of_another_users_order_is_reported() {
        let (a, b) = (old(1), old(2));
        let s = snapshot(
            8,
            &[(8, BuyerEntry::Confirmed(b))],
            &[(a, order(7, OrderStatus::Unpaid)), (b, order(9, OrderStatus::Unpaid))],
        );
        let d = diff(&s, GRACE);
        assert_eq!(kinds(&d), vec![Kind::OwnerMismatch, Kind::OrderWithoutBuyer], "{d:?}");
        assert!(d.findings[0].detail.contains("held by user 8's entry, stored for user 9"));
        // User 9's order is held under user 8's entry, not their own: both are written back.
        assert_eq!(d.findings[1].repair, Repair::Restore(vec![(UserId(7), a), (UserId(9), b)]));
    }

    #[test]
    fn a_dead_order_still_holding_its_unit_is_given_back_only_past_the_grace_period() {
        let a = old(1);
        let mut closed = order(7, OrderStatus::Closed);
        closed.closed_at_ms = Some(NOW - GRACE / 2);
        let d = diff(&snapshot(9, &[(7, BuyerEntry::Confirmed(a))], &[(a, closed.clone())]), GRACE);
        assert!(d.findings.is_empty(), "{d:?}");

        closed.closed_at_ms = Some(NOW - GRACE * 2);
        let d = diff(&snapshot(9, &[(7, BuyerEntry::Confirmed(a))], &[(a, closed)]), GRACE);
        let release = StockRelease { order_id: a, user_id: UserId(7), voucher_id: VoucherId(1), bucket: 0 };
        assert_eq!(d.findings[0].repair, Repair::GiveBack(vec![release]));
    }

    #[test]
    fn stock_off_its_buyers_asks_for_a_recount_and_db_stock_off_its_orders_is_reported() {
        let a = old(1);
        let mut s = snapshot(5, &[(7, BuyerEntry::Confirmed(a))], &[(a, order(7, OrderStatus::Unpaid))]);
        s.voucher.db_stock = 4;
        let d = diff(&s, GRACE);
        assert!(d.recount);
        assert_eq!(kinds(&d), vec![Kind::DbStock]);
        assert_eq!(d.findings[0].repair, Repair::Report);
    }

    #[test]
    fn a_paused_voucher_is_rebuilt_and_told_apart_from_a_stale_copy() {
        let mut s = snapshot(10, &[], &[]);
        s.redis = None;
        assert_eq!(diff(&s, GRACE).findings[0].kind, Kind::StaleCopy);
        s.redis_stock = None;
        let d = diff(&s, GRACE);
        assert_eq!((d.findings[0].kind, d.findings[0].repair.clone()), (Kind::KeysMissing, Repair::Rebuild));
    }
}
