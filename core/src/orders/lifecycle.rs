//! What happens to a stored order: it is paid, closed (unpaid past its
//! payment window, or by an admin), or refunded (a paid order an admin
//! closed, or a closed order whose late payment went back).
//!
//! An unpaid order's payment window is `orders.payment_timeout_secs` from
//! when it was stored (`orders.stored_at`), not from when its unit was
//! reserved: an order stored late (after an outage, or replayed from the
//! parked table) still gives its shopper the whole window.
//!
//! Invariant: a dead order gives its unit of stock back exactly once. Only a
//! move from a live status (unpaid, paid) to a dead one (closed, refunded)
//! releases, and every move is an optimistic `UPDATE ... WHERE status = <old>`:
//! of two racing moves (a payment and a close) one changes the row and the
//! other changes nothing. The move, the DB stock (`stock + 1`) and a
//! [`StockRelease`] event in the shared outbox commit in one transaction. The
//! Redis half (`stock_release.lua`) runs once per event id: right after the
//! commit ([`Lifecycle::give_back`], so the shopper may buy again at once) and
//! again when the relayed event reaches the worker, where it changes nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::outbox::{self, Envelope};
use serde::{Deserialize, Serialize};
use sqlx::{MySqlConnection, MySqlPool};

use super::{OrderError, OrderStatus};
use crate::config::OrderSettings;
use crate::ids::{OrderId, Sale, UserId, VoucherId};
use crate::kv::Kv;
use crate::seckill::scripts::{self, GiveBack};

/// The event a dead order owes: give its unit back in Redis and free its buyer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StockRelease {
    pub order_id: OrderId,
    pub user_id: UserId,
    pub voucher_id: VoucherId,
    /// The stock bucket the order's unit came from (0 for a voucher of one).
    #[serde(default)]
    pub bucket: u16,
}

impl StockRelease {
    /// The bucket the unit goes back to.
    pub fn sale(&self) -> Sale {
        Sale { voucher_id: self.voucher_id, bucket: self.bucket }
    }
}

/// A move of an order's status, each an optimistic update on `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// unpaid → paid, inside the payment window.
    Pay,
    /// unpaid → closed (an admin's close); releases stock.
    Close,
    /// unpaid → closed, only past the payment window; releases stock.
    Expire,
    /// paid → refunded (an admin closed a paid order); releases stock.
    RefundPaid,
    /// closed → refunded (a late payment went back); stock was released on close.
    RefundClosed,
}

impl Move {
    pub fn from(self) -> OrderStatus {
        match self {
            Move::Pay | Move::Close | Move::Expire => OrderStatus::Unpaid,
            Move::RefundPaid => OrderStatus::Paid,
            Move::RefundClosed => OrderStatus::Closed,
        }
    }

    pub fn to(self) -> OrderStatus {
        match self {
            Move::Pay => OrderStatus::Paid,
            Move::Close | Move::Expire => OrderStatus::Closed,
            Move::RefundPaid | Move::RefundClosed => OrderStatus::Refunded,
        }
    }

    /// True when the move takes a live order to a dead one.
    pub fn releases(self) -> bool {
        self.from().is_live() && !self.to().is_live()
    }
}

/// What a move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Moved {
    /// The row changed; `release` is the event it wrote, if it releases stock.
    Done { release: Option<Envelope<StockRelease>> },
    /// The row was not in `from` (another move won, or it is unknown): nothing changed.
    Lost,
}

/// The order lifecycle's writes. Clone freely.
#[derive(Clone)]
pub struct Lifecycle {
    db: MySqlPool,
    kv: Kv,
    release_topic: String,
    payment_timeout: Duration,
}

impl Lifecycle {
    /// Release events go to `orders.release_topic`; unpaid orders expire
    /// `orders.payment_timeout_secs` after they were stored.
    pub fn new(db: MySqlPool, kv: Kv, settings: &OrderSettings) -> Self {
        Self { db, kv, release_topic: settings.release_topic.clone(), payment_timeout: settings.payment_timeout_secs }
    }

    pub fn db(&self) -> &MySqlPool {
        &self.db
    }

    /// How long an unpaid order may be paid, from when it was stored.
    pub fn window(&self) -> Duration {
        self.payment_timeout
    }

    /// Unpaid orders stored before this are past their payment window.
    fn expiry_cutoff(&self) -> DateTime<Utc> {
        Utc::now() - self.payment_timeout
    }

    /// Applies `m` to `order_id` in its own transaction (see the module doc);
    /// a releasing move gives the unit back in Redis right after the commit.
    pub async fn apply(&self, order_id: OrderId, m: Move) -> Result<Moved, OrderError> {
        let mut tx = self.db.begin().await?;
        let moved = self.apply_in(&mut tx, order_id, m).await?;
        tx.commit().await?;
        self.settle(&moved).await;
        Ok(moved)
    }

    /// After the commit of a move made with [`Lifecycle::apply_in`]: gives
    /// its released unit back in Redis, if it released one.
    pub async fn settle(&self, moved: &Moved) {
        if let Moved::Done { release: Some(event) } = moved {
            self.give_back(&event.event_id.to_string(), &event.payload).await;
        }
    }

    /// Applies `m` inside the caller's transaction; the caller commits and
    /// then calls [`Lifecycle::settle`].
    pub async fn apply_in(&self, tx: &mut MySqlConnection, order_id: OrderId, m: Move) -> Result<Moved, OrderError> {
        // Paying needs the window open, expiring needs it closed; the other
        // moves ignore it.
        let (set, window) = match m {
            Move::Pay => ("paid_at = CURRENT_TIMESTAMP(3)", " AND stored_at > ?"),
            Move::Expire => ("closed_at = COALESCE(closed_at, CURRENT_TIMESTAMP(3))", " AND stored_at <= ?"),
            _ => ("closed_at = COALESCE(closed_at, CURRENT_TIMESTAMP(3))", ""),
        };
        let sql = format!("UPDATE orders SET status = ?, {set} WHERE id = ? AND status = ?{window}");
        let mut update = sqlx::query(&sql).bind(m.to().as_str()).bind(order_id).bind(m.from().as_str());
        if !window.is_empty() {
            update = update.bind(self.expiry_cutoff());
        }
        let changed = update.execute(&mut *tx).await?.rows_affected();
        if changed == 0 {
            return Ok(Moved::Lost);
        }
        if !m.releases() {
            return Ok(Moved::Done { release: None });
        }
        let (user_id, voucher_id, bucket): (UserId, VoucherId, u16) =
            sqlx::query_as("SELECT user_id, voucher_id, bucket FROM orders WHERE id = ?")
                .bind(order_id)
                .fetch_one(&mut *tx)
                .await?;
        sqlx::query("UPDATE seckill_vouchers SET stock = stock + 1 WHERE voucher_id = ?")
            .bind(voucher_id)
            .execute(&mut *tx)
            .await?;
        let payload = StockRelease { order_id, user_id, voucher_id, bucket };
        let event_id = outbox::enqueue(&mut *tx, &self.release_topic, &order_id.to_string(), &payload).await?;
        Ok(Moved::Done { release: Some(Envelope { event_id, payload }) })
    }

    /// The Redis half of a release, once per `event` (best effort here: the
    /// relayed event applies it if this call fails).
    pub async fn give_back(&self, event: &str, release: &StockRelease) -> Option<GiveBack> {
        let StockRelease { order_id, user_id, .. } = *release;
        match scripts::give_back(&self.kv, event, release.sale(), user_id, order_id).await {
            Ok(outcome) => Some(outcome),
            Err(err) => {
                tracing::warn!(%order_id, error = %err, "stock not given back in Redis yet; the release event will");
                None
            }
        }
    }

    /// Up to `limit` unpaid orders past their payment window, oldest first
    /// (read by the `(status, stored_at)` index).
    pub async fn expired(&self, limit: u32) -> Result<Vec<OrderId>, OrderError> {
        let rows: Vec<(OrderId,)> = sqlx::query_as(
            "SELECT id FROM orders FORCE INDEX (idx_orders_status_stored) \
             WHERE status = ? AND stored_at <= ? ORDER BY stored_at LIMIT ?",
        )
        .bind(OrderStatus::Unpaid.as_str())
        .bind(self.expiry_cutoff())
        .bind(limit)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }
}
