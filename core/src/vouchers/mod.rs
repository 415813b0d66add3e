//! Vouchers of both kinds: seckill vouchers (a sale window, one per user,
//! bought through the seckill path) and ordinary coupons (claimed any time,
//! see [`claims`]). Their rules ([`NewSeckillVoucher::check`],
//! [`NewOrdinaryVoucher::check`]), creation (for a seckill voucher MySQL plus
//! the Redis preload, as one step), an admin's change of the text, and their
//! details, read through the shared two-level cache (the seckill path reads
//! them there, never from MySQL while L1 or Redis holds them).
//!
//! Invariant: a seckill voucher that exists in MySQL has its Redis state
//! (stock and sale window) loaded, because the row is committed only after
//! the preload succeeded; if the commit fails, the preload is removed. A
//! change of a voucher reaches every instance's L1 through the cache's
//! refresh (its pub/sub message), or at the latest when L1's TTL ends.
//!
//! The details cache waits for the one rebuild rather than serve a stale
//! entry while MySQL answers: the price a shopper pays comes from it. When
//! MySQL cannot be reached the expired entry is served instead
//! ([`Freshness::WaitForRebuildOrStaleWhenDown`]): a seckill voucher's price
//! and sale window are fixed at creation, so a MySQL outage of any length
//! never stops the seckill path.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::cache::{Cache, CacheError, Caches, FnLoader, Freshness, LoadError, Spec};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::config::VoucherSettings;
use crate::ids::{ShopId, VoucherId};

use crate::kv::{CityKeys, Kv};

pub mod buckets;
pub mod claims;

/// The two kinds of voucher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoucherKind {
    /// Sold in a window, one per user, through the seckill path.
    #[default]
    Seckill,
    /// Claimed any time, as often as `limits.claims` allows, while units last.
    Ordinary,
}

impl VoucherKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VoucherKind::Seckill => "seckill",
            VoucherKind::Ordinary => "ordinary",
        }
    }
}

/// What an admin may change of a voucher once it exists: its text. Prices,
/// stock and the sale window are fixed at creation (orders were priced and
/// the sale was preloaded with them).
#[derive(Debug, Clone, Serialize)]
pub struct VoucherText {
    pub title: String,
    pub sub_title: String,
    pub rules: String,
}

/// A request to create an ordinary coupon. Money in cents.
#[derive(Debug, Clone, Serialize)]
pub struct NewOrdinaryVoucher {
    pub shop_id: ShopId,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
}

impl NewOrdinaryVoucher {
    /// The rules every voucher obeys: the price paid is at most its value,
    /// and it has a unit.
    pub fn check(&self) -> Result<(), VoucherError> {
        check_price_and_stock(self.pay_value, self.actual_value, self.stock)
    }
}

/// The rules of every voucher, of either kind: the price paid is at most
/// the voucher's value, and it has at least one unit.
fn check_price_and_stock(pay_value: u64, actual_value: u64, stock: u32) -> Result<(), VoucherError> {
    let invalid = |field, reason| Err(VoucherError::Invalid { field, reason });
    if pay_value > actual_value {
        return invalid("pay_value", "must not exceed actual_value");
    }
    if stock == 0 {
        return invalid("stock", "must be at least 1");
    }
    Ok(())
}

/// A stored ordinary coupon.
#[derive(Debug, Clone, Serialize)]
pub struct OrdinaryVoucher {
    pub id: VoucherId,
    #[serde(flatten)]
    pub spec: NewOrdinaryVoucher,
}

/// A request to create a seckill voucher. Money in cents.
#[derive(Debug, Clone, Serialize)]
pub struct NewSeckillVoucher {
    pub shop_id: ShopId,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
    /// Stock buckets (see `buckets`), 1 to `buckets::MAX`.
    pub buckets: u16,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

impl NewSeckillVoucher {
    /// The rules every seckill voucher obeys, whoever creates it: the sale
    /// ends after it begins and in the future, and those of every voucher
    /// (the price paid at most its value, at least one unit).
    pub fn check(&self) -> Result<(), VoucherError> {
        let invalid = |field, reason| Err(VoucherError::Invalid { field, reason });
        if self.end_time <= self.begin_time {
            return invalid("end_time", "must be after begin_time");
        }
        if self.end_time <= Utc::now() {
            return invalid("end_time", "must be in the future");
        }
        if self.buckets == 0 || self.buckets > buckets::MAX {
            return invalid("buckets", "must be from 1 to 64");
        }
        if u32::from(self.buckets) > self.stock {
            return invalid("buckets", "must not exceed stock");
        }
        check_price_and_stock(self.pay_value, self.actual_value, self.stock)
    }
}

/// A stored seckill voucher: its id and what it was created with.
#[derive(Debug, Clone, Serialize)]
pub struct SeckillVoucher {
    pub id: VoucherId,
    #[serde(flatten)]
    pub spec: NewSeckillVoucher,
}

/// A voucher's details as the cache holds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDetails {
    pub id: VoucherId,
    pub shop_id: ShopId,
    #[serde(default)]
    pub kind: VoucherKind,
    pub title: String,
    #[serde(default)]
    pub sub_title: String,
    #[serde(default)]
    pub rules: String,
    /// Cents.
    pub pay_value: u64,
    /// Cents.
    pub actual_value: u64,
    /// A seckill voucher's sale window; `None` for an ordinary coupon.
    #[serde(flatten)]
    pub sale: Option<SaleWindow>,
}

/// When a seckill voucher is on sale, ms since the epoch: from `begin_ms`
/// (inclusive) to `end_ms` (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaleWindow {
    pub begin_ms: i64,
    pub end_ms: i64,
    /// Stock buckets the sale is split into (see `buckets`).
    #[serde(default = "one_bucket")]
    pub buckets: u16,
}

fn one_bucket() -> u16 {
    1
}

impl VoucherDetails {
    /// The stock buckets its sale is split into: 1 for a voucher of one
    /// bucket and for an ordinary coupon.
    pub fn buckets(&self) -> u16 {
        self.sale.map_or(1, |s| s.buckets.max(1))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VoucherError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: &'static str },
    #[error("shop {0} does not exist")]
    UnknownShop(ShopId),
    #[error("voucher {0} does not exist")]
    NotFound(VoucherId),
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
    details: Cache<VoucherId, VoucherDetails>,
    /// A shop's voucher ids, oldest first (served stale while one caller
    /// rebuilds it: a list a new voucher joins at once on every instance).
    by_shop: Cache<ShopId, Vec<VoucherId>>,
    bound: Arc<IdBound>,
}

/// The highest voucher id, read from MySQL at most once per
/// [`IdBound::EVERY`]: an id more than [`IdBound::SLACK`] above it was never
/// created, so it is refused before any lookup (a flood of made-up ids
/// costs MySQL one small query per period, not one per id). Voucher ids are
/// `AUTO_INCREMENT`, so an id at or below the bound is a voucher or a gap,
/// whose "none" is cached; the slack admits vouchers created on another
/// instance since the last read, so none is refused while the bound lags.
struct IdBound {
    max: std::sync::atomic::AtomicU64,
    read_at: tokio::sync::Mutex<Option<std::time::Instant>>,
}

impl IdBound {
    const EVERY: Duration = Duration::from_millis(250);
    const SLACK: u64 = 64;

    fn new() -> Self {
        Self { max: Default::default(), read_at: tokio::sync::Mutex::new(None) }
    }

    fn below(&self, id: VoucherId) -> bool {
        id.get() <= self.max.load(std::sync::atomic::Ordering::Relaxed).saturating_add(Self::SLACK)
    }

    /// False only when `id` is above the bound as MySQL had it at a read at
    /// most [`IdBound::EVERY`] ago. A failed read lets the id through: the
    /// cache's own layers answer while MySQL is down.
    async fn admits(&self, db: &MySqlPool, id: VoucherId) -> bool {
        if self.below(id) {
            return true;
        }
        let mut read_at = self.read_at.lock().await;
        if self.below(id) || read_at.is_some_and(|at| at.elapsed() < Self::EVERY) {
            return self.below(id);
        }
        *read_at = Some(std::time::Instant::now());
        metrics::counter!(crate::metrics::VOUCHER_ID_BOUND_READS).increment(1);
        match sqlx::query_scalar::<_, Option<u64>>("SELECT MAX(id) FROM vouchers").fetch_one(db).await {
            Ok(max) => {
                self.max.fetch_max(max.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
                self.below(id)
            }
            Err(err) => {
                tracing::debug!(error = %err, "highest voucher id unreadable; the id is looked up");
                true
            }
        }
    }

    /// A voucher this instance created.
    fn created(&self, id: VoucherId) {
        self.max.fetch_max(id.get(), std::sync::atomic::Ordering::Relaxed);
    }
}

impl Vouchers {
    /// The details cache keeps `vouchers.cache_ttl_secs` of logical TTL in
    /// Redis.
    pub fn new(db: MySqlPool, kv: Kv, caches: &Caches, settings: &VoucherSettings) -> Self {
        let spec = Spec {
            name: "vouchers",
            ttl: settings.cache_ttl_secs,
            freshness: Freshness::WaitForRebuildOrStaleWhenDown,
            bloom: None,
        };
        let pool = db.clone();
        let details = Cache::new(
            spec,
            caches,
            FnLoader(move |id: VoucherId| {
                let pool = pool.clone();
                async move { load_details(&pool, id).await.map_err(|e| Box::new(e) as LoadError) }
            }),
        );
        let spec = Spec {
            name: "shop_vouchers",
            ttl: settings.cache_ttl_secs,
            freshness: Freshness::StaleWhileRebuild,
            bloom: None,
        };
        let pool = db.clone();
        let by_shop = Cache::new(
            spec,
            caches,
            FnLoader(move |shop: ShopId| {
                let pool = pool.clone();
                async move { of_shop(&pool, shop).await.map(Some).map_err(|e| Box::new(e) as LoadError) }
            }),
        );
        let bound = Arc::new(IdBound::new());
        Self { db, kv, details, by_shop, bound }
    }

    /// The ids of shop `shop`'s vouchers, oldest first (empty for a shop
    /// with none, or no such shop): L1, then Redis, then MySQL.
    pub async fn of_shop(&self, shop: ShopId) -> Result<Arc<Vec<VoucherId>>, CacheError> {
        Ok(self.by_shop.get(&shop).await?.unwrap_or_default())
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
        let text = [&*new.title, &new.sub_title, &new.rules];
        let id =
            insert_voucher(&mut tx, VoucherKind::Seckill, new.shop_id, text, (new.pay_value, new.actual_value)).await?;
        sqlx::query(
            "INSERT INTO seckill_vouchers (voucher_id, initial_stock, stock, buckets, begin_time, end_time) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(new.stock)
        .bind(new.stock)
        .bind(new.buckets)
        .bind(new.begin_time)
        .bind(new.end_time)
        .execute(&mut *tx)
        .await?;
        self.preload(id, &new).await?;
        if let Err(err) = tx.commit().await {
            for sale in buckets::sales(id, new.buckets) {
                let keys = [self.kv.keys.seckill_voucher(sale), self.kv.keys.seckill_buyers(sale)];
                let _: Result<(), _> = self.kv.conn().del(&keys).await;
            }
            return Err(err.into());
        }
        self.created(id, new.shop_id).await;
        Ok(SeckillVoucher { id, spec: new })
    }

    /// Creates an ordinary coupon. Its units are counted in Redis from the
    /// first claim on (see [`claims`]), so there is nothing to preload.
    pub async fn create_ordinary(&self, new: NewOrdinaryVoucher) -> Result<OrdinaryVoucher, VoucherError> {
        new.check()?;
        let mut tx = self.db.begin().await?;
        let text = [&*new.title, &new.sub_title, &new.rules];
        let id = insert_voucher(&mut tx, VoucherKind::Ordinary, new.shop_id, text, (new.pay_value, new.actual_value))
            .await?;
        sqlx::query("INSERT INTO ordinary_vouchers (voucher_id, initial_stock, stock) VALUES (?, ?, ?)")
            .bind(id)
            .bind(new.stock)
            .bind(new.stock)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.created(id, new.shop_id).await;
        Ok(OrdinaryVoucher { id, spec: new })
    }

    /// After a voucher's creation committed: a "none" cached for its id
    /// before it existed must go, and its shop's list gains it.
    async fn created(&self, id: VoucherId, shop: ShopId) {
        self.bound.created(id);
        self.details.refresh_or_retry(&id).await;
        self.by_shop.refresh_or_retry(&shop).await;
    }

    /// An admin's change of voucher `id`'s text; every instance serves it
    /// once the refresh's message arrives (within L1's TTL if it is lost).
    pub async fn update_text(&self, id: VoucherId, text: VoucherText) -> Result<(), VoucherError> {
        let found = sqlx::query_scalar::<_, VoucherId>("SELECT id FROM vouchers WHERE id = ? FOR UPDATE");
        let mut tx = self.db.begin().await?;
        if found.bind(id).fetch_optional(&mut *tx).await?.is_none() {
            return Err(VoucherError::NotFound(id));
        }
        sqlx::query("UPDATE vouchers SET title = ?, sub_title = ?, rules = ? WHERE id = ?")
            .bind(&text.title)
            .bind(&text.sub_title)
            .bind(&text.rules)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.details.refresh_or_retry(&id).await;
        Ok(())
    }

    /// Writes each bucket's sale state (its share of the stock) under its
    /// slot's verified generation (see `seckill::scripts`); if Redis changes
    /// before it lands, the bucket is paused and rebuilt like any other.
    async fn preload(&self, id: VoucherId, v: &NewSeckillVoucher) -> redis::RedisResult<()> {
        let window = (v.begin_time.timestamp_millis(), v.end_time.timestamp_millis());
        for sale in buckets::sales(id, v.buckets) {
            let stock = buckets::share(i64::from(v.stock), v.buckets, sale.bucket);
            buckets::preload(&self.kv, sale, stock, window, v.pay_value).await?;
        }
        Ok(())
    }

    /// The details of vouchers `ids` known to exist (a shop's list), in
    /// order: the L1 misses from Redis in one round trip.
    pub async fn details_many(&self, ids: &[VoucherId]) -> Result<Vec<Option<Arc<VoucherDetails>>>, CacheError> {
        self.details.get_many(ids).await
    }

    /// The voucher's details: an id far above the highest voucher id is
    /// refused (see `IdBound`; for a known id that check is one atomic
    /// read), then
    /// L1, then Redis, then MySQL. `None` for an unknown voucher; that answer
    /// is cached too.
    pub async fn details(&self, id: VoucherId) -> Result<Option<Arc<VoucherDetails>>, CacheError> {
        if !self.bound.admits(&self.db, id).await {
            self.details.count_invalid();
            return Ok(None);
        }
        self.details.get(&id).await
    }
}

/// Inserts a voucher's common row (`text`: title, sub-title, rules;
/// `prices`: paid and actual value, cents) in the caller's transaction,
/// which keeps the shop share-locked; [`VoucherError::UnknownShop`] unless
/// the shop exists.
async fn insert_voucher(
    tx: &mut sqlx::MySqlConnection,
    kind: VoucherKind,
    shop: ShopId,
    [title, sub_title, rules]: [&str; 3],
    (pay_value, actual_value): (u64, u64),
) -> Result<VoucherId, VoucherError> {
    if !crate::shops::repo::lock_existing(&mut *tx, shop).await? {
        return Err(VoucherError::UnknownShop(shop));
    }
    let id = sqlx::query(
        "INSERT INTO vouchers (shop_id, kind, title, sub_title, rules, pay_value, actual_value) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(shop)
    .bind(kind.as_str())
    .bind(title)
    .bind(sub_title)
    .bind(rules)
    .bind(pay_value)
    .bind(actual_value)
    .execute(&mut *tx)
    .await?
    .last_insert_id();
    Ok(VoucherId(id))
}

async fn of_shop(db: &MySqlPool, shop: ShopId) -> Result<Vec<VoucherId>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM vouchers WHERE shop_id = ? ORDER BY id").bind(shop).fetch_all(db).await
}

async fn load_details(db: &MySqlPool, id: VoucherId) -> Result<Option<VoucherDetails>, sqlx::Error> {
    type Row = (
        VoucherId,
        ShopId,
        String,
        String,
        String,
        String,
        u64,
        u64,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
        Option<u16>,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT v.id, v.shop_id, v.kind, v.title, v.sub_title, v.rules, v.pay_value, v.actual_value, \
         s.begin_time, s.end_time, s.buckets \
         FROM vouchers v LEFT JOIN seckill_vouchers s ON s.voucher_id = v.id WHERE v.id = ?",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(id, shop_id, kind, title, sub_title, rules, pay_value, actual_value, begin, end, buckets)| {
        let kind = if kind == VoucherKind::Ordinary.as_str() { VoucherKind::Ordinary } else { VoucherKind::Seckill };
        let sale = begin.zip(end).map(|(b, e)| SaleWindow {
            begin_ms: b.timestamp_millis(),
            end_ms: e.timestamp_millis(),
            buckets: buckets.unwrap_or(1),
        });
        VoucherDetails { id, shop_id, kind, title, sub_title, rules, pay_value, actual_value, sale }
    }))
}
