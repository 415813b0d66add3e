//! Shops: reading one through the two-level cache, the paged list, nearby
//! search, admin writes that keep every derived copy in step, and unique
//! visitors.
//!
//! Where a shop lives and what each copy promises:
//! - MySQL is the truth ([`repo`]).
//! - The shop cache serves stale while one rebuild runs
//!   ([`Freshness::StaleWhileRebuild`]): a shop page may show a value up to
//!   its logical TTL old after a change that bypassed [`Shops::update`];
//!   through `update`, every instance has the new value as soon as the
//!   invalidation reaches it, and within `cache.l1_ttl_ms` if it is lost.
//! - The Bloom filter of shop ids refuses ids that were never created. An id
//!   is added before its row commits (a failed commit leaves a harmless false
//!   positive, never a false negative).
//! - The GEO index per type ([`geo`]).

pub mod geo;
pub mod repo;
pub mod visitors;

use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use cityhub_platform::cache::{Bloom, Cache, CacheError, Caches, Freshness, LoadError, Loader, Spec};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

pub use geo::Hit;
pub use repo::WriteError;
pub use visitors::{VisitorCounts, Visitors};

use crate::config::{CacheSettings, ShopSettings};
use crate::ids::{ShopId, UserId};
use crate::kv::Kv;
use geo::GeoIndex;
use repo::ShopRepo;

/// Ids above this cannot exist (the API's ids are exact in JavaScript):
/// refused before any lookup.
pub const MAX_ID: u64 = 9_007_199_254_740_991;

/// A position: `x` the longitude, `y` the latitude, degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    /// Whether Redis GEO (and the `shops` table) accept this position.
    pub fn is_valid(&self) -> bool {
        (-180.0..=180.0).contains(&self.x) && (-85.051_128_78..=85.051_128_78).contains(&self.y)
    }
}

/// A stored shop: its id and what it was last written with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shop {
    pub id: ShopId,
    #[serde(flatten)]
    pub spec: NewShop,
}

/// A shop to create, or what replaces a shop on update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewShop {
    pub name: String,
    pub type_id: u64,
    pub address: String,
    pub position: Option<Point>,
    /// Cents.
    pub avg_price: u64,
    /// Tenths of a star (47 = 4.7).
    pub score: u32,
    pub open_hours: String,
}

impl NewShop {
    /// A shop of the first type with no position.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            type_id: 1,
            address: String::new(),
            position: None,
            avg_price: 0,
            score: 0,
            open_hours: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShopType {
    pub id: u64,
    pub name: String,
    pub icon: String,
    pub sort: u32,
}

/// A nearby shop and how far it is.
#[derive(Debug, Clone)]
pub struct Nearby {
    pub shop: Arc<Shop>,
    pub distance_m: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum ShopError {
    #[error("shop {0} does not exist")]
    NotFound(ShopId),
    #[error("shop type {0} does not exist")]
    UnknownType(u64),
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: &'static str },
    /// A rebuild elsewhere did not finish in time.
    #[error("busy rebuilding; try again")]
    Busy,
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

impl From<WriteError> for ShopError {
    fn from(err: WriteError) -> Self {
        match err {
            WriteError::UnknownType(t) => Self::UnknownType(t),
            WriteError::UnknownShop(id) => Self::NotFound(id),
            WriteError::Db(e) => Self::Db(e),
        }
    }
}

struct FromMySql(ShopRepo);

impl Loader<ShopId, Shop> for FromMySql {
    fn load<'a>(
        &'a self,
        id: &'a ShopId,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Option<Shop>, LoadError>> + Send + 'a>> {
        Box::pin(async move { Ok(self.0.find(*id).await?) })
    }
}

/// The shop service. Clone freely.
#[derive(Clone)]
pub struct Shops {
    repo: ShopRepo,
    kv: Kv,
    cache: Cache<ShopId, Shop>,
    bloom: Bloom,
    geo: GeoIndex,
    visitors: Visitors,
    uv_max_days: u32,
    /// The shop types (a handful of rows that change with a migration).
    types: moka::future::Cache<(), Arc<Vec<ShopType>>>,
}

impl Shops {
    /// Returns the service and the visitor queue for [`Shops::record_visits`].
    pub fn new(
        db: MySqlPool,
        kv: Kv,
        caches: &Caches,
        cache: &CacheSettings,
        settings: &ShopSettings,
    ) -> (Self, tokio::sync::mpsc::Receiver<visitors::Visit>) {
        let repo = ShopRepo::new(db);
        let bloom = Bloom::new(&kv, "shops", settings.bloom_bits, settings.bloom_hashes);
        let spec = Spec {
            name: "shops",
            ttl: settings.cache_ttl_secs,
            freshness: Freshness::StaleWhileRebuild,
            bloom: Some(bloom.clone()),
        };
        let shop_cache = Cache::new(spec, caches, FromMySql(repo.clone()));
        let geo = GeoIndex::new(kv.clone(), repo.clone(), cache.lock_lease_ms, cache.wait_ms);
        let (visitors, queue) = Visitors::new(kv.clone(), settings.uv_retention_days);
        let types = moka::future::Cache::builder().max_capacity(1).time_to_live(Duration::from_secs(60)).build();
        let shops =
            Self { repo, kv, cache: shop_cache, bloom, geo, visitors, uv_max_days: settings.uv_max_days, types };
        (shops, queue)
    }

    /// Writes queued visits until `stop` (each process that serves reads runs it once).
    pub async fn record_visits(&self, queue: tokio::sync::mpsc::Receiver<visitors::Visit>, stop: CancellationToken) {
        self.visitors.clone().run(queue, stop).await
    }

    /// One shop: L1, then Redis, then MySQL (see the module note).
    pub async fn get(&self, id: ShopId) -> Result<Arc<Shop>, ShopError> {
        if id.get() == 0 || id.get() > MAX_ID {
            self.cache.count_invalid();
            return Err(ShopError::NotFound(id));
        }
        self.cache.get(&id).await?.ok_or(ShopError::NotFound(id))
    }

    /// Queues a visit of `shop_id` by `user_id` for the unique-visitor count.
    pub fn visited(&self, shop_id: ShopId, user_id: UserId) {
        self.visitors.record(shop_id, user_id);
    }

    /// Creates a shop: its id joins the Bloom filter before the row commits,
    /// and its position joins its type's index after.
    pub async fn create(&self, new: &NewShop) -> Result<Shop, ShopError> {
        check(new)?;
        let this = self.clone();
        let new = new.clone();
        cityhub_platform::run_to_completion(async move {
            let mut tx = this.repo.pool().begin().await?;
            let id = this.repo.insert(&mut tx, &new).await?;
            this.bloom.add(&this.kv, id.to_string().as_bytes()).await?;
            tx.commit().await?;
            if let Some(at) = new.position {
                this.index(new.type_id, id, at).await;
            }
            // A "none" cached for this id before it existed must go.
            this.cache.refresh_or_retry(&id).await;
            Ok(Shop { id, spec: new })
        })
        .await
    }

    /// Replaces shop `id`; after the commit, its cache entry is reloaded and
    /// every instance told, and it moves in the GEO indexes.
    pub async fn update(&self, id: ShopId, new: &NewShop) -> Result<Shop, ShopError> {
        check(new)?;
        if id.get() == 0 || id.get() > MAX_ID {
            return Err(ShopError::NotFound(id));
        }
        let this = self.clone();
        let new = new.clone();
        cityhub_platform::run_to_completion(async move {
            let mut tx = this.repo.pool().begin().await?;
            let before = this.repo.replace(&mut tx, id, &new).await?;
            tx.commit().await?;
            if before.spec.position.is_some() && (before.spec.type_id != new.type_id || new.position.is_none()) {
                if let Err(err) = this.geo.remove(before.spec.type_id, id).await {
                    tracing::warn!(shop_id = %id, error = %err, "cannot take a shop out of its GEO index");
                    let _ = this.geo.forget(before.spec.type_id).await;
                }
            }
            if let Some(at) = new.position {
                this.index(new.type_id, id, at).await;
            }
            this.cache.refresh_or_retry(&id).await;
            Ok(Shop { id, spec: new })
        })
        .await
    }

    /// Puts a committed position into its index; an index that cannot take
    /// it is dropped, so its next reader rebuilds it from MySQL.
    async fn index(&self, type_id: u64, id: ShopId, at: Point) {
        if let Err(err) = self.geo.put(type_id, id, at).await {
            tracing::warn!(shop_id = %id, error = %err, "cannot update the GEO index; dropping it for a rebuild");
            let _ = self.geo.forget(type_id).await;
        }
    }

    /// A page of shops by id, of one type or all; the cursor is the last id seen.
    pub async fn page(&self, type_id: Option<u64>, after: ShopId, limit: u32) -> Result<Vec<Shop>, ShopError> {
        Ok(self.repo.page(type_id, after, limit).await?)
    }

    /// Shops of `type_id` within `radius_m` of `at`, nearest first.
    pub async fn nearby(&self, type_id: u64, at: Point, radius_m: f64, limit: u32) -> Result<Vec<Nearby>, ShopError> {
        if !at.is_valid() || !radius_m.is_finite() || radius_m <= 0.0 {
            return Err(ShopError::Invalid { field: "x, y, radius_m", reason: "must be a valid position and radius" });
        }
        // No index is built for a type that does not exist.
        if !self.types().await?.iter().any(|t| t.id == type_id) {
            return Err(ShopError::UnknownType(type_id));
        }
        let hits = self.geo.search(type_id, at, radius_m, limit).await?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            // An index rebuilt while a shop changed type may still list it
            // under the old one for a moment: the shop itself decides.
            match self.get(hit.shop_id).await {
                Ok(shop) if shop.spec.type_id == type_id => out.push(Nearby { shop, distance_m: hit.distance_m }),
                Ok(_) | Err(ShopError::NotFound(_)) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(out)
    }

    /// Every shop type in display order (cached for a minute).
    pub async fn types(&self) -> Result<Arc<Vec<ShopType>>, ShopError> {
        if let Some(types) = self.types.get(&()).await {
            return Ok(types);
        }
        let types = Arc::new(self.repo.types().await?);
        self.types.insert((), Arc::clone(&types)).await;
        Ok(types)
    }

    /// Unique visitors of an existing shop per day and over the range.
    pub async fn visitors(&self, id: ShopId, from: NaiveDate, to: NaiveDate) -> Result<VisitorCounts, ShopError> {
        if to < from {
            return Err(ShopError::Invalid { field: "to", reason: "must not be before from" });
        }
        if (to - from).num_days() >= i64::from(self.uv_max_days) {
            return Err(ShopError::Invalid { field: "to", reason: "the range spans more days than shops.uv_max_days" });
        }
        self.get(id).await?;
        Ok(self.visitors.count(id, from, to).await?)
    }

    /// The visitor recorder (for loading test data).
    pub fn visitor_log(&self) -> &Visitors {
        &self.visitors
    }

    /// Builds the Bloom filter from MySQL when it is missing or incomplete
    /// (a new deployment, Redis lost its data); returns whether it did.
    pub async fn ensure_bloom(&self) -> Result<bool, ShopError> {
        if self.bloom.is_complete(&self.kv).await? {
            return Ok(false);
        }
        let ids: Vec<String> = self.repo.ids().await?.iter().map(ShopId::to_string).collect();
        self.bloom.rebuild(&self.kv, &ids).await?;
        tracing::info!(shops = ids.len(), "shop Bloom filter built from MySQL");
        Ok(true)
    }
}

/// The rules every shop obeys, whoever writes it.
fn check(new: &NewShop) -> Result<(), ShopError> {
    let invalid = |field, reason| Err(ShopError::Invalid { field, reason });
    if new.name.trim().is_empty() {
        return invalid("name", "must not be blank");
    }
    if new.position.is_some_and(|p| !p.is_valid()) {
        return invalid("position", "x must be -180..=180 and y -85.05112878..=85.05112878");
    }
    if new.score > 50 {
        return invalid("score", "must be 0..=50 (tenths of a star)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shops_need_a_name_a_valid_position_and_a_score_up_to_five_stars() {
        assert!(check(&NewShop::named("a")).is_ok());
        assert!(check(&NewShop::named("  ")).is_err());
        let at = |x, y| NewShop { position: Some(Point { x, y }), ..NewShop::named("a") };
        assert!(check(&at(120.1, 30.2)).is_ok());
        assert!(check(&at(181.0, 30.2)).is_err());
        assert!(check(&at(120.1, 86.0)).is_err());
        assert!(check(&NewShop { score: 51, ..NewShop::named("a") }).is_err());
    }
}
