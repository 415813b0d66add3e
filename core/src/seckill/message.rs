//! What an accepted seckill hands on: the order message the API publishes
//! on the order topic, and the marker that shows the order as `queued` to
//! its owner until the worker stores it.

use serde::{Deserialize, Serialize};

use crate::ids::{OrderId, Sale, UserId, VoucherId};

/// The body of an order message on the order topic (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderMessage {
    pub order_id: OrderId,
    pub user_id: UserId,
    pub voucher_id: VoucherId,
    /// The stock bucket the unit was reserved in (0 for a voucher of one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bucket: u16,
    /// Cents.
    pub pay_amount: u64,
    pub created_at_ms: u64,
    /// The HTTP request that created the order, for tracing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl OrderMessage {
    /// The bucket whose sale state holds the order's reservation.
    pub fn sale(&self) -> Sale {
        Sale { voucher_id: self.voucher_id, bucket: self.bucket }
    }
}

fn is_zero(bucket: &u16) -> bool {
    *bucket == 0
}

/// The marker of an accepted order the worker has not stored yet (kept in
/// Redis under `Keys::pending_order`), so its owner can read it as `queued`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingOrder {
    pub user_id: UserId,
    pub voucher_id: VoucherId,
    pub bucket: u16,
}

impl PendingOrder {
    /// `<user id>:<voucher id>`, then `:<bucket>` unless it is 0.
    pub fn encode(&self) -> String {
        match self.bucket {
            0 => format!("{}:{}", self.user_id, self.voucher_id),
            b => format!("{}:{}:{b}", self.user_id, self.voucher_id),
        }
    }

    pub fn decode(raw: &str) -> Option<Self> {
        let mut parts = raw.split(':');
        let (user, voucher) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
        let bucket = parts.next().map_or(Some(0), |b| b.parse().ok())?;
        parts.next().is_none().then_some(Self { user_id: user, voucher_id: voucher, bucket })
    }

    /// The bucket whose sale state holds the reservation.
    pub fn sale(&self) -> Sale {
        Sale { voucher_id: self.voucher_id, bucket: self.bucket }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_marker_reads_back_what_it_wrote_with_or_without_a_bucket() {
        for bucket in [0, 3] {
            let p = PendingOrder { user_id: UserId(7), voucher_id: VoucherId(9), bucket };
            assert_eq!(PendingOrder::decode(&p.encode()), Some(p));
        }
        assert_eq!(PendingOrder { user_id: UserId(7), voucher_id: VoucherId(9), bucket: 0 }.encode(), "7:9");
        for raw in ["", "7", "7:x", "7:9:x", "7:9:1:2"] {
            assert_eq!(PendingOrder::decode(raw), None, "{raw:?}");
        }
    }
}
