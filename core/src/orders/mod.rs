//! Orders: the message the API publishes for each accepted seckill, the
//! owner-only read model, and ([`store`]) the idempotent batch writer the
//! order worker uses.
//!
//! An order is `queued` from the moment Redis accepted it until the worker
//! stores it; from then on MySQL's `status` is the truth.

pub mod store;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::kv::Kv;

/// The body of an order message on the order topic (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderMessage {
    pub order_id: u64,
    pub user_id: u64,
    pub voucher_id: u64,
    /// Cents.
    pub pay_amount: u64,
    pub created_at_ms: u64,
    /// The HTTP request that created the order, for tracing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// An order as its owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderView {
    pub order_id: u64,
    pub voucher_id: u64,
    /// `queued`, then `unpaid`, `paid`, `closed` or `refunded`.
    pub status: String,
    pub pay_amount: Option<u64>,
    pub created_at: Option<DateTime<Utc>>,
}

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

type OrderRow = (u64, u64, String, u64, DateTime<Utc>);

/// The order `order_id` if `user_id` owns it: from MySQL once stored, else
/// `queued` while the API's pending marker lives. `None` for unknown orders
/// and for other users' orders alike, so ids cannot be probed.
pub async fn find_for_user(
    db: &MySqlPool,
    kv: &Kv,
    order_id: u64,
    user_id: u64,
) -> Result<Option<OrderView>, OrderError> {
    let row: Option<OrderRow> =
        sqlx::query_as("SELECT user_id, voucher_id, status, pay_amount, created_at FROM orders WHERE id = ?")
            .bind(order_id)
            .fetch_optional(db)
            .await?;
    if let Some((owner, voucher_id, status, pay_amount, created_at)) = row {
        return Ok((owner == user_id).then_some(OrderView {
            order_id,
            voucher_id,
            status,
            pay_amount: Some(pay_amount),
            created_at: Some(created_at),
        }));
    }
    let pending: Option<String> = kv.conn().get(kv.keys.pending_order(order_id)).await?;
    Ok(pending.and_then(|p| {
        let (owner, voucher) = p.split_once(':')?;
        (owner.parse() == Ok(user_id)).then_some(OrderView {
            order_id,
            voucher_id: voucher.parse().ok()?,
            status: "queued".into(),
            pay_amount: None,
            created_at: None,
        })
    }))
}
