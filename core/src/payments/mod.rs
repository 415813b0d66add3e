//! Payments: a shopper starts paying an order ([`Payments::start`], which
//! records the payment as `started`); the provider reports through a signed
//! callback ([`Payments::verify`], then [`Payments::apply`]); an admin closes
//! an order, refunding it first if it was paid ([`Payments::close`]); the
//! worker's refund job finishes refunds a crash or a provider error left
//! under way ([`Payments::finish_refunds`]).
//!
//! Rules:
//! - A callback is applied only to a payment that was started, for the same
//!   order and amount; anything else is a mismatch that changes nothing and
//!   is counted (`cityhub_payment_mismatches_total`). The signed body carries
//!   its time, and a callback older than `payments.callback_max_age_secs` is
//!   refused, so a captured callback cannot be replayed for long.
//! - A callback is applied once: its payment moves out of `started` in the
//!   same transaction as the order's move, so a second delivery finds it
//!   moved and changes nothing.
//! - Paid is the optimistic move unpaid → paid (see
//!   [`lifecycle`](crate::orders::lifecycle)); a payment that loses (the
//!   order was closed, is past its payment window, or was paid by another
//!   payment) never forces the order to paid, which would sell its unit
//!   twice: the money is refunded, and a closed order becomes `refunded`.
//! - A refund is recorded as `refunding` (with the move it owes the order)
//!   before the provider is asked, and finished (provider refund, then the
//!   payment `refunded` and the order's move in one transaction) by whoever
//!   gets there: the path that started it, a redelivered callback, or the
//!   refund job. Every step is idempotent, so a crash between any two steps
//!   leaves a `refunding` row that is finished later, never money taken for
//!   an order that is not paid. A callback for a payment still `refunding`
//!   is not answered `duplicate` until its refund is done.
//! - A payment for an order accepted in Redis but not yet stored (the worker
//!   lags) stores it as paid, under the same guards as the worker's insert
//!   (confirmed reservation, DB stock, one live order per buyer); the
//!   worker's later insert of the same id changes nothing.

pub mod provider;
pub mod signature;

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands;
use sqlx::MySqlConnection;

pub use provider::{Callback, ChargeResult, Provider, RefundRefused};

use crate::ids::{OrderId, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::orders::lifecycle::{Lifecycle, Move, Moved};
use crate::orders::store::{self, StoreError};
use crate::orders::{find_for_user, OrderError, OrderStatus};
use crate::seckill::scripts::{self, Confirm};
use crate::seckill::{OrderMessage, PendingOrder};
use crate::vouchers::Vouchers;

/// A payment's state, the `payments.status` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentStatus {
    /// The owner started it; the provider has not reported.
    Started,
    /// The provider could not charge.
    Failed,
    /// It paid its order.
    Paid,
    /// Its refund is under way (see the module doc).
    Refunding,
    Refunded,
}

impl PaymentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Started => "started",
            PaymentStatus::Failed => "failed",
            PaymentStatus::Paid => "paid",
            PaymentStatus::Refunding => "refunding",
            PaymentStatus::Refunded => "refunded",
        }
    }

    fn from_column(raw: &str) -> Option<Self> {
        [Self::Started, Self::Failed, Self::Paid, Self::Refunding, Self::Refunded]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// What a refund owes the order once the money is back: the `refund_move`
/// column.
fn refund_move_column(m: Move) -> &'static str {
    match m {
        Move::RefundPaid => "refund_paid",
        _ => "refund_closed",
    }
}

fn refund_move_from(raw: Option<&str>) -> Move {
    match raw {
        Some("refund_paid") => Move::RefundPaid,
        _ => Move::RefundClosed,
    }
}

/// A payment that was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub order_id: OrderId,
    pub txn_id: String,
    pub amount: u64,
}

/// What a callback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackOutcome {
    /// The order is paid.
    Paid,
    /// The provider could not charge; the order is unchanged.
    Failed,
    /// This transaction was applied before: nothing changed.
    Duplicate,
    /// The order could not take the payment; the money went back.
    Refunded,
}

impl CallbackOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackOutcome::Paid => "paid",
            CallbackOutcome::Failed => "failed",
            CallbackOutcome::Duplicate => "duplicate",
            CallbackOutcome::Refunded => "refunded",
        }
    }
}

/// Why a signed callback matches no started payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// No payment was started under its transaction id.
    UnknownTxn,
    /// The payment was started for another order.
    Order,
    /// The amount is not the one asked (the order's price).
    Amount,
    /// Signed longer ago than `payments.callback_max_age_secs`, or in the future.
    Stale,
}

impl Mismatch {
    pub fn as_str(self) -> &'static str {
        match self {
            Mismatch::UnknownTxn => "unknown_txn",
            Mismatch::Order => "order",
            Mismatch::Amount => "amount",
            Mismatch::Stale => "stale",
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
    #[error("the callback matches no started payment ({})", .0.as_str())]
    Mismatch(Mismatch),
    #[error(transparent)]
    RefundRefused(#[from] RefundRefused),
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
    max_age: Duration,
}

/// A payment row: (order id, amount, status, refund move).
type PaymentRow = (OrderId, u64, String, Option<String>);

async fn payment(db: impl sqlx::MySqlExecutor<'_>, txn_id: &str) -> Result<Option<PaymentRow>, sqlx::Error> {
    sqlx::query_as("SELECT order_id, amount, status, refund_move FROM payments WHERE txn_id = ?")
        .bind(txn_id)
        .fetch_optional(db)
        .await
}

/// Moves payment `txn_id` from `from` to `to` (with the refund it owes, if
/// any); false when it was not in `from` (another delivery moved it first).
async fn move_payment(
    db: impl sqlx::MySqlExecutor<'_>,
    txn_id: &str,
    from: PaymentStatus,
    to: PaymentStatus,
    refund: Option<Move>,
) -> Result<bool, sqlx::Error> {
    let changed = sqlx::query(
        "UPDATE payments SET status = ?, refund_move = COALESCE(?, refund_move) WHERE txn_id = ? AND status = ?",
    )
    .bind(to.as_str())
    .bind(refund.map(refund_move_column))
    .bind(txn_id)
    .bind(from.as_str())
    .execute(db)
    .await?
    .rows_affected();
    Ok(changed == 1)
}

async fn order_status(db: impl sqlx::MySqlExecutor<'_>, order_id: OrderId) -> Result<Option<OrderStatus>, OrderError> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT status FROM orders WHERE id = ?").bind(order_id).fetch_optional(db).await?;
    row.map(|(s,)| OrderStatus::from_column(&s).ok_or(OrderError::CorruptStatus(order_id, s))).transpose()
}

impl Payments {
    pub fn new(
        lifecycle: Lifecycle,
        kv: Kv,
        vouchers: Vouchers,
        provider: Arc<Provider>,
        secret: &[u8],
        max_age: Duration,
    ) -> Self {
        Self { lifecycle, kv, vouchers, provider, secret: secret.into(), max_age }
    }

    pub fn provider(&self) -> &Arc<Provider> {
        &self.provider
    }

    /// How long an unpaid order may be paid, from when it was stored.
    pub fn window(&self) -> Duration {
        self.lifecycle.window()
    }

    /// Starts paying `order_id` for its owner `user_id` (a stored unpaid
    /// order inside its payment window, or one still queued, whose window
    /// has not begun): records the payment as started, then asks the
    /// provider to charge.
    pub async fn start(&self, user_id: UserId, order_id: OrderId) -> Result<Started, PayError> {
        let view = find_for_user(self.lifecycle.db(), &self.kv, self.window(), order_id, user_id)
            .await?
            .ok_or(PayError::NotFound)?;
        let amount = match view.status {
            OrderStatus::Unpaid => view.pay_amount.unwrap_or_default(),
            OrderStatus::Queued => self.price(view.voucher_id).await?.ok_or(PayError::NotFound)?,
            other => return Err(PayError::NotPayable(other)),
        };
        let txn_id = Provider::new_txn_id(order_id);
        sqlx::query("INSERT INTO payments (txn_id, order_id, amount, status) VALUES (?, ?, ?, ?)")
            .bind(&txn_id)
            .bind(order_id)
            .bind(amount)
            .bind(PaymentStatus::Started.as_str())
            .execute(self.lifecycle.db())
            .await?;
        self.provider.charge(&txn_id, order_id, amount);
        tracing::info!(%order_id, %txn_id, amount, "payment started");
        Ok(Started { order_id, txn_id, amount })
    }

    async fn price(&self, voucher_id: VoucherId) -> Result<Option<u64>, PayError> {
        Ok(self.vouchers.details(voucher_id).await?.map(|d| d.pay_value))
    }

    /// The callback in `body` if `signature` signs exactly these bytes and
    /// it was signed within `payments.callback_max_age_secs` (a minute of
    /// clock skew allowed the other way).
    pub fn verify(&self, body: &[u8], signature: Option<&[u8]>) -> Result<Callback, PayError> {
        if !signature::verify(&self.secret, body, signature) {
            return Err(PayError::BadSignature);
        }
        let cb: Callback = serde_json::from_slice(body).map_err(|e| PayError::InvalidCallback(e.to_string()))?;
        if cb.txn_id.is_empty() || cb.txn_id.len() > 64 {
            return Err(PayError::InvalidCallback("txn_id must be 1 to 64 characters".into()));
        }
        let age = chrono::Utc::now().timestamp().saturating_sub(cb.ts);
        if age > self.max_age.as_secs() as i64 || age < -60 {
            return Err(mismatch(Mismatch::Stale));
        }
        Ok(cb)
    }

    /// Applies a verified callback (see the module doc).
    pub async fn apply(&self, cb: &Callback) -> Result<CallbackOutcome, PayError> {
        let Some((order_id, amount, status, _)) = payment(self.lifecycle.db(), &cb.txn_id).await? else {
            return Err(mismatch(Mismatch::UnknownTxn));
        };
        if order_id != cb.order_id {
            return Err(mismatch(Mismatch::Order));
        }
        if amount != cb.amount {
            return Err(mismatch(Mismatch::Amount));
        }
        match PaymentStatus::from_column(&status) {
            Some(PaymentStatus::Started) => {}
            Some(PaymentStatus::Refunding) => {
                self.finish_refund(&cb.txn_id).await?;
                return Ok(CallbackOutcome::Refunded);
            }
            _ => return Ok(CallbackOutcome::Duplicate),
        }
        if cb.result == ChargeResult::Failed {
            let moved =
                move_payment(self.lifecycle.db(), &cb.txn_id, PaymentStatus::Started, PaymentStatus::Failed, None)
                    .await?;
            return if moved { Ok(CallbackOutcome::Failed) } else { self.moved_elsewhere(&cb.txn_id).await };
        }
        // Twice at most: a worker storing the order between our read and our
        // insert sends us back to the stored-order path.
        for _ in 0..2 {
            let mut tx = self.lifecycle.db().begin().await?;
            if !move_payment(&mut *tx, &cb.txn_id, PaymentStatus::Started, PaymentStatus::Paid, None).await? {
                drop(tx);
                return self.moved_elsewhere(&cb.txn_id).await;
            }
            if let Moved::Done { .. } = self.lifecycle.apply_in(&mut tx, cb.order_id, Move::Pay).await? {
                tx.commit().await?;
                tracing::info!(order_id = %cb.order_id, txn_id = %cb.txn_id, "order paid");
                return Ok(CallbackOutcome::Paid);
            }
            if order_status(&mut *tx, cb.order_id).await?.is_some() {
                drop(tx);
                return self.lose(cb).await;
            }
            match self.store_paid(&mut tx, cb).await? {
                StorePaid::Stored => {
                    tx.commit().await?;
                    tracing::info!(order_id = %cb.order_id, txn_id = %cb.txn_id, "queued order stored as paid");
                    return Ok(CallbackOutcome::Paid);
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
        let PendingOrder { user_id, voucher_id, bucket } = pending;
        if self.price(voucher_id).await? != Some(cb.amount) {
            return Ok(StorePaid::Refused);
        }
        let state = scripts::confirm(&self.kv, pending.sale(), &[(user_id, cb.order_id)]).await?;
        let state = state.first().copied().unwrap_or(Confirm::Unknown);
        if !matches!(state, Confirm::Confirmed | Confirm::Unknown | Confirm::Paused) {
            return Ok(StorePaid::Refused);
        }
        let message = OrderMessage {
            order_id: cb.order_id,
            user_id,
            voucher_id,
            bucket,
            pay_amount: cb.amount,
            created_at_ms: cb.order_id.issued_at_ms(),
            request_id: None,
        };
        match store::store_in(tx, std::slice::from_ref(&message), OrderStatus::Paid).await {
            Ok(stored) if stored.inserted.contains(&cb.order_id) => {
                if state == Confirm::Unknown {
                    scripts::restore(&self.kv, pending.sale(), &[(user_id, cb.order_id)]).await?;
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
                tracing::warn!(order_id = %cb.order_id, error = %refusal, "a paid queued order cannot be stored");
                Ok(StorePaid::Refused)
            }
        }
    }

    /// After a move out of `started` found the payment moved already (a
    /// concurrent delivery took it): `duplicate`, unless that delivery left
    /// its refund under way, which this one finishes first.
    async fn moved_elsewhere(&self, txn_id: &str) -> Result<CallbackOutcome, PayError> {
        let status = payment(self.lifecycle.db(), txn_id).await?.map(|(_, _, status, _)| status);
        if status.as_deref().and_then(PaymentStatus::from_column) == Some(PaymentStatus::Refunding) {
            self.finish_refund(txn_id).await?;
            return Ok(CallbackOutcome::Refunded);
        }
        Ok(CallbackOutcome::Duplicate)
    }

    /// The payment lost: record it as refunding, then finish the refund.
    async fn lose(&self, cb: &Callback) -> Result<CallbackOutcome, PayError> {
        let db = self.lifecycle.db();
        let refunding = PaymentStatus::Refunding;
        if !move_payment(db, &cb.txn_id, PaymentStatus::Started, refunding, Some(Move::RefundClosed)).await? {
            return self.moved_elsewhere(&cb.txn_id).await;
        }
        self.finish_refund(&cb.txn_id).await?;
        tracing::info!(order_id = %cb.order_id, txn_id = %cb.txn_id, "late or second payment refunded");
        Ok(CallbackOutcome::Refunded)
    }

    /// Finishes the refund of payment `txn_id` if it is `refunding` (else
    /// does nothing): a lost payment's order, still unpaid past its window,
    /// is closed first; the provider refunds (idempotent per transaction);
    /// then the payment turns `refunded` and the order takes the move the
    /// refund owes it, in one transaction, and its unit is given back.
    /// True when this call finished it.
    pub async fn finish_refund(&self, txn_id: &str) -> Result<bool, PayError> {
        let db = self.lifecycle.db();
        let Some((order_id, _, status, refund_move)) = payment(db, txn_id).await? else {
            return Ok(false);
        };
        if PaymentStatus::from_column(&status) != Some(PaymentStatus::Refunding) {
            return Ok(false);
        }
        let m = refund_move_from(refund_move.as_deref());
        if m == Move::RefundClosed && order_status(db, order_id).await? == Some(OrderStatus::Unpaid) {
            self.lifecycle.apply(order_id, Move::Expire).await?;
        }
        let refund_id = self.provider.refund(txn_id).await?;
        let mut tx = db.begin().await?;
        if !move_payment(&mut *tx, txn_id, PaymentStatus::Refunding, PaymentStatus::Refunded, None).await? {
            return Ok(false);
        }
        let moved = self.lifecycle.apply_in(&mut tx, order_id, m).await?;
        tx.commit().await?;
        self.lifecycle.settle(&moved).await;
        tracing::info!(%order_id, %txn_id, %refund_id, "payment refunded");
        Ok(true)
    }

    /// Finishes up to `limit` refunds left under way for at least `grace`
    /// (the path that started them crashed, or the provider refused);
    /// answers (finished, still pending).
    pub async fn finish_refunds(&self, grace: Duration, limit: u32) -> Result<(u64, u64), PayError> {
        let before = chrono::Utc::now() - chrono::TimeDelta::from_std(grace).unwrap_or_default();
        let txns: Vec<String> = sqlx::query_scalar(
            "SELECT txn_id FROM payments WHERE status = ? AND updated_at <= ? ORDER BY updated_at LIMIT ?",
        )
        .bind(PaymentStatus::Refunding.as_str())
        .bind(before)
        .bind(limit)
        .fetch_all(self.lifecycle.db())
        .await?;
        let mut finished = 0;
        for txn_id in &txns {
            match self.finish_refund(txn_id).await {
                Ok(done) => finished += u64::from(done),
                Err(err) => {
                    tracing::warn!(%txn_id, error = %err, "refund not finished yet; retried later");
                    // To the back of the queue, so refunds the provider keeps
                    // refusing do not hold every place of the next round.
                    let touched = sqlx::query("UPDATE payments SET updated_at = CURRENT_TIMESTAMP(3) WHERE txn_id = ?")
                        .bind(txn_id)
                        .execute(self.lifecycle.db())
                        .await;
                    if let Err(err) = touched {
                        tracing::debug!(%txn_id, error = %err, "refund not moved back in the queue");
                    }
                }
            }
        }
        let pending: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM payments WHERE status = ?")
            .bind(PaymentStatus::Refunding.as_str())
            .fetch_one(self.lifecycle.db())
            .await?;
        Ok((finished, pending.max(0) as u64))
    }

    /// Closes `order_id` for an admin: an unpaid order is closed, a paid one
    /// refunded (which closes it); a closed or refunded order is left as it
    /// is. Answers the order's final status; its stock is released once. A
    /// refund the provider refuses leaves the payment `refunding` and the
    /// order paid (the admin sees an error; the refund job finishes it).
    pub async fn close(&self, order_id: OrderId) -> Result<OrderStatus, PayError> {
        let db = self.lifecycle.db();
        // A payment may win between the read and the move: read again.
        for _ in 0..3 {
            let status = match order_status(db, order_id).await? {
                Some(status) => status,
                None => {
                    let pending: Option<String> = self.kv.conn().get(self.kv.keys.pending_order(order_id)).await?;
                    return Err(if pending.is_some() { PayError::NotStoredYet } else { PayError::NotFound });
                }
            };
            let moved = match status {
                OrderStatus::Unpaid => self.lifecycle.apply(order_id, Move::Close).await?,
                OrderStatus::Paid => {
                    // The payment that paid it, or its refund an earlier close started.
                    let txn: Option<(String, String)> = sqlx::query_as(
                        "SELECT txn_id, status FROM payments WHERE order_id = ? \
                         AND (status = ? OR (status = ? AND refund_move = ?)) LIMIT 1",
                    )
                    .bind(order_id)
                    .bind(PaymentStatus::Paid.as_str())
                    .bind(PaymentStatus::Refunding.as_str())
                    .bind(refund_move_column(Move::RefundPaid))
                    .fetch_optional(db)
                    .await?;
                    match txn {
                        Some((txn_id, status)) => {
                            if status == PaymentStatus::Paid.as_str() {
                                let (paid, refunding) = (PaymentStatus::Paid, PaymentStatus::Refunding);
                                move_payment(db, &txn_id, paid, refunding, Some(Move::RefundPaid)).await?;
                            }
                            if self.finish_refund(&txn_id).await? {
                                metrics::counter!(crate::metrics::ORDERS_CLOSED, "reason" => "admin").increment(1);
                            }
                            Moved::Lost
                        }
                        None => self.lifecycle.apply(order_id, Move::RefundPaid).await?,
                    }
                }
                done => return Ok(done),
            };
            if let Moved::Done { .. } = moved {
                metrics::counter!(crate::metrics::ORDERS_CLOSED, "reason" => "admin").increment(1);
                tracing::info!(%order_id, from = status.as_str(), "order closed by an admin");
            }
        }
        order_status(db, order_id).await?.ok_or(PayError::NotFound)
    }
}

/// Counts a mismatch (operators alert on any) and answers its error.
fn mismatch(reason: Mismatch) -> PayError {
    metrics::counter!(crate::metrics::PAYMENT_MISMATCHES, "reason" => reason.as_str()).increment(1);
    PayError::Mismatch(reason)
}

/// How storing a queued order as paid went.
enum StorePaid {
    Stored,
    /// The worker stored it first: pay it as a stored order.
    StoredMeanwhile,
    /// Its reservation was released, its price changed, or a guard refused
    /// it: refund.
    Refused,
}
