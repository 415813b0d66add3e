//! The nearby-shops index: one Redis GEO set per shop type (member: shop
//! id), searched nearest first with `GEOSEARCH ... BYRADIUS ... ASC`.
//!
//! Invariant: an index that exists holds every positioned shop of its type.
//! A rebuild from MySQL writes a fresh key and renames it into place with
//! the member `-` in it, so "the key exists" means "built from MySQL"; writes
//! between rebuilds go to an existing index only (`geo_add_if_indexed.lua`)
//! and never create a partial one. A missing index (new type, Redis lost its
//! data) is rebuilt by its next reader, one per cluster (a Redis lock); shops
//! written while it ran are applied again after the rename.

use std::sync::LazyLock;
use std::time::Duration;

use chrono::Utc;
use cityhub_platform::cache::lock;
use redis::Script;

use super::repo::ShopRepo;
use super::{Point, ShopError};
use crate::ids::ShopId;
use crate::kv::{CityKeys, Kv};

static ADD_IF_INDEXED: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/geo_add_if_indexed.lua")));

/// The scripts this module runs, to load at connect time.
pub fn script() -> &'static Script {
    &ADD_IF_INDEXED
}

/// Marks an index built from MySQL; never a shop id, filtered from results.
const BUILT: &str = "-";
/// Shops changed this long before a rebuild began are applied again after it.
const REBUILD_OVERLAP: chrono::Duration = chrono::Duration::seconds(5);
const GEOADD_CHUNK: usize = 1000;

#[derive(Clone)]
pub struct GeoIndex {
    kv: Kv,
    repo: ShopRepo,
    lock_lease: Duration,
    wait: Duration,
}

/// One search hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub shop_id: ShopId,
    pub distance_m: f64,
}

impl GeoIndex {
    pub fn new(kv: Kv, repo: ShopRepo, lock_lease: Duration, wait: Duration) -> Self {
        Self { kv, repo, lock_lease, wait }
    }

    /// Puts shop `id` at `at` in `type_id`'s index if that index exists.
    pub async fn put(&self, type_id: u64, id: ShopId, at: Point) -> redis::RedisResult<()> {
        let key = self.kv.keys.shop_geo(type_id);
        ADD_IF_INDEXED.key(key).arg(at.x).arg(at.y).arg(id).invoke_async::<i64>(&mut self.kv.conn()).await.map(drop)
    }

    /// Takes shop `id` out of `type_id`'s index.
    pub async fn remove(&self, type_id: u64, id: ShopId) -> redis::RedisResult<()> {
        redis::cmd("ZREM").arg(self.kv.keys.shop_geo(type_id)).arg(id).query_async(&mut self.kv.conn()).await
    }

    /// Drops `type_id`'s index so its next reader rebuilds it (after a write
    /// that could not be applied to it).
    pub async fn forget(&self, type_id: u64) -> redis::RedisResult<()> {
        redis::cmd("DEL").arg(self.kv.keys.shop_geo(type_id)).query_async(&mut self.kv.conn()).await
    }

    /// Shops of `type_id` within `radius_m` of `at`, nearest first, at most `limit`.
    pub async fn search(&self, type_id: u64, at: Point, radius_m: f64, limit: u32) -> Result<Vec<Hit>, ShopError> {
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            if let Some(hits) = self.try_search(type_id, at, radius_m, limit).await? {
                return Ok(hits);
            }
            self.rebuild(type_id).await?;
            if tokio::time::Instant::now() >= deadline {
                return Err(ShopError::Busy);
            }
        }
    }

    /// `None` when the index does not exist; the existence check and the
    /// search go out in one round trip.
    async fn try_search(
        &self,
        type_id: u64,
        at: Point,
        radius_m: f64,
        limit: u32,
    ) -> redis::RedisResult<Option<Vec<Hit>>> {
        let key = self.kv.keys.shop_geo(type_id);
        // One more than asked: the marker may be among the hits.
        let (exists, raw): (bool, Vec<(String, f64)>) = redis::pipe()
            .exists(&key)
            .cmd("GEOSEARCH")
            .arg(&key)
            .arg("FROMLONLAT")
            .arg(at.x)
            .arg(at.y)
            .arg("BYRADIUS")
            .arg(radius_m)
            .arg("m")
            .arg("ASC")
            .arg("COUNT")
            .arg(limit + 1)
            .arg("WITHDIST")
            .query_async(&mut self.kv.conn())
            .await?;
        if !exists {
            return Ok(None);
        }
        let hits = raw
            .into_iter()
            .filter_map(|(member, distance_m)| Some(Hit { shop_id: member.parse().ok()?, distance_m }))
            .take(limit as usize)
            .collect();
        Ok(Some(hits))
    }

    /// Rebuilds `type_id`'s index from MySQL if this caller wins the lock;
    /// otherwise waits a little for the winner.
    pub async fn rebuild(&self, type_id: u64) -> Result<(), ShopError> {
        let Some(held) = lock::try_acquire(&self.kv, self.kv.keys.shop_geo_lock(type_id), self.lock_lease).await?
        else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            return Ok(());
        };
        let built = self.build(type_id).await;
        let _ = held.release(&self.kv).await;
        built
    }

    async fn build(&self, type_id: u64) -> Result<(), ShopError> {
        let started = Utc::now();
        let key = self.kv.keys.shop_geo(type_id);
        let building = format!("{key}:building");
        let shops = self.repo.positions(type_id, None).await?;
        let mut pipe = redis::pipe();
        pipe.del(&building).ignore();
        pipe.cmd("GEOADD").arg(&building).arg(0.0).arg(0.0).arg(BUILT).ignore();
        for chunk in shops.chunks(GEOADD_CHUNK) {
            let cmd = pipe.cmd("GEOADD").arg(&building);
            for (id, at) in chunk {
                cmd.arg(at.x).arg(at.y).arg(id);
            }
            cmd.ignore();
        }
        pipe.rename(&building, &key).ignore();
        pipe.query_async::<()>(&mut self.kv.conn()).await?;
        // Writes that found no index while this ran.
        for (id, at) in self.repo.positions(type_id, Some(started - REBUILD_OVERLAP)).await? {
            self.put(type_id, id, at).await?;
        }
        tracing::info!(type_id, shops = shops.len(), "shop GEO index rebuilt from MySQL");
        Ok(())
    }
}
