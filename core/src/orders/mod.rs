//! Orders: the owner-only read model, the intake rules of the order worker
//! ([`intake`]), its idempotent batch writer ([`store`]) and the lifecycle.
//! The message they start from is the seckill's
//! ([`OrderMessage`](crate::seckill::OrderMessage)).
//!
//! An order is `queued` from the moment Redis accepted it until the worker
//! stores it; from then on MySQL's `status` is the truth, moved by
//! [`lifecycle`]. An unpaid order past the payment timeout reads as `closed`
//! even before the close job has closed it (and cannot be paid).

pub mod intake;
pub mod lifecycle;
pub mod status;
pub mod store;

pub use status::OrderStatus;

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use redis::AsyncCommands;
use serde::Serialize;
use sqlx::MySqlPool;

use crate::ids::{OrderId, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::seckill::PendingOrder;

/// Why the order worker parks an order message instead of storing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not an order message.
    Unparsable,
    /// Its reservation was revoked: the shopper was told 503.
    Revoked,
    /// The buyer holds another order of the voucher.
    Superseded,
    /// MySQL's stock guard refused it.
    StockExhausted,
    /// MySQL's one-order-per-user key refused it.
    DuplicateBuyer,
    /// The voucher has no seckill row.
    UnknownVoucher,
    /// Its order id is stored for another user or voucher.
    IdConflict,
    /// It kept failing until its last delivery.
    GaveUp,
}

impl Refusal {
    pub const ALL: [Refusal; 8] = [
        Refusal::Unparsable,
        Refusal::Revoked,
        Refusal::Superseded,
        Refusal::StockExhausted,
        Refusal::DuplicateBuyer,
        Refusal::UnknownVoucher,
        Refusal::IdConflict,
        Refusal::GaveUp,
    ];

    /// The `kind` column and metric label.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Unparsable => "unparsable",
            Refusal::Revoked => "revoked",
            Refusal::Superseded => "superseded",
            Refusal::StockExhausted => "stock_exhausted",
            Refusal::DuplicateBuyer => "duplicate_buyer",
            Refusal::UnknownVoucher => "unknown_voucher",
            Refusal::IdConflict => "id_conflict",
            Refusal::GaveUp => "gave_up",
        }
    }

    /// True when the order's shopper had been told 202: parking it breaks
    /// the promise that an accepted order is stored, so it is alerted on.
    pub fn had_202(self) -> bool {
        !matches!(self, Refusal::Unparsable | Refusal::Revoked)
    }
}

impl From<&store::StoreError> for Refusal {
    fn from(err: &store::StoreError) -> Self {
        match err {
            store::StoreError::StockExhausted(_) => Refusal::StockExhausted,
            store::StoreError::DuplicateBuyer => Refusal::DuplicateBuyer,
            store::StoreError::UnknownVoucher(_) => Refusal::UnknownVoucher,
            store::StoreError::Db(_) => Refusal::GaveUp,
        }
    }
}

/// An order as its owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderView {
    pub order_id: OrderId,
    pub voucher_id: VoucherId,
    pub status: OrderStatus,
    pub pay_amount: Option<u64>,
    pub created_at: Option<DateTime<Utc>>,
    /// When an unpaid order's payment window ends (its storing time plus the
    /// payment timeout).
    pub pay_by: Option<DateTime<Utc>>,
}

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Outbox(#[from] cityhub_platform::outbox::OutboxError),
    #[error("order {0} has an unknown status {1:?}")]
    CorruptStatus(OrderId, String),
}

/// A stored order's columns after `first` (its id when listing, its owner
/// when one order is looked up): voucher, status, amount, creation, storing.
type OrderRow<First> = (First, VoucherId, String, u64, DateTime<Utc>, DateTime<Utc>);

/// A page of `user_id`'s stored orders, newest first (order ids are
/// time-ordered), those older than `before` when given. Orders still queued
/// are not listed; `GET /orders/{id}` shows them.
pub async fn list_for_user(
    db: &MySqlPool,
    window: Duration,
    user_id: UserId,
    before: Option<OrderId>,
    limit: u32,
) -> Result<Vec<OrderView>, OrderError> {
    let rows: Vec<OrderRow<OrderId>> = sqlx::query_as(
        "SELECT id, voucher_id, status, pay_amount, created_at, stored_at FROM orders \
         WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    )
    .bind(user_id)
    .bind(before.unwrap_or(OrderId(u64::MAX)))
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(order_id, voucher_id, status, pay_amount, created_at, stored_at)| {
            stored_view(order_id, voucher_id, status, pay_amount, created_at, ends(stored_at, window))
        })
        .collect()
}

/// When a window of length `window` opened at `from` ends.
fn ends(from: DateTime<Utc>, window: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(window).ok().and_then(|w| from.checked_add_signed(w)).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A stored order's view; a status the enum does not know is corruption.
/// An unpaid order past `pay_by` is shown closed.
fn stored_view(
    order_id: OrderId,
    voucher_id: VoucherId,
    status: String,
    pay_amount: u64,
    created_at: DateTime<Utc>,
    pay_by: DateTime<Utc>,
) -> Result<OrderView, OrderError> {
    let status = match OrderStatus::from_column(&status).ok_or(OrderError::CorruptStatus(order_id, status))? {
        OrderStatus::Unpaid if pay_by <= Utc::now() => OrderStatus::Closed,
        status => status,
    };
    let pay_by = (status == OrderStatus::Unpaid).then_some(pay_by);
    Ok(OrderView { order_id, voucher_id, status, pay_amount: Some(pay_amount), created_at: Some(created_at), pay_by })
}

/// The order `order_id` if `user_id` owns it: from MySQL once stored, else
/// `queued` while the API's pending marker lives. `None` for unknown orders
/// and for other users' orders alike, so ids cannot be probed.
pub async fn find_for_user(
    db: &MySqlPool,
    kv: &Kv,
    window: Duration,
    order_id: OrderId,
    user_id: UserId,
) -> Result<Option<OrderView>, OrderError> {
    let row: Option<OrderRow<UserId>> = sqlx::query_as(
        "SELECT user_id, voucher_id, status, pay_amount, created_at, stored_at FROM orders WHERE id = ?",
    )
    .bind(order_id)
    .fetch_optional(db)
    .await?;
    if let Some((owner, voucher_id, status, pay_amount, created_at, stored_at)) = row {
        let view = stored_view(order_id, voucher_id, status, pay_amount, created_at, ends(stored_at, window))?;
        return Ok((owner == user_id).then_some(view));
    }
    let pending: Option<String> = kv.conn().get(kv.keys.pending_order(order_id)).await?;
    Ok(pending.as_deref().and_then(PendingOrder::decode).filter(|p| p.user_id == user_id).map(|p| OrderView {
        order_id,
        voucher_id: p.voucher_id,
        status: OrderStatus::Queued,
        pay_amount: None,
        created_at: None,
        pay_by: None,
    }))
}
