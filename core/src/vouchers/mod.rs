//! Seckill vouchers: their rules ([`NewSeckillVoucher::check`]), creation
//! (MySQL plus the Redis preload, as one step) and their details, read
//! through the shared two-level cache (the seckill path reads them there,
//! never from MySQL while L1 or Redis holds them).
//!
//! Invariant: a seckill voucher that exists in MySQL has its Redis state
//! (stock and sale window) loaded, because the row is committed only after
//! the preload succeeded; if the commit fails, the preload is removed.
//!
//! The details cache waits for the one rebuild rather than serve a stale
//! entry ([`Freshness::WaitForRebuild`]): the price a shopper pays comes from it.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::cache::{Cache, CacheError, Caches, FnLoader, Freshness, LoadError, Spec};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::kv::{CityKeys, Kv};

/// A request to create a seckill voucher. Money in cents.
#[derive(Debug, Clone, Serialize)]
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

impl NewSeckillVoucher {
    /// The rules every seckill voucher obeys, whoever creates it: the sale
    /// ends after it begins and in the future, and the price paid is at
    /// most the voucher's value.
    pub fn check(&self) -> Result<(), VoucherError> {
        let invalid = |field, reason| Err(VoucherError::Invalid { field, reason });
        if self.end_time <= self.begin_time {
            return invalid("end_time", "must be after begin_time");
        }
        if self.end_time <= Utc::now() {
            return invalid("end_time", "must be in the future");
        }
        if self.pay_value > self.actual_value {
            return invalid("pay_value", "must not exceed actual_value");
        }
        if self.stock == 0 {
            return invalid("stock", "must be at least 1");
        }
        Ok(())
    }
}

/// A stored seckill voucher: its id and what it was created with.
#[derive(Debug, Clone, Serialize)]
pub struct SeckillVoucher {
    pub id: u64,
    #[serde(flatten)]
    pub spec: NewSeckillVoucher,
}

/// A seckill voucher's details as the cache holds them; times in ms since the epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDetails {
    pub id: u64,
    pub shop_id: u64,
    pub title: String,
    /// Cents.
    pub pay_value: u64,
    /// Cents.
    pub actual_value: u64,
    pub begin_ms: i64,
    pub end_ms: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum VoucherError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: &'static str },
    #[error("shop {0} does not exist")]
    UnknownShop(u64),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// Voucher catalogue with its details cache. Clone freely.
#[derive(Clone)]
pub struct Vouchers {
    db: MySqlPool,
    kv: Kv,
    details: Cache<u64, VoucherDetails>,
}

impl Vouchers {
    /// `ttl`: logical TTL of the details in Redis (`vouchers.cache_ttl_secs`).
    pub fn new(db: MySqlPool, kv: Kv, caches: &Caches, ttl: Duration) -> Self {
        let spec = Spec { name: "vouchers", ttl, freshness: Freshness::WaitForRebuild, bloom: None };
        let pool = db.clone();
        let details = Cache::new(
            spec,
            caches,
            FnLoader(move |id: u64| {
                let pool = pool.clone();
                async move { load_details(&pool, id).await.map_err(|e| Box::new(e) as LoadError) }
            }),
        );
        Self { db, kv, details }
    }

    /// For tools that write vouchers but serve no reads: no invalidation
    /// listener runs here, while the API instances still hear of every write.
    pub fn from_settings(db: MySqlPool, kv: Kv, settings: &crate::config::Settings) -> Self {
        let caches = Caches::new(&kv, &settings.cache);
        Self::new(db, kv, &caches, Duration::from_secs(settings.vouchers.cache_ttl_secs))
    }

    /// Creates the voucher and its seckill part and preloads Redis.
    /// Runs in its own task, so a caller that goes away (an HTTP client
    /// hanging up) cannot stop it between the Redis preload and the commit.
    pub async fn create_seckill(&self, new: NewSeckillVoucher) -> Result<SeckillVoucher, VoucherError> {
        new.check()?;
        let this = self.clone();
        cityhub_platform::run_to_completion(async move { this.create(new).await }).await
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
        // A "none" cached for this id before it existed must go.
        self.details.refresh_or_retry(&id).await;
        Ok(SeckillVoucher { id, spec: new })
    }

    async fn preload(&self, id: u64, v: &NewSeckillVoucher) -> redis::RedisResult<()> {
        redis::pipe()
            .atomic()
            .del(self.kv.keys.seckill_buyers(id))
            .del(self.kv.keys.seckill_released(id))
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

    /// The voucher's details: L1, then Redis, then MySQL. `None` for an
    /// unknown voucher; that answer is cached too, against floods of
    /// made-up ids.
    pub async fn details(&self, id: u64) -> Result<Option<Arc<VoucherDetails>>, CacheError> {
        self.details.get(&id).await
    }
}

async fn load_details(db: &MySqlPool, id: u64) -> Result<Option<VoucherDetails>, sqlx::Error> {
    type Row = (u64, u64, String, u64, u64, DateTime<Utc>, DateTime<Utc>);
    let row: Option<Row> = sqlx::query_as(
        "SELECT v.id, v.shop_id, v.title, v.pay_value, v.actual_value, s.begin_time, s.end_time \
         FROM vouchers v JOIN seckill_vouchers s ON s.voucher_id = v.id WHERE v.id = ?",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(id, shop_id, title, pay_value, actual_value, begin, end)| VoucherDetails {
        id,
        shop_id,
        title,
        pay_value,
        actual_value,
        begin_ms: begin.timestamp_millis(),
        end_ms: end.timestamp_millis(),
    }))
}
