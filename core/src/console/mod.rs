//! The operator's figures: what the sale console shows and what scripts
//! read from the same admin routes. It owns no state and repairs nothing:
//! every figure is read fresh from where it is kept (Redis for what the
//! sale has reserved, MySQL for what is stored, each instance's own beat
//! for its health and consumer lag), so two figures that should agree are
//! compared, never copied from one another.
//!
//! - [`Console::sales`] and [`Console::sale`]: the seckill vouchers and one
//!   sale's Redis stock against MySQL stock, units Redis holds under a 202
//!   against the orders stored that hold one.
//! - [`Console::overview`]: every API and worker instance with its health,
//!   the order consumers' lag, the outbox backlog and the parked messages.
//! - [`Console::find_orders`]: an order by id, or a shopper's by phone.
//!
//! Costs: a sale's figures are one pipelined read of its buckets' stock and
//! two indexed MySQL reads; the overview one `HGETALL` and two counts.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::outbox::Backlog;
use cityhub_platform::presence::{self, Instance, State};
use redis::AsyncCommands;
use sqlx::MySqlPool;

use crate::auth::Phone;
use crate::ids::{OrderId, ShopId, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::orders::{self, OrderError, OrderStatus, OrderView};
use crate::vouchers::buckets;

/// The figure a worker's beat carries: messages of the order topic stored
/// past its consumed offsets, over the queues it holds.
pub const FIGURE_ORDER_LAG: &str = "order_lag";
/// The figure an API's beat carries: seckill requests it answered 202
/// since it started.
pub const FIGURE_ACCEPTED: &str = "accepted";
/// The figure a worker's beat carries: order messages it stored since it started.
pub const FIGURE_STORED: &str = "stored";

/// Most orders a lookup by phone lists (newest first).
pub const LOOKUP_LIMIT: u32 = 50;

/// Where a sale stands in its window, by the database clock's view of now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Upcoming,
    Live,
    Ended,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Upcoming => "upcoming",
            Phase::Live => "live",
            Phase::Ended => "ended",
        }
    }

    fn at(now: DateTime<Utc>, begin: DateTime<Utc>, end: DateTime<Utc>) -> Self {
        if now < begin {
            Phase::Upcoming
        } else if now < end {
            Phase::Live
        } else {
            Phase::Ended
        }
    }
}

/// A seckill voucher as MySQL holds it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SaleRow {
    pub voucher_id: VoucherId,
    pub shop_id: ShopId,
    pub title: String,
    pub initial_stock: i64,
    /// MySQL's stock: initial stock less the live orders stored.
    pub mysql_stock: i64,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub buckets: u16,
}

impl SaleRow {
    pub fn phase(&self) -> Phase {
        Phase::at(Utc::now(), self.begin_time, self.end_time)
    }
}

/// A voucher's stored orders by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrderCounts {
    pub unpaid: i64,
    pub paid: i64,
    pub closed: i64,
    pub refunded: i64,
}

impl OrderCounts {
    /// Orders that hold a unit: unpaid and paid.
    pub fn live(&self) -> i64 {
        self.unpaid + self.paid
    }
}

/// One sale, from both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaleFigures {
    pub row: SaleRow,
    /// Units left in Redis, over every bucket; `None` while a bucket has no
    /// keys (Redis lost them; the reconciler rebuilds them).
    pub redis_stock: Option<i64>,
    pub orders: OrderCounts,
}

impl SaleFigures {
    /// Units Redis holds for buyers, each under a 202 (initial stock less
    /// Redis stock): a close or refund gives its unit back, so this counts
    /// the 202s whose orders still hold their unit.
    pub fn reserved(&self) -> Option<i64> {
        self.redis_stock.map(|left| self.row.initial_stock - left)
    }

    /// Reserved less stored: orders on their way to MySQL (in the API's
    /// batch, on the broker, in the worker), plus releases of closed orders
    /// on their way back to Redis (outbox, broker, consumer); 0 once both
    /// have drained.
    pub fn in_flight(&self) -> Option<i64> {
        self.reserved().map(|r| r - self.orders.live())
    }
}

/// The platform as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub instances: Vec<Instance>,
    /// Order messages not consumed yet, summed over the workers that beat.
    pub order_lag: i64,
    pub outbox: Backlog,
    /// Parked messages not replayed.
    pub parked_open: i64,
    /// Of those, orders whose shopper had a 202: each breaks the promise.
    pub parked_accepted: i64,
}

impl Overview {
    /// Instances of `kind` that beat and are healthy.
    pub fn up(&self, kind: &str) -> usize {
        self.instances.iter().filter(|i| i.beat.kind == kind && i.state == State::Up).count()
    }
}

/// An order as an admin finds it: whose it is and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundOrder {
    pub user_id: UserId,
    pub phone: String,
    pub order: OrderView,
}

/// How an admin looks orders up.
#[derive(Debug, Clone)]
pub enum Lookup {
    Id(OrderId),
    Phone(Phone),
}

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Orders(#[from] OrderError),
}

/// The operator's reads. Clone freely.
#[derive(Clone)]
pub struct Console {
    db: MySqlPool,
    kv: Kv,
    /// The payment window: an unpaid order past it reads as closed.
    window: Duration,
}

const SALE_COLUMNS: &str = "v.id AS voucher_id, v.shop_id, v.title, CAST(s.initial_stock AS SIGNED) AS initial_stock, \
     CAST(s.stock AS SIGNED) AS mysql_stock, s.begin_time, s.end_time, s.buckets \
     FROM seckill_vouchers s JOIN vouchers v ON v.id = s.voucher_id";

impl Console {
    pub fn new(db: MySqlPool, kv: Kv, window: Duration) -> Self {
        Self { db, kv, window }
    }

    /// The newest `limit` seckill vouchers, newest first.
    pub async fn sales(&self, limit: u32) -> Result<Vec<SaleRow>, ConsoleError> {
        let sql = format!("SELECT {SALE_COLUMNS} ORDER BY s.voucher_id DESC LIMIT ?");
        Ok(sqlx::query_as(&sql).bind(limit).fetch_all(&self.db).await?)
    }

    /// Seckill voucher `id`'s figures; `None` when there is no such voucher.
    pub async fn sale(&self, id: VoucherId) -> Result<Option<SaleFigures>, ConsoleError> {
        let sql = format!("SELECT {SALE_COLUMNS} WHERE s.voucher_id = ?");
        let Some(row) = sqlx::query_as::<_, SaleRow>(&sql).bind(id).fetch_optional(&self.db).await? else {
            return Ok(None);
        };
        let counts: Vec<(String, i64)> =
            sqlx::query_as("SELECT status, COUNT(*) FROM orders WHERE voucher_id = ? GROUP BY status")
                .bind(id)
                .fetch_all(&self.db)
                .await?;
        let mut orders = OrderCounts::default();
        for (status, n) in counts {
            match OrderStatus::from_column(&status) {
                Some(OrderStatus::Unpaid) => orders.unpaid = n,
                Some(OrderStatus::Paid) => orders.paid = n,
                Some(OrderStatus::Closed) => orders.closed = n,
                Some(OrderStatus::Refunded) => orders.refunded = n,
                Some(OrderStatus::Queued) | None => {}
            }
        }
        // Redis after MySQL: a reservation stored between the two reads
        // shows as in flight for a moment, never as a negative.
        let reads =
            buckets::sales(id, row.buckets).map(|sale| redis::Cmd::hget(self.kv.keys.seckill_voucher(sale), "stock"));
        let mut redis_stock = Some(0i64);
        for value in self.kv.conn().query_each(reads.collect()).await? {
            let units: Option<i64> = redis::from_redis_value(value).map_err(redis::RedisError::from)?;
            redis_stock = redis_stock.zip(units).map(|(sum, units)| sum + units);
        }
        Ok(Some(SaleFigures { row, redis_stock, orders }))
    }

    /// Every instance, the order lag, the outbox backlog and parked messages.
    pub async fn overview(&self) -> Result<Overview, ConsoleError> {
        let instances = presence::list(&self.kv).await?;
        let order_lag = instances
            .iter()
            .filter(|i| i.state != State::Missing)
            .filter_map(|i| i.beat.figures.get(FIGURE_ORDER_LAG))
            .sum::<f64>() as i64;
        let outbox = cityhub_platform::outbox::backlog(&self.db).await?;
        let (parked_open, parked_accepted): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), CAST(SUM(accepted) AS SIGNED) FROM parked_messages WHERE replayed_at IS NULL",
        )
        .fetch_one(&self.db)
        .await?;
        Ok(Overview { instances, order_lag, outbox, parked_open, parked_accepted: parked_accepted.unwrap_or(0) })
    }

    /// The order with this id (stored, or still queued in Redis), or the
    /// newest [`LOOKUP_LIMIT`] stored orders of the shopper with this phone.
    pub async fn find_orders(&self, lookup: &Lookup) -> Result<Vec<FoundOrder>, ConsoleError> {
        match lookup {
            Lookup::Id(id) => {
                let owner: Option<(UserId, String)> = sqlx::query_as(
                    "SELECT u.id, u.phone FROM orders o JOIN users u ON u.id = o.user_id WHERE o.id = ?",
                )
                .bind(id)
                .fetch_optional(&self.db)
                .await?;
                let owner = match owner {
                    Some(owner) => Some(owner),
                    None => self.queued_owner(*id).await?,
                };
                let Some((user_id, phone)) = owner else { return Ok(Vec::new()) };
                let order = orders::find_for_user(&self.db, &self.kv, self.window, *id, user_id).await?;
                Ok(order.into_iter().map(|order| FoundOrder { user_id, phone: phone.clone(), order }).collect())
            }
            Lookup::Phone(phone) => {
                let user: Option<UserId> = sqlx::query_scalar("SELECT id FROM users WHERE phone = ?")
                    .bind(phone.as_str())
                    .fetch_optional(&self.db)
                    .await?;
                let Some(user_id) = user else { return Ok(Vec::new()) };
                let list = orders::list_for_user(&self.db, self.window, user_id, None, LOOKUP_LIMIT).await?;
                Ok(list
                    .into_iter()
                    .map(|order| FoundOrder { user_id, phone: phone.as_str().to_owned(), order })
                    .collect())
            }
        }
    }

    /// The owner of an order accepted but not stored yet, from its pending marker.
    async fn queued_owner(&self, id: OrderId) -> Result<Option<(UserId, String)>, ConsoleError> {
        let pending: Option<String> = self.kv.conn().get(self.kv.keys.pending_order(id)).await?;
        let Some(user_id) = pending.as_deref().and_then(crate::seckill::PendingOrder::decode).map(|p| p.user_id) else {
            return Ok(None);
        };
        let phone: Option<String> =
            sqlx::query_scalar("SELECT phone FROM users WHERE id = ?").bind(user_id).fetch_optional(&self.db).await?;
        Ok(phone.map(|phone| (user_id, phone)))
    }
}

/// The figures a process's own metrics give its beat: each name of
/// `wanted` with the sum of the series of its metric carrying its labels.
pub fn figures(text: &str, wanted: &[(&str, &str, &[&str])]) -> BTreeMap<String, f64> {
    wanted
        .iter()
        .map(|(figure, metric, labels)| {
            (figure.to_string(), cityhub_platform::metrics::sample(text, metric, labels).unwrap_or(0.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;

    #[test]
    fn a_sale_is_upcoming_live_then_ended_with_the_end_exclusive() {
        let begin = Utc::now();
        let end = begin + TimeDelta::seconds(10);
        assert_eq!(Phase::at(begin - TimeDelta::milliseconds(1), begin, end), Phase::Upcoming);
        assert_eq!(Phase::at(begin, begin, end), Phase::Live);
        assert_eq!(Phase::at(end, begin, end), Phase::Ended);
    }

    #[test]
    fn in_flight_is_what_redis_reserved_and_mysql_does_not_hold() {
        let row = SaleRow {
            voucher_id: VoucherId(1),
            shop_id: ShopId(1),
            title: "t".into(),
            initial_stock: 10,
            mysql_stock: 7,
            begin_time: Utc::now(),
            end_time: Utc::now(),
            buckets: 1,
        };
        let orders = OrderCounts { unpaid: 2, paid: 1, closed: 4, refunded: 1 };
        let sale = SaleFigures { row: row.clone(), redis_stock: Some(5), orders };
        assert_eq!((sale.reserved(), sale.in_flight()), (Some(5), Some(2)));
        let lost = SaleFigures { row, redis_stock: None, orders };
        assert_eq!((lost.reserved(), lost.in_flight()), (None, None));
    }

    #[test]
    fn figures_sum_the_matching_series_and_read_zero_when_absent() {
        let text = "m_total{topic=\"a\",group=\"g\"} 3\nm_total{topic=\"b\",group=\"g\"} 4\nm_total{topic=\"a\",group=\"h\"} 5\n";
        let got = figures(text, &[("a", "m_total", &["topic=\"a\""]), ("none", "other", &[])]);
        assert_eq!(got.get("a"), Some(&8.0));
        assert_eq!(got.get("none"), Some(&0.0));
    }
}
