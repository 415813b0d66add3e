//! The order worker's write path: stores a batch of order messages in one
//! transaction, decrementing each voucher's DB stock with `stock >= n` (the
//! batch form of `stock > 0`).
//!
//! Invariants: an order id is stored at most once (ids already present are
//! skipped, so a redelivered message changes nothing and decrements nothing);
//! DB stock never goes below zero; a batch either commits whole or not at all.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::{MySql, MySqlPool, QueryBuilder};

use super::OrderMessage;

/// What a committed batch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Ids of the orders inserted now.
    pub inserted: HashSet<u64>,
    /// Messages whose order was already stored (redeliveries).
    pub duplicates: usize,
}

/// Why a batch was not stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// DB stock cannot cover the batch's orders for this voucher.
    #[error("voucher {0} has too little stock in the database")]
    StockExhausted(u64),
    /// Another order of the same user for the same voucher is stored.
    #[error("user already has an order for this voucher")]
    DuplicateBuyer,
    /// The voucher has no seckill row.
    #[error("voucher {0} is not a seckill voucher")]
    UnknownVoucher(u64),
    #[error(transparent)]
    Db(sqlx::Error),
}

impl StoreError {
    /// True when retrying the same batch may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Db(e) if crate::db::is_transient(e))
            // Another worker stored one of these ids between our check and insert.
            || matches!(self, StoreError::Db(e) if crate::db::violated_unique_key(e).as_deref() == Some("PRIMARY"))
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match crate::db::violated_unique_key(&e).as_deref() {
            Some("uk_orders_user_voucher") => StoreError::DuplicateBuyer,
            _ => StoreError::Db(e),
        }
    }
}

/// Stores `orders` in one transaction (see the module invariants).
pub async fn store_batch(db: &MySqlPool, orders: &[OrderMessage]) -> Result<Stored, StoreError> {
    if orders.is_empty() {
        return Ok(Stored::default());
    }
    let mut tx = db.begin().await?;
    let mut existing = QueryBuilder::<MySql>::new("SELECT id FROM orders WHERE id IN (");
    let mut ids = existing.separated(", ");
    for o in orders {
        ids.push_bind(o.order_id);
    }
    existing.push(")");
    let present: HashSet<u64> = existing.build_query_scalar().fetch_all(&mut *tx).await?.into_iter().collect();

    let mut seen = HashSet::new();
    let fresh: Vec<&OrderMessage> =
        orders.iter().filter(|o| !present.contains(&o.order_id) && seen.insert(o.order_id)).collect();
    let duplicates = orders.len() - fresh.len();
    if fresh.is_empty() {
        return Ok(Stored { inserted: HashSet::new(), duplicates });
    }

    let mut insert =
        QueryBuilder::<MySql>::new("INSERT INTO orders (id, user_id, voucher_id, status, pay_amount, created_at) ");
    insert.push_values(&fresh, |mut row, o| {
        let created = DateTime::<Utc>::from_timestamp_millis(o.created_at_ms as i64).unwrap_or_else(Utc::now);
        row.push_bind(o.order_id)
            .push_bind(o.user_id)
            .push_bind(o.voucher_id)
            .push_bind("unpaid")
            .push_bind(o.pay_amount)
            .push_bind(created);
    });
    insert.build().execute(&mut *tx).await?;

    // Stock last, so the voucher's hot row stays locked only until the commit;
    // per voucher in id order, so concurrent batches lock rows in one order.
    let mut per_voucher: BTreeMap<u64, u32> = BTreeMap::new();
    for o in &fresh {
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
            let exists: Option<(u64,)> = sqlx::query_as("SELECT voucher_id FROM seckill_vouchers WHERE voucher_id = ?")
                .bind(voucher_id)
                .fetch_optional(&mut *tx)
                .await?;
            return Err(match exists {
                Some(_) => StoreError::StockExhausted(voucher_id),
                None => StoreError::UnknownVoucher(voucher_id),
            });
        }
    }
    tx.commit().await?;
    Ok(Stored { inserted: fresh.iter().map(|o| o.order_id).collect(), duplicates })
}
