//! The seckill rules: one call decides a shopper's request for a coupon.
//!
//! 1. Voucher metadata comes from the in-process cache (never MySQL).
//! 2. `seckill.lua` checks the sale window, stock and one-order-per-user and
//!    reserves a unit for a fresh order id, atomically, in Redis.
//! 3. The order message goes to RocketMQ through the batching publisher.
//! 4. If the broker refuses or times out, `seckill_release.lua` gives the
//!    unit back, but only while the reservation is still unconfirmed: if the
//!    worker already confirmed it (the batch reached the broker after all),
//!    the order stands and the shopper is told so.
//!
//! Steps 2 to 4 run in their own task, so a shopper who hangs up cannot
//! leave a reservation without its message.
//!
//! Open window: if the process dies between steps 2 and 3 (or the release
//! itself fails), Redis holds a reservation that no message carries. The
//! reconciler (a later issue) closes it: it compares each voucher's buyers in
//! Redis with the orders in MySQL and releases reservations that never became
//! orders after a grace period.

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands;

use crate::ids::OrderIds;
use crate::kv::scripts::{self, Reserve};
use crate::kv::Kv;
use crate::mq::publisher::{BatchPublisher, PublishError};
use crate::orders::OrderMessage;
use crate::vouchers::Vouchers;

/// A request that won: the order id, now queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    pub order_id: u64,
}

/// Every way a seckill request can fail.
#[derive(Debug, thiserror::Error)]
pub enum SeckillError {
    #[error("the voucher is sold out")]
    SoldOut,
    #[error("this user already bought this voucher")]
    AlreadyBought,
    #[error("the sale has not started")]
    NotStarted,
    #[error("the sale has ended")]
    Ended,
    #[error("no such seckill voucher")]
    UnknownVoucher,
    #[error("the order queue is unavailable")]
    QueueUnavailable(#[source] PublishError),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// Every outcome label [`Seckill::attempt`] records.
pub const OUTCOMES: [&str; 8] =
    ["accepted", "sold_out", "already_bought", "not_started", "ended", "unknown_voucher", "publish_failed", "error"];

impl SeckillError {
    /// A stable label for metrics and logs.
    pub fn outcome(&self) -> &'static str {
        match self {
            SeckillError::SoldOut => "sold_out",
            SeckillError::AlreadyBought => "already_bought",
            SeckillError::NotStarted => "not_started",
            SeckillError::Ended => "ended",
            SeckillError::UnknownVoucher => "unknown_voucher",
            SeckillError::QueueUnavailable(_) => "publish_failed",
            SeckillError::Redis(_) => "error",
        }
    }
}

/// The seckill service; share it behind an `Arc`.
pub struct Seckill {
    /// Vouchers Redis recently called sold out (see `SeckillSettings`).
    sold_out: Option<moka::sync::Cache<u64, ()>>,
    kv: Kv,
    vouchers: Vouchers,
    ids: Arc<OrderIds>,
    publisher: BatchPublisher,
    pending_ttl: Duration,
}

impl Seckill {
    pub fn new(
        kv: Kv,
        vouchers: Vouchers,
        ids: Arc<OrderIds>,
        publisher: BatchPublisher,
        pending_ttl: Duration,
        sold_out_for: Duration,
    ) -> Self {
        for outcome in OUTCOMES {
            metrics::counter!(crate::metrics::SECKILL_REQUESTS, "outcome" => outcome).increment(0);
        }
        let sold_out = (!sold_out_for.is_zero())
            .then(|| moka::sync::Cache::builder().max_capacity(100_000).time_to_live(sold_out_for).build());
        Self { sold_out, kv, vouchers, ids, publisher, pending_ttl }
    }

    /// Tries to win voucher `voucher_id` for `user_id` (see the module doc),
    /// counting the outcome in `cityhub_seckill_requests_total`.
    pub async fn attempt(
        self: &Arc<Self>,
        user_id: u64,
        voucher_id: u64,
        request_id: Option<String>,
    ) -> Result<Accepted, SeckillError> {
        let outcome = if self.sold_out.as_ref().is_some_and(|c| c.contains_key(&voucher_id)) {
            Err(SeckillError::SoldOut)
        } else {
            // A shopper hanging up cannot stop it between the reservation
            // and the publish or the release.
            let this = Arc::clone(self);
            crate::run_to_completion(async move { this.decide(user_id, voucher_id, request_id).await }).await
        };
        let label = outcome.as_ref().map_or_else(SeckillError::outcome, |_| "accepted");
        metrics::counter!(crate::metrics::SECKILL_REQUESTS, "outcome" => label).increment(1);
        outcome
    }

    async fn decide(
        &self,
        user_id: u64,
        voucher_id: u64,
        request_id: Option<String>,
    ) -> Result<Accepted, SeckillError> {
        let meta = self
            .vouchers
            .meta(voucher_id)
            .await
            .map_err(|e| SeckillError::Redis(Arc::unwrap_or_clone(e)))?
            .ok_or(SeckillError::UnknownVoucher)?;
        let order_id = self.ids.next_id();
        match scripts::reserve(&self.kv, voucher_id, user_id, order_id).await? {
            Reserve::Accepted => {}
            Reserve::SoldOut => {
                if let Some(c) = &self.sold_out {
                    c.insert(voucher_id, ());
                }
                return Err(SeckillError::SoldOut);
            }
            Reserve::AlreadyBought => return Err(SeckillError::AlreadyBought),
            Reserve::NotStarted => return Err(SeckillError::NotStarted),
            Reserve::Ended => return Err(SeckillError::Ended),
            Reserve::UnknownVoucher => return Err(SeckillError::UnknownVoucher),
        }
        // From here to the publish is the window the module doc describes.
        let message = OrderMessage {
            order_id,
            user_id,
            voucher_id,
            pay_amount: meta.pay_value,
            created_at_ms: crate::ids::issued_at_ms(order_id),
            request_id,
        };
        let body = serde_json::to_vec(&message).expect("order message serializes");
        let pending_key = self.kv.keys.pending_order(order_id);
        let mut conn = self.kv.conn();
        let mark_pending =
            conn.set_ex::<_, _, ()>(&pending_key, format!("{user_id}:{voucher_id}"), self.pending_ttl.as_secs());
        let (marked, published) = tokio::join!(mark_pending, self.publisher.publish(order_id.to_string(), body));
        if let Err(err) = marked {
            tracing::warn!(order_id, error = %err, "cannot mark order as queued");
        }
        match published {
            Ok(()) => Ok(Accepted { order_id }),
            Err(err) => {
                if scripts::release(&self.kv, voucher_id, user_id, order_id).await? {
                    let _: Result<(), _> = self.kv.conn().del(&pending_key).await;
                    Err(SeckillError::QueueUnavailable(err))
                } else {
                    tracing::info!(order_id, error = %err, "publish reported failure but the worker confirmed the order");
                    Ok(Accepted { order_id })
                }
            }
        }
    }
}
