//! The seckill invariants of one voucher's sale, checked against the exact
//! set of orders that got 202: load the state of MySQL and Redis, then
//! [`check`] (pure) compares it. Used by `cityhub flash-sale`, the JMeter
//! test, the benchmarks and the tests.
//!
//! The checks compare sets, not counts, and each can fail on its own:
//! - not oversold: no more 202s and no more orders than the initial stock,
//!   and the DB stock column says exactly what the orders took;
//! - one order per user: no user got two 202s;
//! - every 202 stored: each accepted order id is a MySQL row with the same
//!   user and voucher;
//! - nothing stored without a 202 (when the run made every order of the voucher);
//! - Redis agrees with MySQL: the live buyers are exactly the stored orders'
//!   buyers, each holding its order confirmed ([`BuyerEntry::Confirmed`]),
//!   and Redis stock plus live buyers is the initial stock.
//!
//! [`Tally`] counts the same properties for a run in which faults cut some
//! answers off (`cityhub chaos`): a request that reached the API and got no
//! answer may still have bought, so an order without a 202 is explained by
//! one such request of its shopper, one order per request; a connection
//! refused excuses nothing, and an order beyond its shopper's unanswered
//! requests is a failure.

use std::collections::{HashMap, HashSet};

use anyhow::Context;
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::seckill::scripts::{BuyerEntry, PASSED};
use cityhub_core::vouchers::buckets;
use cityhub_core::{OrderId, UserId, VoucherId};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

/// One 202 answer: the order id it carried and the user who asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Accepted {
    pub order_id: OrderId,
    pub user_id: UserId,
}

/// What MySQL and Redis hold for one voucher.
#[derive(Debug, Clone, Default)]
pub struct SaleState {
    pub initial_stock: i64,
    pub db_stock: i64,
    /// `(order id, user id)` of every order of the voucher.
    pub orders: Vec<(OrderId, UserId)>,
    /// `None` when the voucher hash is gone.
    pub redis_stock: Option<i64>,
    /// user id -> the buyer's entry.
    pub buyers: HashMap<UserId, BuyerEntry>,
}

/// One named check and what it saw.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub pass: bool,
    pub detail: String,
}

/// Reads the voucher's state from MySQL and Redis: every stock bucket's
/// stock summed, their buyers merged (a walk's "passed" marks left out). A
/// buyer holding units in two buckets fails the load: one order per user is
/// broken.
pub async fn load(db: &MySqlPool, kv: &Kv, voucher_id: VoucherId) -> anyhow::Result<SaleState> {
    let (initial_stock, db_stock, buckets): (i64, i64, u16) = sqlx::query_as(
        "SELECT CAST(initial_stock AS SIGNED), stock, buckets FROM seckill_vouchers WHERE voucher_id = ?",
    )
    .bind(voucher_id)
    .fetch_one(db)
    .await?;
    let orders: Vec<(OrderId, UserId)> =
        sqlx::query_as("SELECT id, user_id FROM orders WHERE voucher_id = ?").bind(voucher_id).fetch_all(db).await?;
    let mut conn = kv.conn();
    let (mut redis_stock, mut buyers) = (None, HashMap::new());
    for sale in buckets::sales(voucher_id, buckets) {
        let stock: Option<i64> = conn.hget(kv.keys.seckill_voucher(sale), "stock").await?;
        if let Some(stock) = stock {
            redis_stock = Some(redis_stock.unwrap_or(0) + stock);
        }
        let raw: HashMap<UserId, String> = conn.hgetall(kv.keys.seckill_buyers(sale)).await?;
        for (user, entry) in raw.into_iter().filter(|(_, e)| e != PASSED) {
            let parsed = BuyerEntry::parse(&entry);
            let parsed = parsed.with_context(|| format!("buyer {user} has an unreadable entry {entry:?}"))?;
            match buyers.get(&user).copied().and_then(BuyerEntry::live_order) {
                Some(held) if parsed.live_order().is_some() => {
                    anyhow::bail!("user {user} holds order {held} and {} in two stock buckets", parsed.order())
                }
                Some(_) => {}
                None => {
                    buyers.insert(user, parsed);
                }
            }
        }
    }
    Ok(SaleState { initial_stock, db_stock, orders, redis_stock, buyers })
}

/// Whether orders of the voucher may exist that the accepted list does not
/// know of (e.g. made by another client); then "nothing stored without a
/// 202" is not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The accepted list holds every 202 the voucher ever gave.
    WholeSale,
    /// Other clients may have bought too.
    Partial,
}

fn sample<T: Ord + std::fmt::Display>(ids: impl IntoIterator<Item = T>) -> String {
    let mut ids: Vec<T> = ids.into_iter().collect();
    ids.sort_unstable();
    let more = ids.len().saturating_sub(5);
    let shown: Vec<String> = ids.iter().take(5).map(T::to_string).collect();
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Compares `accepted` with `state` (see the module doc).
pub fn check(accepted: &[Accepted], state: &SaleState, scope: Scope) -> Vec<Check> {
    let stored: HashMap<OrderId, UserId> = state.orders.iter().copied().collect();
    let mut checks = Vec::new();
    let mut push = |name, pass, detail: String| checks.push(Check { name, pass, detail });

    let (n_accepted, n_orders) = (accepted.len() as i64, state.orders.len() as i64);
    push(
        "not oversold",
        n_accepted <= state.initial_stock
            && n_orders <= state.initial_stock
            && state.db_stock == state.initial_stock - n_orders,
        format!(
            "stock {}, 202s {n_accepted}, orders {n_orders}, DB stock left {}",
            state.initial_stock, state.db_stock
        ),
    );

    let mut users = HashSet::new();
    let twice: Vec<UserId> = accepted.iter().filter(|a| !users.insert(a.user_id)).map(|a| a.user_id).collect();
    push("one order per user", twice.is_empty(), format!("users with two 202s: [{}]", sample(twice)));

    let lost: Vec<OrderId> =
        accepted.iter().filter(|a| !stored.contains_key(&a.order_id)).map(|a| a.order_id).collect();
    let wrong: Vec<OrderId> = accepted
        .iter()
        .filter(|a| stored.get(&a.order_id).is_some_and(|u| *u != a.user_id))
        .map(|a| a.order_id)
        .collect();
    push(
        "every 202 stored",
        lost.is_empty() && wrong.is_empty(),
        format!("{n_accepted} 202s; lost [{}]; stored for another user [{}]", sample(lost), sample(wrong)),
    );

    if scope == Scope::WholeSale {
        let ids: HashSet<OrderId> = accepted.iter().map(|a| a.order_id).collect();
        let extra: Vec<OrderId> = stored.keys().copied().filter(|id| !ids.contains(id)).collect();
        push("nothing stored without a 202", extra.is_empty(), format!("unexpected orders [{}]", sample(extra)));
    }

    let live: HashMap<UserId, BuyerEntry> = live_buyers(state).collect();
    let expected = expected_buyers(state);
    let differ: Vec<UserId> = expected
        .keys()
        .chain(live.keys())
        .copied()
        .collect::<HashSet<UserId>>()
        .into_iter()
        .filter(|u| expected.get(u) != live.get(u))
        .collect();
    let counted = state.redis_stock.map(|s| s + live.len() as i64);
    push(
        "Redis agrees with MySQL",
        differ.is_empty() && counted == Some(state.initial_stock),
        format!(
            "Redis stock {:?} + {} live buyers (initial {}); buyers differing from MySQL [{}]",
            state.redis_stock,
            live.len(),
            state.initial_stock,
            sample(differ)
        ),
    );
    checks
}

/// The buyers holding a unit (reserved or confirmed), with their entries.
fn live_buyers(state: &SaleState) -> impl Iterator<Item = (UserId, BuyerEntry)> + '_ {
    state.buyers.iter().filter(|(_, e)| e.live_order().is_some()).map(|(u, e)| (*u, *e))
}

/// The buyers hash MySQL's orders call for: each buyer's order, confirmed.
fn expected_buyers(state: &SaleState) -> HashMap<UserId, BuyerEntry> {
    state.orders.iter().map(|(id, user)| (*user, BuyerEntry::Confirmed(*id))).collect()
}

/// The invariants of one sale as numbers, for a run in which some requests
/// got no answer (see the module doc). Every count but `accepted`, `stored`
/// and `stored_unanswered` must be zero, and Redis must agree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Distinct order ids answered 202.
    pub accepted: usize,
    /// Orders of the voucher in MySQL.
    pub stored: usize,
    /// Units sold beyond the initial stock, by the worst witness: 202s,
    /// orders, the DB stock column, or Redis stock plus live buyers.
    pub oversold: i64,
    /// Users with two 202s or two orders.
    pub duplicate_buyers: usize,
    /// 202s whose order is not stored, or stored for another user.
    pub lost: usize,
    /// Live Redis reservations (not released) with no MySQL order.
    pub stranded: usize,
    /// Orders without a 202, each explained by one request of its shopper
    /// that reached the API and got no answer.
    pub stored_unanswered: usize,
    /// Orders without a 202 beyond their shopper's unanswered requests.
    pub unexplained: usize,
    /// The live buyers are exactly the orders and Redis stock plus live
    /// buyers is the initial stock.
    pub redis_agrees: bool,
}

impl Tally {
    /// Counts `state` against the 202s and, per user, the requests that
    /// reached the API and got no answer, after the sale is over.
    pub fn of(accepted: &[Accepted], unanswered: &HashMap<UserId, usize>, state: &SaleState) -> Self {
        Self::while_selling(accepted, unanswered, state, u64::MAX)
    }

    /// The same while orders may be on their way: an order whose id was
    /// issued at or after `in_flight_since_ms` (Unix ms) is in flight, so
    /// its reservation without an order is neither lost nor stranded.
    pub fn while_selling(
        accepted: &[Accepted],
        unanswered: &HashMap<UserId, usize>,
        state: &SaleState,
        in_flight_since_ms: u64,
    ) -> Self {
        let settled = |id: OrderId| id.issued_at_ms() < in_flight_since_ms;
        let stored: HashMap<OrderId, UserId> = state.orders.iter().copied().collect();
        let ids: HashSet<OrderId> = accepted.iter().map(|a| a.order_id).collect();

        let mut per_user: HashMap<UserId, (usize, usize)> = HashMap::new();
        for a in accepted {
            per_user.entry(a.user_id).or_default().0 += 1;
        }
        for (_, user) in &state.orders {
            per_user.entry(*user).or_default().1 += 1;
        }
        let duplicate_buyers = per_user.values().filter(|(answers, orders)| *answers > 1 || *orders > 1).count();

        let lost =
            accepted.iter().filter(|a| settled(a.order_id) && stored.get(&a.order_id) != Some(&a.user_id)).count();
        let (mut stored_unanswered, mut unexplained) = (0, 0);
        let mut excuses = unanswered.clone();
        for (id, user) in &state.orders {
            if !ids.contains(id) {
                match excuses.get_mut(user).filter(|left| **left > 0) {
                    Some(left) => {
                        *left -= 1;
                        stored_unanswered += 1;
                    }
                    None => unexplained += 1,
                }
            }
        }

        let live: Vec<(UserId, BuyerEntry)> = live_buyers(state).collect();
        let in_flight = |e: &BuyerEntry| e.live_order().is_some_and(|id| !settled(id) && !stored.contains_key(&id));
        let stranded = live
            .iter()
            .filter(|(_, e)| !in_flight(e) && e.live_order().is_none_or(|id| !stored.contains_key(&id)))
            .count();
        let redis_total = state.redis_stock.map(|s| s + live.len() as i64);
        let (initial, n_orders) = (state.initial_stock, state.orders.len() as i64);
        let oversold =
            [ids.len() as i64 - initial, n_orders - initial, -state.db_stock, redis_total.unwrap_or(0) - initial]
                .into_iter()
                .max()
                .unwrap_or(0)
                .max(0);
        let expected = expected_buyers(state);
        let settled_live: Vec<&(UserId, BuyerEntry)> = live.iter().filter(|(_, e)| !in_flight(e)).collect();
        let redis_agrees = redis_total == Some(initial)
            && settled_live.len() == expected.len()
            && settled_live.iter().all(|(u, e)| expected.get(u) == Some(e));
        Self {
            accepted: ids.len(),
            stored: state.orders.len(),
            oversold,
            duplicate_buyers,
            lost,
            stranded,
            stored_unanswered,
            unexplained,
            redis_agrees,
        }
    }

    /// Nothing lost, oversold, doubled, stranded or unexplained, and Redis agrees.
    pub fn clean(&self) -> bool {
        self.oversold == 0
            && self.duplicate_buyers == 0
            && self.lost == 0
            && self.stranded == 0
            && self.unexplained == 0
            && self.redis_agrees
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(order, user)` pairs as typed ids.
    fn sold(stock: i64, orders: &[(u64, u64)]) -> SaleState {
        let orders: Vec<(OrderId, UserId)> = orders.iter().map(|&(id, user)| (OrderId(id), UserId(user))).collect();
        SaleState {
            initial_stock: stock,
            db_stock: stock - orders.len() as i64,
            redis_stock: Some(stock - orders.len() as i64),
            buyers: orders.iter().map(|(id, user)| (*user, BuyerEntry::Confirmed(*id))).collect(),
            orders,
        }
    }

    fn accepted(order: u64, user: u64) -> Accepted {
        Accepted { order_id: OrderId(order), user_id: UserId(user) }
    }

    fn failed(checks: &[Check]) -> Vec<&'static str> {
        checks.iter().filter(|c| !c.pass).map(|c| c.name).collect()
    }

    const A: [Accepted; 2] = [
        Accepted { order_id: OrderId(10), user_id: UserId(1) },
        Accepted { order_id: OrderId(11), user_id: UserId(2) },
    ];

    #[test]
    fn a_clean_sale_passes_every_check() {
        let checks = check(&A, &sold(5, &[(10, 1), (11, 2)]), Scope::WholeSale);
        assert_eq!(checks.len(), 5);
        assert!(failed(&checks).is_empty(), "{checks:?}");
    }

    #[test]
    fn each_kind_of_drift_fails_its_own_check() {
        // A 202 whose order never arrived (Redis still shows it reserved).
        let mut state = sold(5, &[(10, 1)]);
        state.buyers.insert(UserId(2), BuyerEntry::Reserved(OrderId(11)));
        assert_eq!(failed(&check(&A, &state, Scope::WholeSale)), ["every 202 stored", "Redis agrees with MySQL"]);

        // The same id stored for another user.
        let state = sold(5, &[(10, 1), (11, 3)]);
        assert!(failed(&check(&A, &state, Scope::WholeSale)).contains(&"every 202 stored"));

        // An order nobody was told about.
        let state = sold(5, &[(10, 1), (11, 2), (12, 4)]);
        assert_eq!(failed(&check(&A, &state, Scope::WholeSale)), ["nothing stored without a 202"]);
        assert!(failed(&check(&A, &state, Scope::Partial)).is_empty());

        // More 202s than stock.
        let state = sold(1, &[(10, 1)]);
        assert!(failed(&check(&A, &state, Scope::Partial)).contains(&"not oversold"));

        // One user told 202 twice.
        let twice = [A[0], accepted(12, 1)];
        assert!(failed(&check(&twice, &sold(5, &[(10, 1)]), Scope::Partial)).contains(&"one order per user"));

        // DB stock that does not match the orders, and a lost Redis unit.
        let mut state = sold(5, &[(10, 1), (11, 2)]);
        state.db_stock = 2;
        state.redis_stock = Some(2);
        assert_eq!(failed(&check(&A, &state, Scope::WholeSale)), ["not oversold", "Redis agrees with MySQL"]);
    }

    #[test]
    fn released_tombstones_are_not_buyers() {
        let mut state = sold(5, &[(10, 1), (11, 2)]);
        state.buyers.insert(UserId(3), BuyerEntry::Released(OrderId(12)));
        assert!(failed(&check(&A, &state, Scope::WholeSale)).is_empty());
    }

    #[test]
    fn a_tally_explains_orders_of_unanswered_shoppers_and_counts_every_fault() {
        let none = HashMap::new();
        let clean = Tally::of(&A, &none, &sold(5, &[(10, 1), (11, 2)]));
        assert!(clean.clean(), "{clean:?}");
        assert_eq!((clean.accepted, clean.stored), (2, 2));

        // User 3's request got no answer but bought: explained, not a failure.
        let three = sold(5, &[(10, 1), (11, 2), (12, 3)]);
        let t = Tally::of(&A, &HashMap::from([(UserId(3), 1)]), &three);
        assert_eq!((t.stored_unanswered, t.unexplained), (1, 0));
        assert!(t.clean(), "{t:?}");
        let t = Tally::of(&A, &none, &three);
        assert_eq!(t.unexplained, 1);
        assert!(!t.clean());
        // One unanswered request explains one order, not two.
        let mut twice = sold(6, &[(10, 1), (11, 2), (12, 3), (13, 3)]);
        twice.buyers.insert(UserId(3), BuyerEntry::Confirmed(OrderId(13)));
        let t = Tally::of(&A, &HashMap::from([(UserId(3), 1)]), &twice);
        assert_eq!((t.stored_unanswered, t.unexplained), (1, 1), "{t:?}");

        // A 202 never stored, its reservation still held: lost and stranded.
        let mut state = sold(5, &[(10, 1)]);
        state.buyers.insert(UserId(2), BuyerEntry::Reserved(OrderId(11)));
        let t = Tally::of(&A, &none, &state);
        assert_eq!((t.lost, t.stranded, t.redis_agrees), (1, 1, false));

        // Six orders of five units; one user with two orders.
        let mut state = sold(5, &[(10, 1), (11, 2), (12, 3), (13, 4), (14, 5), (15, 1)]);
        state.db_stock = -1;
        let t = Tally::of(&A, &none, &state);
        assert_eq!((t.oversold, t.duplicate_buyers), (1, 1));

        // Redis would sell a unit twice: stock not taken for a live buyer.
        let mut state = sold(5, &[(10, 1), (11, 2)]);
        state.redis_stock = Some(4);
        let t = Tally::of(&A, &none, &state);
        assert_eq!((t.oversold, t.redis_agrees), (1, false));

        // While selling, a reservation issued after the cut is in flight.
        let fresh = cityhub_platform::ids::EPOCH_MS << 1;
        let mut state = sold(5, &[(10, 1)]);
        state.buyers.insert(UserId(2), BuyerEntry::Reserved(OrderId(11)));
        state.redis_stock = Some(3);
        let t = Tally::while_selling(&A, &none, &state, 0);
        assert!(t.clean(), "{t:?}");
        assert!(!Tally::while_selling(&A, &none, &state, fresh).clean());

        // Redis lost the voucher: not agreeing, nothing else wrong.
        let mut state = sold(5, &[(10, 1), (11, 2)]);
        state.redis_stock = None;
        state.buyers.clear();
        let t = Tally::of(&A, &none, &state);
        assert_eq!((t.oversold, t.lost, t.redis_agrees), (0, 0, false));
    }
}
