//! The life of an order, as one enum: `queued` (accepted in Redis, not yet in
//! MySQL), then MySQL's `status` column: `unpaid`, `paid`, `closed`,
//! `refunded` (the column's CHECK constraint lists the same four).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatus {
    /// Accepted; the worker has not stored it yet (never in MySQL).
    Queued,
    Unpaid,
    Paid,
    Closed,
    Refunded,
}

impl OrderStatus {
    /// The `orders.status` value (and the API's).
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Queued => "queued",
            OrderStatus::Unpaid => "unpaid",
            OrderStatus::Paid => "paid",
            OrderStatus::Closed => "closed",
            OrderStatus::Refunded => "refunded",
        }
    }

    /// True while the order holds its unit of stock (the buyer's one order).
    pub fn is_live(self) -> bool {
        matches!(self, OrderStatus::Queued | OrderStatus::Unpaid | OrderStatus::Paid)
    }

    /// A stored `orders.status` value; `None` for anything else.
    pub fn from_column(raw: &str) -> Option<Self> {
        Some(match raw {
            "unpaid" => OrderStatus::Unpaid,
            "paid" => OrderStatus::Paid,
            "closed" => OrderStatus::Closed,
            "refunded" => OrderStatus::Refunded,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_statuses_round_trip_and_queued_is_never_stored() {
        for s in [OrderStatus::Unpaid, OrderStatus::Paid, OrderStatus::Closed, OrderStatus::Refunded] {
            assert_eq!(OrderStatus::from_column(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(OrderStatus::from_column("queued"), None);
    }
}
