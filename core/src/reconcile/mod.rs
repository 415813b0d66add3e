//! The reconciler: compares one voucher's Redis state (stock, buyers) with
//! MySQL (orders, stock), repairs what it safely can, and keeps a report.
//! The worker runs it on a schedule for every voucher on sale or recently
//! ended; an admin runs it on demand.
//!
//! The invariant it checks: Redis stock + live Redis buyers == initial
//! stock; every confirmed buyer has a live DB order; DB stock == initial −
//! live DB orders. What it does about each difference:
//!
//! - **Voucher keys missing while the sale is on** (Redis restarted or was
//!   flushed): the API answers `sale_paused`. The keys are rebuilt from
//!   MySQL (stock = initial − live orders, buyers = live orders, confirmed)
//!   only when the order consumer group's lag is zero: an order still in
//!   flight is not in MySQL yet, so a rebuild before it lands would sell
//!   its unit a second time.
//! - **A reservation with no order, older than the grace period** (the
//!   order id carries its time): the order message is **re-published**, not
//!   released. The message may only be late (a lagging worker, a broker
//!   retry) and the shopper may hold a 202; the worker's insert is keyed on
//!   the order id, so a duplicate changes nothing, and an order nobody pays
//!   is closed by the close job, which releases its stock. Releasing instead
//!   would break a 202 whenever the original message was merely slow.
//!   Confirmed buyers with no order past the grace period are re-published
//!   the same way, unless the order was parked: that is reported (its
//!   shopper had a 202 and an operator must look).
//! - **A live DB order whose buyer entry is missing**: the entry is written
//!   back as confirmed (`seckill_restore.lua`, which never overwrites a live entry).
//! - **Redis stock off its buyers**: recounted atomically in Redis
//!   (`seckill_recount.lua`), so reservations running meanwhile stay exact.
//! - **A confirmed buyer whose order is dead**: its release is given back
//!   once the close is older than the grace period (the outbox event does
//!   it first, normally); `stock_release.lua` never gives one order's unit twice.
//! - **DB stock off its orders**: reported only; MySQL is the truth and a
//!   difference there is a bug to look at, not something to paper over.
//!
//! Reads go Redis first (one atomic snapshot of stock and buyers), MySQL
//! second, so an order stored meanwhile is seen in MySQL with its entry, and
//! nothing in flight is mistaken for drift.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::ids::issued_at_ms;
use cityhub_platform::mq::lag::LagBoard;
use cityhub_platform::mq::publisher::BatchPublisher;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::kv::{CityKeys, Kv};
use crate::orders::lifecycle::StockRelease;
use crate::orders::{OrderMessage, OrderStatus};
use crate::seckill::scripts;

/// What the run concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Redis and MySQL agree.
    Consistent,
    /// Differences were found and all were repaired (or handed to the worker).
    Repaired,
    /// Differences remain that need an operator.
    Drift,
    /// The voucher's keys are gone and orders are still in flight: the sale
    /// stays paused until a later run can rebuild.
    Paused,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Consistent => "consistent",
            Verdict::Repaired => "repaired",
            Verdict::Drift => "drift",
            Verdict::Paused => "paused",
        }
    }
}

/// A kind of difference (the `kind` label of the reconciler's metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    KeysMissing,
    UnconfirmedReservation,
    ConfirmedWithoutOrder,
    ParkedAccepted,
    OrderWithoutBuyer,
    ReleasePending,
    RedisStock,
    DbStock,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::KeysMissing,
        Kind::UnconfirmedReservation,
        Kind::ConfirmedWithoutOrder,
        Kind::ParkedAccepted,
        Kind::OrderWithoutBuyer,
        Kind::ReleasePending,
        Kind::RedisStock,
        Kind::DbStock,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::KeysMissing => "keys_missing",
            Kind::UnconfirmedReservation => "unconfirmed_reservation",
            Kind::ConfirmedWithoutOrder => "confirmed_without_order",
            Kind::ParkedAccepted => "parked_accepted",
            Kind::OrderWithoutBuyer => "order_without_buyer",
            Kind::ReleasePending => "release_pending",
            Kind::RedisStock => "redis_stock",
            Kind::DbStock => "db_stock",
        }
    }
}

/// One difference found, and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub kind: Kind,
    /// Orders concerned (when the difference is about orders).
    pub order_ids: Vec<u64>,
    pub detail: String,
    /// Whether this run repaired it (or handed it to the worker).
    pub repaired: bool,
}

/// The result of one run, kept as the voucher's last report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub voucher_id: u64,
    pub ran_at: DateTime<Utc>,
    pub verdict: Verdict,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders: i64,
    /// `None` when the voucher's keys were missing.
    pub redis_stock: Option<i64>,
    pub live_buyers: i64,
    /// Reservations younger than the grace period, left alone.
    pub in_flight: i64,
    pub differences: Vec<Difference>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("no such seckill voucher")]
    NotFound,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("a report does not serialize: {0}")]
    Report(#[from] serde_json::Error),
}

/// A buyers-hash entry: `<id>`, `<id>:c` or `<id>:r` (see `seckill::scripts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Reserved(u64),
    Confirmed(u64),
    Released,
}

impl Entry {
    fn parse(raw: &str) -> Option<Self> {
        if raw.ends_with(":r") {
            return Some(Entry::Released);
        }
        match raw.strip_suffix(":c") {
            Some(id) => id.parse().ok().map(Entry::Confirmed),
            None => raw.parse().ok().map(Entry::Reserved),
        }
    }
}

#[derive(sqlx::FromRow)]
struct Voucher {
    initial: i64,
    db_stock: i64,
    begin: DateTime<Utc>,
    end: DateTime<Utc>,
    pay_value: u64,
}

/// An order row of the voucher.
struct Row {
    user_id: u64,
    status: OrderStatus,
    closed_at: Option<DateTime<Utc>>,
}

/// The reconciler. Clone freely.
#[derive(Clone)]
pub struct Reconciler {
    db: MySqlPool,
    kv: Kv,
    orders: BatchPublisher,
    lag: LagBoard,
    grace: Duration,
    recent: Duration,
}

impl Reconciler {
    /// `orders` publishes to the order topic; `lag` is the order consumer group's board.
    pub fn new(
        db: MySqlPool,
        kv: Kv,
        orders: BatchPublisher,
        lag: LagBoard,
        grace: Duration,
        recent: Duration,
    ) -> Self {
        for kind in Kind::ALL {
            metrics::counter!(crate::metrics::RECONCILER_DIFFERENCES, "kind" => kind.label()).increment(0);
            metrics::counter!(crate::metrics::RECONCILER_REPAIRS, "kind" => kind.label()).increment(0);
        }
        Self { db, kv, orders, lag, grace, recent }
    }

    /// The vouchers to reconcile now: on sale, or ended within the recent window.
    pub async fn due(&self) -> Result<Vec<u64>, ReconcileError> {
        let since = Utc::now() - self.recent;
        let rows: Vec<(u64,)> = sqlx::query_as(
            "SELECT voucher_id FROM seckill_vouchers WHERE begin_time <= CURRENT_TIMESTAMP(3) AND end_time >= ?",
        )
        .bind(since)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// The last report kept for `voucher_id`.
    pub async fn last_report(db: &MySqlPool, voucher_id: u64) -> Result<Option<Report>, ReconcileError> {
        let row: Option<(String,)> = sqlx::query_as("SELECT report FROM reconcile_reports WHERE voucher_id = ?")
            .bind(voucher_id)
            .fetch_optional(db)
            .await?;
        Ok(row.map(|(r,)| serde_json::from_str(&r)).transpose()?)
    }

    async fn voucher(&self, tx: &mut sqlx::MySqlConnection, voucher_id: u64) -> Result<Voucher, ReconcileError> {
        let row: Option<Voucher> = sqlx::query_as(
            "SELECT CAST(s.initial_stock AS SIGNED) AS initial, s.stock AS db_stock, s.begin_time AS `begin`, \
             s.end_time AS `end`, v.pay_value FROM seckill_vouchers s JOIN vouchers v ON v.id = s.voucher_id \
             WHERE s.voucher_id = ?",
        )
        .bind(voucher_id)
        .fetch_optional(&mut *tx)
        .await?;
        row.ok_or(ReconcileError::NotFound)
    }

    /// Every order of the voucher, by id.
    async fn orders(conn: &mut sqlx::MySqlConnection, voucher_id: u64) -> Result<HashMap<u64, Row>, ReconcileError> {
        let rows: Vec<(u64, u64, String, Option<DateTime<Utc>>)> =
            sqlx::query_as("SELECT id, user_id, status, closed_at FROM orders WHERE voucher_id = ?")
                .bind(voucher_id)
                .fetch_all(&mut *conn)
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, user_id, status, closed_at)| {
                Some((id, Row { user_id, status: OrderStatus::from_column(&status)?, closed_at }))
            })
            .collect())
    }

    /// Reconciles one voucher now, keeps and returns the report.
    pub async fn run(&self, voucher_id: u64) -> Result<Report, ReconcileError> {
        // Redis first, in one atomic snapshot (see the module doc).
        let (exists, redis_stock, buyers): (bool, Option<i64>, HashMap<u64, String>) = redis::pipe()
            .atomic()
            .exists(self.kv.keys.seckill_voucher(voucher_id))
            .hget(self.kv.keys.seckill_voucher(voucher_id), "stock")
            .hgetall(self.kv.keys.seckill_buyers(voucher_id))
            .query_async(&mut self.kv.conn())
            .await?;
        // MySQL second, both reads in one transaction: one consistent snapshot.
        let mut tx = self.db.begin().await?;
        let voucher = self.voucher(&mut tx, voucher_id).await?;
        let orders = Self::orders(&mut tx, voucher_id).await?;
        tx.commit().await?;
        let live_orders = orders.values().filter(|o| o.status.is_live()).count() as i64;

        let mut report = Report {
            voucher_id,
            ran_at: Utc::now(),
            verdict: Verdict::Consistent,
            initial_stock: voucher.initial,
            db_stock: voucher.db_stock,
            live_orders,
            redis_stock,
            live_buyers: 0,
            in_flight: 0,
            differences: Vec::new(),
        };
        if voucher.db_stock != voucher.initial - live_orders {
            report.differences.push(Difference {
                kind: Kind::DbStock,
                order_ids: Vec::new(),
                detail: format!(
                    "DB stock {} but initial {} - live orders {live_orders} = {}",
                    voucher.db_stock,
                    voucher.initial,
                    voucher.initial - live_orders
                ),
                repaired: false,
            });
        }
        if exists {
            self.compare(&voucher, &buyers, &orders, &mut report).await?;
        } else {
            self.rebuild(voucher_id, &voucher, &mut report).await?;
        }
        report.verdict = if report.verdict == Verdict::Paused {
            Verdict::Paused
        } else if report.differences.is_empty() {
            Verdict::Consistent
        } else if report.differences.iter().all(|d| d.repaired) {
            Verdict::Repaired
        } else {
            Verdict::Drift
        };
        self.keep(&report).await?;
        Ok(report)
    }

    async fn compare(
        &self,
        voucher: &Voucher,
        buyers: &HashMap<u64, String>,
        orders: &HashMap<u64, Row>,
        report: &mut Report,
    ) -> Result<(), ReconcileError> {
        let voucher_id = report.voucher_id;
        let now = cityhub_platform::now_ms();
        let past_grace = |order_id: u64| issued_at_ms(order_id) + (self.grace.as_millis() as u64) < now;
        let (mut republish, mut unconfirmed, mut without_order, mut parked_candidates) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut releases, mut live_buyers) = (Vec::new(), 0i64);
        let mut holds: HashMap<u64, u64> = HashMap::new();
        for (&user_id, raw) in buyers {
            let Some(entry) = Entry::parse(raw) else { continue };
            let (order_id, confirmed) = match entry {
                Entry::Released => continue,
                Entry::Reserved(id) => (id, false),
                Entry::Confirmed(id) => (id, true),
            };
            live_buyers += 1;
            holds.insert(user_id, order_id);
            match orders.get(&order_id) {
                Some(o) if o.status.is_live() => {}
                Some(o) => {
                    let closed_long_ago = o
                        .closed_at
                        .is_some_and(|at| at.timestamp_millis() as u64 + (self.grace.as_millis() as u64) < now);
                    if closed_long_ago {
                        releases.push(StockRelease { order_id, user_id, voucher_id });
                    }
                }
                None if !past_grace(order_id) => report.in_flight += 1,
                None if confirmed => parked_candidates.push((user_id, order_id)),
                None => {
                    unconfirmed.push(order_id);
                    republish.push((user_id, order_id));
                }
            }
        }
        report.live_buyers = live_buyers;

        // Confirmed without an order: parked (report) or lost (re-publish).
        let parked = self.parked(parked_candidates.iter().map(|(_, id)| *id)).await?;
        for (user_id, order_id) in parked_candidates {
            if !parked.contains(&order_id) {
                without_order.push(order_id);
                republish.push((user_id, order_id));
            }
        }
        for (user_id, order_id) in &republish {
            let message = OrderMessage {
                order_id: *order_id,
                user_id: *user_id,
                voucher_id,
                pay_amount: voucher.pay_value,
                created_at_ms: issued_at_ms(*order_id),
                request_id: None,
            };
            let body = serde_json::to_vec(&message)?;
            if let Err(err) = self.orders.publish(order_id.to_string(), body).await {
                tracing::warn!(order_id, error = %err, "cannot re-publish an order; the next run tries again");
            }
        }
        let republished = |kind, ids: Vec<u64>, what: &str| Difference {
            kind,
            detail: format!("{} {what} older than {:?}: order messages re-published", ids.len(), self.grace),
            order_ids: ids,
            repaired: true,
        };
        if !unconfirmed.is_empty() {
            report.differences.push(republished(
                Kind::UnconfirmedReservation,
                unconfirmed,
                "reservations without an order",
            ));
        }
        if !without_order.is_empty() {
            report.differences.push(republished(
                Kind::ConfirmedWithoutOrder,
                without_order,
                "confirmed buyers without an order",
            ));
        }
        if !parked.is_empty() {
            report.differences.push(Difference {
                kind: Kind::ParkedAccepted,
                detail: format!(
                    "{} confirmed buyers whose accepted order was parked; see `cityhub parked list`",
                    parked.len()
                ),
                order_ids: parked,
                repaired: false,
            });
        }

        // Dead orders still holding their buyer, closed longer ago than the grace period.
        if !releases.is_empty() {
            for release in &releases {
                let event = format!("reconcile:{}", release.order_id);
                scripts::give_back(&self.kv, &event, voucher_id, release.user_id, release.order_id).await?;
            }
            report.differences.push(Difference {
                kind: Kind::ReleasePending,
                order_ids: releases.iter().map(|r| r.order_id).collect(),
                detail: "dead orders whose buyer still held the unit: given back".into(),
                repaired: true,
            });
        }

        // Live orders whose buyer entry is missing (past the grace period).
        let missing: Vec<(u64, u64)> = orders
            .iter()
            .filter(|(id, o)| o.status.is_live() && holds.get(&o.user_id) != Some(id) && past_grace(**id))
            .map(|(id, o)| (o.user_id, *id))
            .collect();
        if !missing.is_empty() {
            let written = scripts::restore(&self.kv, voucher_id, &missing).await?;
            report.differences.push(Difference {
                kind: Kind::OrderWithoutBuyer,
                order_ids: missing.iter().map(|(_, id)| *id).collect(),
                detail: format!("{} live orders had no buyer entry; {written} written back", missing.len()),
                repaired: written as usize == missing.len(),
            });
        }

        // Stock against buyers, on the snapshot; recounted atomically if off.
        let stock = report.redis_stock.unwrap_or_default();
        if stock + live_buyers != voucher.initial || !missing.is_empty() || !releases.is_empty() {
            let recount = scripts::recount(&self.kv, voucher_id, voucher.initial).await?;
            if let Some((before, after)) = recount.filter(|(b, a)| b != a) {
                report.differences.push(Difference {
                    kind: Kind::RedisStock,
                    order_ids: Vec::new(),
                    detail: format!("Redis stock {before} did not match its buyers; recounted to {after}"),
                    repaired: true,
                });
            }
        }
        Ok(())
    }

    /// Which of `order_ids` were parked with a 202 and not replayed.
    async fn parked(&self, order_ids: impl Iterator<Item = u64>) -> Result<Vec<u64>, ReconcileError> {
        let ids: Vec<u64> = order_ids.collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sqlx::QueryBuilder::<sqlx::MySql>::new(
            "SELECT DISTINCT order_id FROM parked_messages WHERE accepted AND replayed_at IS NULL AND order_id IN (",
        );
        let mut list = q.separated(", ");
        for id in ids {
            list.push_bind(id);
        }
        q.push(")");
        let rows: Vec<(u64,)> = q.build_query_as().fetch_all(&self.db).await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// The voucher's keys are gone: rebuild them from MySQL if no order is in
    /// flight and the sale is on or recent; otherwise report the pause. The
    /// orders are read again after the lag said zero: one stored between the
    /// run's first read and that answer would otherwise be left out, and its
    /// unit sold a second time.
    async fn rebuild(&self, voucher_id: u64, voucher: &Voucher, report: &mut Report) -> Result<(), ReconcileError> {
        let lag = self.lag.group_lag().await?;
        if lag != Some(0) {
            let why = match lag {
                Some(n) => format!("{n} order messages still in flight"),
                None => "no order worker reports its lag".to_owned(),
            };
            report.differences.push(Difference {
                kind: Kind::KeysMissing,
                order_ids: Vec::new(),
                detail: format!("the voucher's Redis keys are gone; not rebuilt yet: {why}"),
                repaired: false,
            });
            report.verdict = Verdict::Paused;
            return Ok(());
        }
        let orders = Self::orders(&mut *self.db.acquire().await?, voucher_id).await?;
        let live: Vec<(u64, u64)> =
            orders.iter().filter(|(_, o)| o.status.is_live()).map(|(id, o)| (o.user_id, *id)).collect();
        let stock = voucher.initial - live.len() as i64;
        let mut pipe = redis::pipe();
        pipe.atomic().del(self.kv.keys.seckill_buyers(voucher_id)).ignore();
        for (user_id, order_id) in &live {
            pipe.hset(self.kv.keys.seckill_buyers(voucher_id), user_id, format!("{order_id}:c")).ignore();
        }
        pipe.hset_multiple(
            self.kv.keys.seckill_voucher(voucher_id),
            &[
                ("stock", stock),
                ("begin_ms", voucher.begin.timestamp_millis()),
                ("end_ms", voucher.end.timestamp_millis()),
                ("pay_value", voucher.pay_value as i64),
            ],
        )
        .ignore();
        pipe.query_async::<()>(&mut self.kv.conn()).await?;
        report.redis_stock = Some(stock);
        report.live_orders = live.len() as i64;
        report.live_buyers = live.len() as i64;
        report.differences.push(Difference {
            kind: Kind::KeysMissing,
            order_ids: Vec::new(),
            detail: format!("the voucher's Redis keys were gone; rebuilt from MySQL with stock {stock}"),
            repaired: true,
        });
        tracing::warn!(voucher_id, stock, buyers = live.len(), "voucher keys rebuilt from MySQL");
        Ok(())
    }

    /// Logs, counts and stores the report.
    async fn keep(&self, report: &Report) -> Result<(), ReconcileError> {
        metrics::counter!(crate::metrics::RECONCILER_RUNS, "verdict" => report.verdict.as_str()).increment(1);
        for d in &report.differences {
            metrics::counter!(crate::metrics::RECONCILER_DIFFERENCES, "kind" => d.kind.label()).increment(1);
            if d.repaired {
                metrics::counter!(crate::metrics::RECONCILER_REPAIRS, "kind" => d.kind.label()).increment(1);
            }
            tracing::warn!(
                voucher_id = report.voucher_id, kind = d.kind.label(), repaired = d.repaired, orders = ?d.order_ids,
                detail = %d.detail, "reconciler difference"
            );
        }
        sqlx::query("REPLACE INTO reconcile_reports (voucher_id, ran_at, report) VALUES (?, ?, ?)")
            .bind(report.voucher_id)
            .bind(report.ran_at)
            .bind(serde_json::to_string(report)?)
            .execute(&self.db)
            .await?;
        Ok(())
    }
}
