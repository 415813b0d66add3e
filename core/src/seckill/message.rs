//! What an accepted seckill hands on: the order message the API publishes
//! on the order topic, and the marker that shows the order as `queued` to
//! its owner until the worker stores it.

use serde::{Deserialize, Serialize};

use crate::ids::{OrderId, UserId, VoucherId};

/// The body of an order message on the order topic (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderMessage {
    pub order_id: OrderId,
    pub user_id: UserId,
    pub voucher_id: VoucherId,
    /// Cents.
    pub pay_amount: u64,
    pub created_at_ms: u64,
    /// The HTTP request that created the order, for tracing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The marker of an accepted order the worker has not stored yet (kept in
/// Redis under `Keys::pending_order`), so its owner can read it as `queued`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingOrder {
    pub user_id: UserId,
    pub voucher_id: VoucherId,
}

impl PendingOrder {
    /// `<user id>:<voucher id>`.
    pub fn encode(&self) -> String {
        format!("{}:{}", self.user_id, self.voucher_id)
    }

    pub fn decode(raw: &str) -> Option<Self> {
        let (user, voucher) = raw.split_once(':')?;
        Some(Self { user_id: user.parse().ok()?, voucher_id: voucher.parse().ok()? })
    }
}
