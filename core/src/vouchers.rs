//! Seckill vouchers: creation (MySQL plus the Redis preload, as one step) and
//! the in-process metadata cache the seckill path reads instead of MySQL.
//!
//! Invariant: a seckill voucher that exists in MySQL has its Redis state
//! (stock and sale window) loaded, because the row is committed only after
//! the preload succeeded; if the commit fails, the preload is removed.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;
use serde::Serialize;
use sqlx::MySqlPool;

use crate::kv::Kv;

/// A validated request to create a seckill voucher. Money in cents.
#[derive(Debug, Clone)]
pub struct NewSeckillVoucher {
    pub shop_id: u64,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

/// A stored seckill voucher.
#[derive(Debug, Clone, Serialize)]
pub struct SeckillVoucher {
    pub id: u64,
    pub shop_id: u64,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

/// What the seckill path needs to know about a voucher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoucherMeta {
    pub id: u64,
    pub pay_value: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum VoucherError {
    #[error("shop {0} does not exist")]
    UnknownShop(u64),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// Voucher catalogue with its cache. Clone freely.
#[derive(Clone)]
pub struct Vouchers {
    db: MySqlPool,
    kv: Kv,
    meta: moka::future::Cache<u64, Option<Arc<VoucherMeta>>>,
}

impl Vouchers {
    pub fn new(db: MySqlPool, kv: Kv) -> Self {
        let meta = moka::future::Cache::builder()
            .max_capacity(100_000)
            // Short enough that a negative entry (unknown id) soon gives way
            // to a voucher created through another instance.
            .time_to_live(Duration::from_secs(5))
            .build();
        Self { db, kv, meta }
    }

    /// Creates the voucher and its seckill part and preloads Redis.
    /// Runs in its own task, so a caller that goes away (an HTTP client
    /// hanging up) cannot stop it between the Redis preload and the commit.
    pub async fn create_seckill(&self, new: NewSeckillVoucher) -> Result<SeckillVoucher, VoucherError> {
        let this = self.clone();
        crate::run_to_completion(async move { this.create(new).await }).await
    }

    async fn create(&self, new: NewSeckillVoucher) -> Result<SeckillVoucher, VoucherError> {
        let mut tx = self.db.begin().await?;
        let shop: Option<(u64,)> = sqlx::query_as("SELECT id FROM shops WHERE id = ? LOCK IN SHARE MODE")
            .bind(new.shop_id)
            .fetch_optional(&mut *tx)
            .await?;
        if shop.is_none() {
            return Err(VoucherError::UnknownShop(new.shop_id));
        }
        let id = sqlx::query(
            "INSERT INTO vouchers (shop_id, title, sub_title, rules, pay_value, actual_value) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(new.shop_id)
        .bind(&new.title)
        .bind(&new.sub_title)
        .bind(&new.rules)
        .bind(new.pay_value)
        .bind(new.actual_value)
        .execute(&mut *tx)
        .await?
        .last_insert_id();
        sqlx::query(
            "INSERT INTO seckill_vouchers (voucher_id, initial_stock, stock, begin_time, end_time) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(new.stock)
        .bind(new.stock)
        .bind(new.begin_time)
        .bind(new.end_time)
        .execute(&mut *tx)
        .await?;
        self.preload(id, &new).await?;
        if let Err(err) = tx.commit().await {
            let _: Result<(), _> =
                self.kv.conn().del(&[self.kv.keys.seckill_voucher(id), self.kv.keys.seckill_buyers(id)]).await;
            return Err(err.into());
        }
        self.meta.invalidate(&id).await;
        Ok(SeckillVoucher {
            id,
            shop_id: new.shop_id,
            title: new.title,
            sub_title: new.sub_title,
            rules: new.rules,
            pay_value: new.pay_value,
            actual_value: new.actual_value,
            stock: new.stock,
            begin_time: new.begin_time,
            end_time: new.end_time,
        })
    }

    async fn preload(&self, id: u64, v: &NewSeckillVoucher) -> redis::RedisResult<()> {
        redis::pipe()
            .atomic()
            .del(self.kv.keys.seckill_buyers(id))
            .hset_multiple(
                self.kv.keys.seckill_voucher(id),
                &[
                    ("stock", i64::from(v.stock)),
                    ("begin_ms", v.begin_time.timestamp_millis()),
                    ("end_ms", v.end_time.timestamp_millis()),
                    ("pay_value", v.pay_value as i64),
                ],
            )
            .query_async(&mut self.kv.conn())
            .await
    }

    /// The voucher's seckill metadata from the in-process cache, loaded from
    /// Redis on a miss (never from MySQL). `None` for an unknown voucher;
    /// that answer is cached too, against floods of made-up ids.
    pub async fn meta(&self, id: u64) -> Result<Option<Arc<VoucherMeta>>, Arc<redis::RedisError>> {
        self.meta
            .try_get_with(id, async {
                let pay: Option<u64> = self.kv.conn().hget(self.kv.keys.seckill_voucher(id), "pay_value").await?;
                Ok(pay.map(|pay_value| Arc::new(VoucherMeta { id, pay_value })))
            })
            .await
    }
}
