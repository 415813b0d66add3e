//! Payments: a shopper starts paying an order ([`Payments::start`]); the
//! provider ([`provider`]) reports through a signed callback
//! ([`Payments::verify`], then [`Payments::apply`]); an admin closes an
//! order, refunding it first if it was paid ([`Payments::close`]).
//!
//! Rules:
//! - A callback is applied once: its transaction id is the `payments` key,
//!   inserted in the same transaction as the order's move, so a second
//!   delivery finds it and changes nothing.
//! - Paid is the optimistic move unpaid → paid (see
//!   [`lifecycle`](crate::orders::lifecycle)); a payment that loses (the
//!   order was closed, is past its timeout, or was paid by another payment)
//!   never forces the order to paid, which would sell its unit twice: the
//!   money is refunded, and a closed order becomes `refunded`.
//! - A payment for an order accepted in Redis but not yet stored (the worker
//!   lags) stores it as paid, under the same guards as the worker's insert
//!   (confirmed reservation, DB stock, one live order per buyer); the
//!   worker's later insert of the same id changes nothing.

pub mod provider;
pub mod signature;

use std::sync::Arc;

use redis::AsyncCommands;
use sqlx::MySqlConnection;

pub use provider::{Callback, ChargeResult, Provider};

use crate::kv::{CityKeys, Kv};
use crate::orders::lifecycle::{Lifecycle, Move, Moved};
use crate::orders::store::{self, StoreError};
use crate::orders::{find_for_user, OrderError, OrderMessage, OrderStatus, PendingOrder};
use crate::seckill::scripts::{self, Confirm};
use crate::vouchers::Vouchers;

/// A payment's state, the `payments.status` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentStatus {
    /// The provider could not charge.
    Failed,
    /// It paid its order.
    Paid,
    /// It lost to a close or another payment; the refund is under way.
    Refunding,
    Refunded,
}

impl PaymentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Failed => "failed",
            PaymentStatus::Paid => "paid",
            PaymentStatus::Refunding => "refunding",
            PaymentStatus::Refunded => "refunded",
        }
    }
}

/// A payment that was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub order_id: u64,
    pub txn_id: String,
    pub amount: u64,
}

/// What a callback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The order is paid.
    Paid,
    /// The provider could not charge; the order is unchanged.
    Failed,
    /// This transaction was applied before: nothing changed.
    Duplicate,
    /// The order could not take the payment; the money went back.
    Refunded,
}

impl Applied {
    pub fn as_str(self) -> &'static str {
        match self {
            Applied::Paid => "paid",
            Applied::Failed => "failed",
            Applied::Duplicate => "duplicate",
            Applied::Refunded => "refunded",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PayError {
    #[error("no such order")]
    NotFound,
    #[error("the order is {} and cannot be paid", .0.as_str())]
    NotPayable(OrderStatus),
    #[error("the order is not stored yet; try again shortly")]
    NotStoredYet,
    #[error("the callback signature is missing or wrong")]
    BadSignature,
    #[error("the callback body is invalid: {0}")]
    InvalidCallback(String),
    #[error(transparent)]
    Order(#[from] OrderError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Cache(#[from] cityhub_platform::cache::CacheError),
}

/// The payment service. Clone freely.
#[derive(Clone)]
pub struct Payments {
    lifecycle: Lifecycle,
    kv: Kv,
    vouchers: Vouchers,
    provider: Arc<Provider>,
    secret: Arc<[u8]>,
}

/// Inserts the payment row; false when the transaction id is known already
/// (a plain insert: `ON DUPLICATE KEY UPDATE` cannot tell, as the driver
/// counts found rows as affected).
async fn record(tx: &mut MySqlConnection, cb: &Callback, status: PaymentStatus) -> Result<bool, sqlx::Error> {
    let inserted = sqlx::query("INSERT INTO payments (txn_id, order_id, amount, status) VALUES (?, ?, ?, ?)")
        .bind(&cb.txn_id)
        .bind(cb.order_id)
        .bind(cb.amount)
        .bind(status.as_str())
        .execute(&mut *tx)
        .await;
    match inserted {
        Ok(_) => Ok(true),
        Err(err) if cityhub_platform::db::violated_unique_key(&err).as_deref() == Some("PRIMARY") => Ok(false),
        Err(err) => Err(err),
    }
}

async fn order_status(db: impl sqlx::MySqlExecutor<'_>, order_id: u64) -> Result<Option<OrderStatus>, OrderError> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT status FROM orders WHERE id = ?").bind(order_id).fetch_optional(db).await?;
    row.map(|(s,)| OrderStatus::from_column(&s).ok_or(OrderError::CorruptStatus(order_id, s))).transpose()
}

impl Payments {
    pub fn new(lifecycle: Lifecycle, kv: Kv, vouchers: Vouchers, provider: Arc<Provider>, secret: &[u8]) -> Self {
        Self { lifecycle, kv, vouchers, provider, secret: secret.into() }
    }

    pub fn provider(&self) -> &Arc<Provider> {
        &self.provider
    }

    /// Unpaid orders created before this are past the payment timeout.
    pub fn expiry_cutoff(&self) -> chrono::DateTime<chrono::Utc> {
        self.lifecycle.expiry_cutoff()
    }

    /// Starts paying `order_id` for its owner `user_id`: a stored unpaid
    /// order within its timeout, or one still queued.
    pub async fn start(&self, user_id: u64, order_id: u64) -> Result<Started, PayError> {
        let cutoff = self.lifecycle.expiry_cutoff();
        let view =
            find_for_user(self.lifecycle.db(), &self.kv, cutoff, order_id, user_id).await?.ok_or(PayError::NotFound)?;
        let amount = match view.status {
            OrderStatus::Unpaid => view.pay_amount.unwrap_or_default(),
            OrderStatus::Queued if self.issued_before_cutoff(order_id) => {
                return Err(PayError::NotPayable(OrderStatus::Closed))
            }
            OrderStatus::Queued => self.price(view.voucher_id).await?.ok_or(PayError::NotFound)?,
            other => return Err(PayError::NotPayable(other)),
        };
        let txn_id = self.provider.charge(order_id, amount);
        tracing::info!(order_id, %txn_id, amount, "payment started");
        Ok(Started { order_id, txn_id, amount })
    }

    fn issued_before_cutoff(&self, order_id: u64) -> bool {
        let issued = cityhub_platform::ids::issued_at_ms(order_id) as i64;
        issued <= self.lifecycle.expiry_cutoff().timestamp_millis()
    }

    async fn price(&self, voucher_id: u64) -> Result<Option<u64>, PayError> {
        Ok(self.vouchers.details(voucher_id).await?.map(|d| d.pay_value))
    }

    /// The callback in `body` if `signature` signs exactly these bytes.
    pub fn verify(&self, body: &[u8], signature: Option<&[u8]>) -> Result<Callback, PayError> {
        if !signature::verify(&self.secret, body, signature) {
            return Err(PayError::BadSignature);
        }
        let cb: Callback = serde_json::from_slice(body).map_err(|e| PayError::InvalidCallback(e.to_string()))?;
        if cb.txn_id.is_empty() || cb.txn_id.len() > 64 {
            return Err(PayError::InvalidCallback("txn_id must be 1 to 64 characters".into()));
        }
        Ok(cb)
    }

    /// Applies a verified callback (see the module doc).
    pub async fn apply(&self, cb: &Callback) -> Result<Applied, PayError> {
        if cb.result == ChargeResult::Failed {
            let mut tx = self.lifecycle.db().begin().await?;
            let new = record(&mut tx, cb, PaymentStatus::Failed).await?;
            tx.commit().await?;
            return Ok(if new { Applied::Failed } else { Applied::Duplicate });
        }
        // Twice at most: a worker storing the order between our read and our
        // insert sends us back to the stored-order path.
        for _ in 0..2 {
            let mut tx = self.lifecycle.db().begin().await?;
            if !record(&mut tx, cb, PaymentStatus::Paid).await? {
                return Ok(Applied::Duplicate);
            }
            if let Moved::Done { .. } = self.lifecycle.apply_in(&mut tx, cb.order_id, Move::Pay).await? {
                tx.commit().await?;
                tracing::info!(order_id = cb.order_id, txn_id = %cb.txn_id, "order paid");
                return Ok(Applied::Paid);
            }
            if order_status(&mut *tx, cb.order_id).await?.is_some() {
                drop(tx);
                return self.lose(cb).await;
            }
            match self.store_paid(&mut tx, cb).await? {
                StorePaid::Stored => {
                    tx.commit().await?;
                    tracing::info!(order_id = cb.order_id, txn_id = %cb.txn_id, "queued order stored as paid");
                    return Ok(Applied::Paid);
                }
                StorePaid::StoredMeanwhile => continue,
                StorePaid::Refused => {
                    drop(tx);
                    return self.lose(cb).await;
                }
            }
        }
        self.lose(cb).await
    }

    /// Stores a queued order as paid inside `tx`, under the worker's guards.
    async fn store_paid(&self, tx: &mut MySqlConnection, cb: &Callback) -> Result<StorePaid, PayError> {
        let raw: Option<String> = self.kv.conn().get(self.kv.keys.pending_order(cb.order_id)).await?;
        let Some(pending) = raw.as_deref().and_then(PendingOrder::decode) else {
            return Ok(StorePaid::Refused);
        };
        if self.issued_before_cutoff(cb.order_id) {
            return Ok(StorePaid::Refused);
        }
        let PendingOrder { user_id, voucher_id } = pending;
        let state = scripts::confirm(&self.kv, voucher_id, &[(user_id, cb.order_id)]).await?;
        let state = state.first().copied().unwrap_or(Confirm::Unknown);
        if !matches!(state, Confirm::Confirmed | Confirm::Unknown) {
            return Ok(StorePaid::Refused);
        }
        let message = OrderMessage {
            order_id: cb.order_id,
            user_id,
            voucher_id,
            pay_amount: self.price(voucher_id).await?.unwrap_or(cb.amount),
            created_at_ms: cityhub_platform::ids::issued_at_ms(cb.order_id),
            request_id: None,
        };
        match store::store_in(tx, std::slice::from_ref(&message), OrderStatus::Paid).await {
            Ok(stored) if stored.inserted.contains(&cb.order_id) => {
                if state == Confirm::Unknown {
                    scripts::restore(&self.kv, voucher_id, &[(user_id, cb.order_id)]).await?;
                }
                Ok(StorePaid::Stored)
            }
            Ok(stored) if stored.duplicates > 0 => Ok(StorePaid::StoredMeanwhile),
            Ok(_) => Ok(StorePaid::Refused),
            Err(StoreError::Db(err))
                if cityhub_platform::db::violated_unique_key(&err).as_deref() == Some("PRIMARY") =>
            {
                Ok(StorePaid::StoredMeanwhile)
            }
            Err(StoreError::Db(err)) => Err(PayError::Db(err)),
            Err(refusal) => {
                tracing::warn!(order_id = cb.order_id, error = %refusal, "a paid queued order cannot be stored");
                Ok(StorePaid::Refused)
            }
        }
    }

    /// The payment lost: record it as refunding, close its order if it is
    /// unpaid past the timeout, refund, and mark a closed order refunded.
    async fn lose(&self, cb: &Callback) -> Result<Applied, PayError> {
        let mut tx = self.lifecycle.db().begin().await?;
        if !record(&mut tx, cb, PaymentStatus::Refunding).await? {
            return Ok(Applied::Duplicate);
        }
        tx.commit().await?;
        if order_status(self.lifecycle.db(), cb.order_id).await? == Some(OrderStatus::Unpaid) {
            self.lifecycle.apply(cb.order_id, Move::Close).await?;
        }
        self.refund(&cb.txn_id, cb.order_id, Move::RefundClosed).await?;
        tracing::info!(order_id = cb.order_id, txn_id = %cb.txn_id, "late or second payment refunded");
        Ok(Applied::Refunded)
    }

    /// Refunds `txn_id` through the provider, then marks it refunded and
    /// applies `m` to its order in one transaction.
    async fn refund(&self, txn_id: &str, order_id: u64, m: Move) -> Result<Moved, PayError> {
        let refund_id = self.provider.refund(txn_id).await;
        let mut tx = self.lifecycle.db().begin().await?;
        sqlx::query("UPDATE payments SET status = ? WHERE txn_id = ?")
            .bind(PaymentStatus::Refunded.as_str())
            .bind(txn_id)
            .execute(&mut *tx)
            .await?;
        let moved = self.lifecycle.apply_in(&mut tx, order_id, m).await?;
        tx.commit().await?;
        self.lifecycle.settle(&moved).await;
        tracing::info!(order_id, %txn_id, %refund_id, "payment refunded");
        Ok(moved)
    }

    /// Closes `order_id` for an admin: an unpaid order is closed, a paid one
    /// refunded (which closes it); a closed or refunded order is left as it
    /// is. Answers the order's final status; its stock is released once.
    pub async fn close(&self, order_id: u64) -> Result<OrderStatus, PayError> {
        // A payment may win between the read and the move: read again.
        for _ in 0..3 {
            let status = match order_status(self.lifecycle.db(), order_id).await? {
                Some(status) => status,
                None => {
                    let pending: Option<String> = self.kv.conn().get(self.kv.keys.pending_order(order_id)).await?;
                    return Err(if pending.is_some() { PayError::NotStoredYet } else { PayError::NotFound });
                }
            };
            let moved = match status {
                OrderStatus::Unpaid => self.lifecycle.apply(order_id, Move::Close).await?,
                OrderStatus::Paid => {
                    let txn: Option<(String,)> =
                        sqlx::query_as("SELECT txn_id FROM payments WHERE order_id = ? AND status = ? LIMIT 1")
                            .bind(order_id)
                            .bind(PaymentStatus::Paid.as_str())
                            .fetch_optional(self.lifecycle.db())
                            .await?;
                    match txn {
                        Some((txn_id,)) => self.refund(&txn_id, order_id, Move::RefundPaid).await?,
                        None => self.lifecycle.apply(order_id, Move::RefundPaid).await?,
                    }
                }
                done => return Ok(done),
            };
            if let Moved::Done { .. } = moved {
                tracing::info!(order_id, from = status.as_str(), "order closed by an admin");
            }
        }
        order_status(self.lifecycle.db(), order_id).await?.ok_or(PayError::NotFound)
    }
}

/// How storing a queued order as paid went.
enum StorePaid {
    Stored,
    /// The worker stored it first: pay it as a stored order.
    StoredMeanwhile,
    /// Its reservation was released or a guard refused it: refund.
    Refused,
}
