//! The order worker's write path: stores a batch of order messages in one
//! transaction, decrementing each voucher's DB stock with `stock >= n` (the
//! batch form of `stock > 0`).
//!
//! Invariants: an order id is stored at most once (ids already present are
//! skipped, so a redelivered message changes nothing and decrements nothing);
//! an id already stored (or earlier in the batch) for another user or
//! voucher is a conflict, reported and never taken for a redelivery; DB
//! stock never goes below zero; a batch either commits whole or not at all.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use chrono::{DateTime, Utc};
use sqlx::{MySql, MySqlConnection, MySqlPool, QueryBuilder};

use super::OrderStatus;
use crate::ids::{OrderId, UserId, VoucherId};
use crate::seckill::OrderMessage;

/// What a committed batch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Ids of the orders inserted now.
    pub inserted: HashSet<OrderId>,
    /// Messages whose order was already stored (redeliveries).
    pub duplicates: usize,
    /// Messages whose order id is stored for another user or voucher, as
    /// (order id, user id, voucher id) of the message; nothing was written for them.
    pub conflicts: HashSet<(OrderId, UserId, VoucherId)>,
}

/// Why a batch was not stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// DB stock cannot cover the batch's orders for this voucher.
    #[error("voucher {0} has too little stock in the database")]
    StockExhausted(VoucherId),
    /// Another live order of the same user for the same voucher is stored.
    #[error("user already has an order for this voucher")]
    DuplicateBuyer,
    /// The voucher has no seckill row.
    #[error("voucher {0} is not a seckill voucher")]
    UnknownVoucher(VoucherId),
    /// Not a rule's refusal (every other variant is one): may pass on a retry.
    #[error(transparent)]
    Db(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match cityhub_platform::db::violated_unique_key(&e).as_deref() {
            Some("uk_orders_live_buyer") => StoreError::DuplicateBuyer,
            _ => StoreError::Db(e),
        }
    }
}

/// Stores `orders` as unpaid in one transaction (see the module invariants).
pub async fn store_batch(db: &MySqlPool, orders: &[OrderMessage]) -> Result<Stored, StoreError> {
    if orders.is_empty() {
        return Ok(Stored::default());
    }
    let started = Instant::now();
    let mut tx = db.begin().await?;
    Step::Begin.took(started);
    let stored = store_in(&mut tx, orders, OrderStatus::Unpaid).await?;
    let committing = Instant::now();
    tx.commit().await?;
    Step::Commit.took(committing);
    Ok(stored)
}

/// The steps of an order-storing transaction, each timed into
/// [`ORDER_STORE_STEP`](crate::metrics::ORDER_STORE_STEP): where a batch's
/// time goes shows what bounds the worker's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Taking a connection and starting the transaction.
    Begin,
    /// Writing the rows (and, on the checked path, reading the ids first).
    Insert,
    /// Taking the vouchers' stock.
    Stock,
    Commit,
}

impl Step {
    pub const ALL: [Step; 4] = [Step::Begin, Step::Insert, Step::Stock, Step::Commit];

    pub fn label(self) -> &'static str {
        match self {
            Step::Begin => "begin",
            Step::Insert => "insert",
            Step::Stock => "stock",
            Step::Commit => "commit",
        }
    }

    fn took(self, since: Instant) {
        metrics::histogram!(crate::metrics::ORDER_STORE_STEP, "step" => self.label())
            .record(since.elapsed().as_secs_f64());
    }
}

/// Stores `orders` with `status` (unpaid, or paid when a payment arrived
/// before the order message) inside the caller's transaction, under the same
/// guards as [`store_batch`]; the caller commits.
///
/// A first delivery is the common case, so the rows are inserted at once;
/// only when a unique key refuses them (an id stored already, in the batch
/// twice, or a buyer's live order) does the batch take the checked path,
/// which reads the ids first. A refused INSERT rolls back only itself, so
/// the transaction goes on.
pub async fn store_in(
    tx: &mut MySqlConnection,
    orders: &[OrderMessage],
    status: OrderStatus,
) -> Result<Stored, StoreError> {
    if orders.is_empty() {
        return Ok(Stored::default());
    }
    let all: Vec<&OrderMessage> = orders.iter().collect();
    let inserting = Instant::now();
    let (stored, fresh) = match insert(tx, &all, status).await {
        Ok(()) => (Stored { inserted: orders.iter().map(|o| o.order_id).collect(), ..Stored::default() }, all),
        Err(err) if cityhub_platform::db::violated_unique_key(&err).is_some() => checked(tx, orders, status).await?,
        Err(err) => return Err(err.into()),
    };
    Step::Insert.took(inserting);
    let taking = Instant::now();
    take_stock(tx, &fresh).await?;
    Step::Stock.took(taking);
    Ok(stored)
}

/// The checked path of [`store_in`]: reads which ids are stored, skips the
/// redeliveries, reports the conflicts and inserts the rest; answers what it
/// did and the orders it inserted (one copy of each id).
async fn checked<'a>(
    tx: &mut MySqlConnection,
    orders: &'a [OrderMessage],
    status: OrderStatus,
) -> Result<(Stored, Vec<&'a OrderMessage>), StoreError> {
    let mut existing = QueryBuilder::<MySql>::new("SELECT id, user_id, voucher_id FROM orders WHERE id IN (");
    let mut ids = existing.separated(", ");
    for o in orders {
        ids.push_bind(o.order_id);
    }
    existing.push(")");
    let rows: Vec<(OrderId, UserId, VoucherId)> = existing.build_query_as().fetch_all(&mut *tx).await?;
    let present: HashMap<OrderId, (UserId, VoucherId)> = rows.into_iter().map(|(id, u, v)| (id, (u, v))).collect();

    let (mut fresh, mut duplicates, mut conflicts) = (Vec::new(), 0, HashSet::new());
    let mut taken: HashMap<OrderId, (UserId, VoucherId)> = HashMap::new();
    for o in orders {
        let owner = (o.user_id, o.voucher_id);
        match present.get(&o.order_id).or_else(|| taken.get(&o.order_id)) {
            Some(held) if *held == owner => duplicates += 1,
            Some(_) => {
                conflicts.insert((o.order_id, o.user_id, o.voucher_id));
            }
            None => {
                taken.insert(o.order_id, owner);
                fresh.push(o);
            }
        }
    }
    if !fresh.is_empty() {
        insert(tx, &fresh, status).await?;
    }
    Ok((Stored { inserted: fresh.iter().map(|o| o.order_id).collect(), duplicates, conflicts }, fresh))
}

/// The largest INSERT of [`insert`]: a batch is written in statements of
/// a power of two rows each, at most this many.
const INSERT_ROWS_MAX: usize = 512;

/// Inserts `orders` with `status`, in statements of a power of two rows
/// each (largest first): a handful of statement shapes, each prepared once
/// per connection and kept in its statement cache, where one statement of
/// exactly the batch's size would be prepared anew for almost every batch
/// (a prepare of 512 rows costs a round trip and ~100 KB of parameter
/// descriptions).
async fn insert(tx: &mut MySqlConnection, orders: &[&OrderMessage], status: OrderStatus) -> Result<(), sqlx::Error> {
    // The payment window runs from `stored_at` on the platform's clock, the
    // clock its cutoff is taken from (not the database's).
    let stored_at = Utc::now();
    let paid_at = (status == OrderStatus::Paid).then_some(stored_at);
    let mut rest = orders;
    while !rest.is_empty() {
        let size = INSERT_ROWS_MAX.min(1 << rest.len().ilog2());
        let (chunk, after) = rest.split_at(size);
        let mut insert = QueryBuilder::<MySql>::new(
            "INSERT INTO orders (id, user_id, voucher_id, bucket, status, pay_amount, created_at, stored_at, paid_at) ",
        );
        insert.push_values(chunk, |mut row, o| {
            let created = DateTime::<Utc>::from_timestamp_millis(o.created_at_ms as i64).unwrap_or_else(Utc::now);
            row.push_bind(o.order_id)
                .push_bind(o.user_id)
                .push_bind(o.voucher_id)
                .push_bind(o.bucket)
                .push_bind(status.as_str())
                .push_bind(o.pay_amount)
                .push_bind(created)
                .push_bind(stored_at)
                .push_bind(paid_at);
        });
        insert.build().execute(&mut *tx).await?;
        rest = after;
    }
    Ok(())
}

/// Takes the stock of the inserted `orders` from their vouchers' rows.
/// Stock last, so the voucher's hot row stays locked only until the commit;
/// per voucher in id order, so concurrent batches lock rows in one order.
async fn take_stock(tx: &mut MySqlConnection, orders: &[&OrderMessage]) -> Result<(), StoreError> {
    let mut per_voucher: BTreeMap<VoucherId, u32> = BTreeMap::new();
    for o in orders {
        *per_voucher.entry(o.voucher_id).or_default() += 1;
    }
    for (&voucher_id, &n) in &per_voucher {
        let updated = sqlx::query("UPDATE seckill_vouchers SET stock = stock - ? WHERE voucher_id = ? AND stock >= ?")
            .bind(n)
            .bind(voucher_id)
            .bind(n)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if updated == 0 {
            let exists: Option<(VoucherId,)> =
                sqlx::query_as("SELECT voucher_id FROM seckill_vouchers WHERE voucher_id = ?")
                    .bind(voucher_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            return Err(match exists {
                Some(_) => StoreError::StockExhausted(voucher_id),
                None => StoreError::UnknownVoucher(voucher_id),
            });
        }
    }
    Ok(())
}
