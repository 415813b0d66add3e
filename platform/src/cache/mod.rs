//! The two-level read-through cache every hot read uses (shops, voucher
//! details, hot lists): L1 in process (moka, bounded, short TTL), L2 in Redis
//! (a JSON envelope that carries its own logical expiry), then the use's
//! [`Loader`] (MySQL).
//!
//! - **One load per process.** Concurrent L1 misses on one key wait for one
//!   L2 read (moka's `try_get_with`).
//! - **One rebuild per cluster.** Whoever rebuilds an entry holds its Redis
//!   lock ([`lock`]); everyone else either gets the old value at once
//!   ([`Freshness::StaleWhileRebuild`]: values have no physical TTL, so
//!   there is always one to serve) or waits, bounded by `cache.wait_ms`, for
//!   the new one ([`Freshness::WaitForRebuild`], or
//!   [`Freshness::WaitForRebuildOrStaleWhenDown`], which serves the old value
//!   only when the rebuild cannot reach the source). Each use picks one in
//!   the [`Spec`] it is built with.
//! - **Penetration.** A loader's "none" is cached like a value, with the
//!   short `cache.null_ttl_secs` (and a physical TTL, so made-up ids do not
//!   pile up in Redis); an optional [`Bloom`] filter, asked in the same
//!   round trip as L2, refuses keys that were never added.
//! - **Avalanche.** Every expiry written is lengthened by a random share of
//!   its TTL (`cache.jitter_percent`).
//! - **Lists.** [`Cache::get_many`] reads the L1 misses of many keys from
//!   L2 in one round trip (a page of items).
//! - **Writes.** [`Cache::refresh`] reloads an entry under its lock after the
//!   caller committed a change, then tells every instance to drop its L1 copy
//!   ([`Invalidations`]); L1's TTL bounds staleness if that message is lost.

pub mod bloom;
mod invalidate;
pub mod lock;

use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use metrics::Counter;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use bloom::Bloom;
pub use invalidate::publish as publish_invalidation;
pub use invalidate::Invalidations;

use crate::config::CacheSettings;
use crate::kv::Kv;
use crate::metrics as m;

/// How long a caller that found the rebuild lock taken waits between looks.
const RETRY: Duration = Duration::from_millis(20);
/// After a background rebuild attempt, this process does not try that key
/// again for this long (the attempt that holds the lock may be elsewhere).
const REBUILD_BACKOFF: Duration = Duration::from_millis(100);

/// What a reader may be given while an entry is being rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The old value, at once; one caller cluster-wide rebuilds in the
    /// background (availability first: shop pages).
    StaleWhileRebuild,
    /// The new value: wait for the one rebuild, at most `cache.wait_ms`,
    /// then fail with [`CacheError::Busy`] (consistency first: prices).
    WaitForRebuild,
    /// As [`Freshness::WaitForRebuild`] while the source answers; when the
    /// rebuild fails (the source cannot be reached) or does not finish in
    /// time, the old value rather than an error. For values that never
    /// change once written, whose freshness guards only against edits behind
    /// the platform's back (a seckill voucher's price and sale window): an
    /// outage of the source of any length then never stops their readers.
    WaitForRebuildOrStaleWhenDown,
}

/// One use of the cache.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Names its keys and metrics: `cache:<name>:<key>`.
    pub name: &'static str,
    /// Logical TTL in L2.
    pub ttl: Duration,
    pub freshness: Freshness,
    /// Items never added here are refused without a lookup.
    pub bloom: Option<Bloom>,
}

/// The error a loader returns (the use's own, boxed).
pub type LoadError = Box<dyn std::error::Error + Send + Sync>;

/// Reads one entry from the source of truth; `None` when it does not exist.
pub trait Loader<K, V>: Send + Sync + 'static {
    fn load<'a>(&'a self, key: &'a K) -> Pin<Box<dyn Future<Output = Result<Option<V>, LoadError>> + Send + 'a>>;

    /// Loads every key of `keys` in one go (one query), in order, if this
    /// loader can; [`Cache::get_many`] then rebuilds a page's misses with
    /// it instead of key by key.
    #[allow(clippy::type_complexity)]
    fn load_many<'a>(
        &'a self,
        _keys: &'a [K],
    ) -> Option<Pin<Box<dyn Future<Output = Result<Vec<Option<V>>, LoadError>> + Send + 'a>>> {
        None
    }
}

/// What a cache key must be: cheap to clone, printable for Redis, and
/// parsable back from an invalidation message.
pub trait CacheKey: Hash + Eq + Clone + Display + FromStr + Send + Sync + 'static {}

impl<T: Hash + Eq + Clone + Display + FromStr + Send + Sync + 'static> CacheKey for T {}

#[derive(Debug, Clone, thiserror::Error)]
pub enum CacheError {
    #[error(transparent)]
    Redis(Arc<redis::RedisError>),
    #[error("loading the entry failed: {0}")]
    Load(Arc<LoadError>),
    /// Another caller's rebuild did not finish within `cache.wait_ms`.
    #[error("the entry is being rebuilt; try again")]
    Busy,
}

impl From<redis::RedisError> for CacheError {
    fn from(err: redis::RedisError) -> Self {
        Self::Redis(Arc::new(err))
    }
}

/// An entry as L1 holds it: the value (`None`: known not to exist) and its
/// logical expiry, ms since the epoch.
#[derive(Debug)]
struct Entry<V> {
    value: Option<Arc<V>>,
    expires_ms: u64,
}

impl<V> Clone for Entry<V> {
    fn clone(&self) -> Self {
        Self { value: self.value.clone(), expires_ms: self.expires_ms }
    }
}

impl<V> Entry<V> {
    fn fresh(&self) -> bool {
        self.expires_ms > crate::now_ms()
    }
}

/// The L2 envelope.
#[derive(Serialize, Deserialize)]
struct Envelope<V> {
    #[serde(rename = "e")]
    expires_ms: u64,
    #[serde(rename = "v")]
    value: Option<V>,
}

struct Counters {
    l1_hits: Counter,
    l1_misses: Counter,
    l2_hits: Counter,
    l2_misses: Counter,
    stale: Counter,
    rebuilds: Counter,
    rebuild_failures: Counter,
    contention: Counter,
    refusals: Counter,
    refusals_invalid: Counter,
    invalidations: Counter,
}

impl Counters {
    fn new(cache: &'static str) -> Self {
        let layer =
            |name: &'static str, layer: &'static str| metrics::counter!(name, "cache" => cache, "layer" => layer);
        let one = |name: &'static str| metrics::counter!(name, "cache" => cache);
        Self {
            l1_hits: layer(m::CACHE_HITS, "l1"),
            l1_misses: layer(m::CACHE_MISSES, "l1"),
            l2_hits: layer(m::CACHE_HITS, "l2"),
            l2_misses: layer(m::CACHE_MISSES, "l2"),
            stale: one(m::CACHE_STALE),
            rebuilds: metrics::counter!(m::CACHE_REBUILDS, "cache" => cache, "result" => "ok"),
            rebuild_failures: metrics::counter!(m::CACHE_REBUILDS, "cache" => cache, "result" => "failed"),
            contention: one(m::CACHE_LOCK_CONTENTION),
            refusals: metrics::counter!(m::CACHE_REFUSALS, "cache" => cache, "reason" => "bloom"),
            refusals_invalid: metrics::counter!(m::CACHE_REFUSALS, "cache" => cache, "reason" => "invalid"),
            invalidations: one(m::CACHE_INVALIDATIONS),
        }
    }
}

struct Inner<K, V> {
    spec: Spec,
    settings: CacheSettings,
    kv: Kv,
    loader: Box<dyn Loader<K, V>>,
    l1: moka::future::Cache<K, Entry<V>>,
    /// Keys this process tried to rebuild in the background lately.
    rebuilding: moka::sync::Cache<K, ()>,
    bus: Invalidations,
    counters: Counters,
}

/// A two-level cache of `V` by `K`. Clone freely.
pub struct Cache<K, V> {
    inner: Arc<Inner<K, V>>,
}

impl<K, V> Clone for Cache<K, V> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone() }
    }
}

impl<K, V> Cache<K, V>
where
    K: CacheKey,
    V: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// Builds the cache and registers it for invalidations.
    pub fn new(spec: Spec, caches: &Caches, loader: impl Loader<K, V>) -> Self {
        let (settings, kv, bus) = (&caches.settings, &caches.kv, &caches.bus);
        let l1 =
            moka::future::Cache::builder().max_capacity(settings.l1_capacity).time_to_live(settings.l1_ttl_ms).build();
        let rebuilding = moka::sync::Cache::builder().max_capacity(10_000).time_to_live(REBUILD_BACKOFF).build();
        let inner = Arc::new(Inner {
            counters: Counters::new(spec.name),
            spec,
            settings: settings.clone(),
            kv: kv.clone(),
            loader: Box::new(loader),
            l1,
            rebuilding,
            bus: bus.clone(),
        });
        let weak = Arc::downgrade(&inner);
        bus.register(
            inner.spec.name,
            Arc::new(move |key: Option<String>| {
                let weak = weak.clone();
                Box::pin(async move {
                    let Some(inner) = weak.upgrade() else { return };
                    inner.counters.invalidations.increment(1);
                    match key {
                        None => inner.l1.invalidate_all(),
                        Some(key) => {
                            let Ok(key) = key.parse::<K>() else { return };
                            inner.l1.invalidate(&key).await;
                        }
                    }
                })
            }),
        );
        Self { inner }
    }

    /// The value of `key`, `None` when it does not exist.
    pub async fn get(&self, key: &K) -> Result<Option<Arc<V>>, CacheError> {
        let inner = &self.inner;
        let entry = match inner.l1.get(key).await {
            Some(entry) => {
                inner.counters.l1_hits.increment(1);
                entry
            }
            None => {
                inner.counters.l1_misses.increment(1);
                inner.l1.try_get_with_by_ref(key, self.fill(key)).await.map_err(Arc::unwrap_or_clone)?
            }
        };
        self.serve(key, entry).await
    }

    /// The value of `entry` (found for `key`), as its freshness rule says:
    /// at once while fresh, else stale with a background rebuild or after
    /// waiting for the one rebuild.
    async fn serve(&self, key: &K, entry: Entry<V>) -> Result<Option<Arc<V>>, CacheError> {
        let inner = &self.inner;
        if entry.fresh() {
            return Ok(entry.value);
        }
        match inner.spec.freshness {
            Freshness::StaleWhileRebuild => {
                inner.counters.stale.increment(1);
                self.rebuild_in_background(key);
                Ok(entry.value)
            }
            Freshness::WaitForRebuild => self.wait_for_fresh(key).await,
            Freshness::WaitForRebuildOrStaleWhenDown => match self.wait_for_fresh(key).await {
                Err(err @ (CacheError::Load(_) | CacheError::Busy)) => {
                    inner.counters.stale.increment(1);
                    tracing::debug!(cache = inner.spec.name, %key, error = %err, "source down: an expired entry served");
                    Ok(entry.value)
                }
                fresh => fresh,
            },
        }
    }

    /// The values of `keys`, in order, as [`Cache::get`] would answer each,
    /// with the L1 misses read from L2 in one pipelined round trip (a list
    /// page of twenty items costs one Redis call, not twenty). An entry
    /// missing from L2, and every miss of a cache with a Bloom filter, is
    /// filled as [`Cache::get`] fills it; every entry is then served by the
    /// same freshness rules.
    pub async fn get_many(&self, keys: &[K]) -> Result<Vec<Option<Arc<V>>>, CacheError> {
        let inner = &self.inner;
        let mut found: Vec<Option<Entry<V>>> = Vec::with_capacity(keys.len());
        for key in keys {
            let entry = inner.l1.get(key).await;
            match &entry {
                Some(_) => inner.counters.l1_hits.increment(1),
                None => inner.counters.l1_misses.increment(1),
            }
            found.push(entry);
        }
        let missing: Vec<usize> = (0..keys.len()).filter(|&i| found[i].is_none()).collect();
        if !missing.is_empty() && inner.spec.bloom.is_none() {
            let reads = missing
                .iter()
                .map(|&i| redis::Cmd::get(inner.kv.keys.cache_entry(inner.spec.name, &keys[i].to_string())));
            let raws = inner.kv.conn().query_each(reads.collect()).await?;
            for (&i, raw) in missing.iter().zip(raws) {
                let raw: Option<Vec<u8>> = redis::from_redis_value(raw).map_err(redis::RedisError::from)?;
                let Some(env) = raw.and_then(|raw| serde_json::from_slice::<Envelope<V>>(&raw).ok()) else {
                    inner.counters.l2_misses.increment(1);
                    continue;
                };
                inner.counters.l2_hits.increment(1);
                let entry = Entry { value: env.value.map(Arc::new), expires_ms: env.expires_ms };
                inner.l1.insert(keys[i].clone(), entry.clone()).await;
                found[i] = Some(entry);
            }
        }
        let missing: Vec<usize> = (0..keys.len()).filter(|&i| found[i].is_none()).collect();
        if missing.len() > 1 && inner.spec.bloom.is_none() {
            let wanted: Vec<K> = missing.iter().map(|&i| keys[i].clone()).collect();
            if let Some(entries) = self.load_and_store_many(&wanted).await? {
                for (&i, entry) in missing.iter().zip(entries) {
                    inner.l1.insert(keys[i].clone(), entry.clone()).await;
                    found[i] = Some(entry);
                }
            }
        }
        let mut values = Vec::with_capacity(keys.len());
        for (key, entry) in keys.iter().zip(found) {
            let entry = match entry {
                Some(entry) => entry,
                None => inner.l1.try_get_with_by_ref(key, self.fill(key)).await.map_err(Arc::unwrap_or_clone)?,
            };
            values.push(self.serve(key, entry).await?);
        }
        Ok(values)
    }

    /// Counts a key the use refused before any lookup (bad format, out of range).
    pub fn count_invalid(&self) {
        self.inner.counters.refusals_invalid.increment(1);
    }

    /// Reloads `key` from the source of truth into L2 (under its lock, so
    /// the last writer loaded last), then has every instance drop its L1
    /// copy. Call after committing a change.
    pub async fn refresh(&self, key: &K) -> Result<(), CacheError> {
        let deadline = tokio::time::Instant::now() + self.inner.settings.wait_ms;
        loop {
            if let Some(held) = self.lock(key).await? {
                let stored = self.load_and_store(key).await;
                let _ = held.release(&self.inner.kv).await;
                stored?;
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(CacheError::Busy);
            }
            tokio::time::sleep(RETRY).await;
        }
        self.inner.l1.invalidate(key).await;
        self.inner.bus.publish(self.inner.spec.name, &key.to_string()).await?;
        Ok(())
    }

    /// [`Cache::refresh`], retried in the background for a while when it
    /// fails (Redis or MySQL briefly away); until it succeeds, readers may be
    /// served the old entry, up to its logical TTL.
    pub async fn refresh_or_retry(&self, key: &K) {
        let Err(err) = self.refresh(key).await else { return };
        tracing::warn!(cache = self.inner.spec.name, %key, error = %err, "cannot refresh a changed entry; retrying");
        let (this, key) = (self.clone(), key.clone());
        tokio::spawn(async move {
            for attempt in 1..=10u32 {
                tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                if this.refresh(&key).await.is_ok() {
                    return;
                }
            }
            tracing::error!(cache = this.inner.spec.name, %key, "gave up refreshing a changed entry");
        });
    }

    /// L1 miss: one L2 read (with the Bloom check); an entry missing from L2
    /// is rebuilt by one caller cluster-wide while the others wait for it.
    async fn fill(&self, key: &K) -> Result<Entry<V>, CacheError> {
        if let Some(entry) = self.read_l2(key).await? {
            return Ok(entry);
        }
        self.rebuild_or_wait(key).await
    }

    /// The L2 entry of `key`, or a refusal when the Bloom filter says the key
    /// was never added; `None` when L2 has nothing.
    async fn read_l2(&self, key: &K) -> Result<Option<Entry<V>>, CacheError> {
        let inner = &self.inner;
        let name = key.to_string();
        // The filter and the entry sit in different slots: one round trip
        // on one server, one per node (in parallel) on a cluster.
        let mut reads = vec![redis::Cmd::get(inner.kv.keys.cache_entry(inner.spec.name, &name))];
        reads.extend(inner.spec.bloom.as_ref().map(|bloom| bloom.check(name.as_bytes())));
        let mut replies = inner.kv.conn().query_each(reads).await?.into_iter();
        let parse = redis::RedisError::from;
        let raw: Option<Vec<u8>> =
            redis::from_redis_value(replies.next().unwrap_or(redis::Value::Nil)).map_err(parse)?;
        if let Some(bits) = replies.next() {
            let bits: Vec<u8> = redis::from_redis_value(bits).map_err(parse)?;
            if Bloom::refuses(&bits) {
                return Ok(Some(self.refusal()));
            }
        }
        let Some(raw) = raw else {
            inner.counters.l2_misses.increment(1);
            return Ok(None);
        };
        match serde_json::from_slice::<Envelope<V>>(&raw) {
            Ok(env) => {
                inner.counters.l2_hits.increment(1);
                Ok(Some(Entry { value: env.value.map(Arc::new), expires_ms: env.expires_ms }))
            }
            Err(err) => {
                // Written by an older build with another shape: rebuild it.
                tracing::warn!(cache = inner.spec.name, key = %name, error = %err, "unreadable cache entry");
                inner.counters.l2_misses.increment(1);
                Ok(None)
            }
        }
    }

    /// Rebuilds `key` if this caller wins its lock; otherwise waits for the
    /// winner's entry, at most `cache.wait_ms`.
    async fn rebuild_or_wait(&self, key: &K) -> Result<Entry<V>, CacheError> {
        let deadline = tokio::time::Instant::now() + self.inner.settings.wait_ms;
        loop {
            if let Some(held) = self.lock(key).await? {
                // The previous holder may have just finished.
                let entry = match self.read_l2(key).await? {
                    Some(entry) if entry.fresh() => Ok(entry),
                    _ => self.load_and_store(key).await,
                };
                let _ = held.release(&self.inner.kv).await;
                return entry;
            }
            tokio::time::sleep(RETRY).await;
            if let Some(entry) = self.read_l2(key).await?.filter(Entry::fresh) {
                return Ok(entry);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(CacheError::Busy);
            }
        }
    }

    /// An expired entry that must not be served: one caller per process
    /// (moka's compute) fetches the fresh one.
    async fn wait_for_fresh(&self, key: &K) -> Result<Option<Arc<V>>, CacheError> {
        use moka::ops::compute::{CompResult, Op};
        let result = self
            .inner
            .l1
            .entry_by_ref(key)
            .and_try_compute_with(|current| async move {
                if current.is_some_and(|c| c.value().fresh()) {
                    return Ok(Op::Nop);
                }
                let entry = match self.read_l2(key).await? {
                    Some(entry) if entry.fresh() => entry,
                    _ => self.rebuild_or_wait(key).await?,
                };
                Ok::<_, CacheError>(Op::Put(entry))
            })
            .await?;
        Ok(match result {
            CompResult::Inserted(e) | CompResult::ReplacedWith(e) | CompResult::Unchanged(e) => e.into_value().value,
            CompResult::StillNone(_) | CompResult::Removed(_) => None,
        })
    }

    /// Serves-stale mode: at most one attempt per key per process every
    /// [`REBUILD_BACKOFF`]; the attempt that wins the lock rebuilds, the
    /// others pick up the new entry from L2 once it is there.
    fn rebuild_in_background(&self, key: &K) {
        let inner = &self.inner;
        if inner.rebuilding.contains_key(key) {
            return;
        }
        inner.rebuilding.insert(key.clone(), ());
        let (this, key) = (self.clone(), key.clone());
        tokio::spawn(async move {
            let entry = match this.lock(&key).await {
                Ok(Some(held)) => {
                    let entry = this.load_and_store(&key).await;
                    let _ = held.release(&this.inner.kv).await;
                    entry
                }
                Ok(None) => {
                    tokio::time::sleep(REBUILD_BACKOFF / 2).await;
                    match this.read_l2(&key).await {
                        Ok(Some(entry)) if entry.fresh() => Ok(entry),
                        _ => return,
                    }
                }
                Err(err) => Err(err),
            };
            match entry {
                Ok(entry) => this.inner.l1.insert(key, entry).await,
                Err(err) => tracing::warn!(cache = this.inner.spec.name, %key, error = %err, "cache rebuild failed"),
            }
        });
    }

    async fn lock(&self, key: &K) -> Result<Option<lock::Held>, CacheError> {
        let inner = &self.inner;
        let lock_key = inner.kv.keys.cache_lock(inner.spec.name, &key.to_string());
        let held = lock::try_acquire(&inner.kv, lock_key, inner.settings.lock_lease_ms).await?;
        if held.is_none() {
            inner.counters.contention.increment(1);
        }
        Ok(held)
    }

    /// A "none" for a key the Bloom filter refused (kept in L1 only).
    fn refusal(&self) -> Entry<V> {
        self.inner.counters.refusals.increment(1);
        let ttl = self.jittered(self.inner.settings.null_ttl_secs);
        Entry { value: None, expires_ms: crate::now_ms() + ttl }
    }

    /// Whether the Bloom filter (if any) says `key` was never added.
    async fn refused(&self, key: &K) -> Result<bool, CacheError> {
        let Some(bloom) = &self.inner.spec.bloom else { return Ok(false) };
        let bits: Vec<u8> = bloom.check(key.to_string().as_bytes()).query_async(&mut self.inner.kv.conn()).await?;
        Ok(Bloom::refuses(&bits))
    }

    /// Loads `keys` from the source of truth in one go, when the loader
    /// can, and writes them to L2 in one round trip. No rebuild lock is
    /// taken: the lock keeps a stampede off one key, while a batch costs its
    /// reader one query whatever others do. `None` when the loader cannot.
    async fn load_and_store_many(&self, keys: &[K]) -> Result<Option<Vec<Entry<V>>>, CacheError> {
        let inner = &self.inner;
        let Some(load) = inner.loader.load_many(keys) else { return Ok(None) };
        let loaded = load.await.map_err(|err| {
            inner.counters.rebuild_failures.increment(1);
            CacheError::Load(Arc::new(err))
        })?;
        inner.counters.rebuilds.increment(keys.len() as u64);
        let mut sets = Vec::with_capacity(keys.len());
        let mut entries = Vec::with_capacity(keys.len());
        for (key, value) in keys.iter().zip(loaded) {
            let ttl = match value {
                Some(_) => self.jittered(inner.spec.ttl),
                None => self.jittered(inner.settings.null_ttl_secs),
            };
            let envelope = Envelope { expires_ms: crate::now_ms() + ttl, value };
            let mut set = redis::cmd("SET");
            set.arg(inner.kv.keys.cache_entry(inner.spec.name, &key.to_string()));
            set.arg(serde_json::to_vec(&envelope).expect("cache values serialize"));
            if envelope.value.is_none() {
                set.arg("PX").arg(ttl);
            }
            sets.push(set);
            entries.push(Entry { value: envelope.value.map(Arc::new), expires_ms: envelope.expires_ms });
        }
        inner.kv.conn().query_each(sets).await?;
        Ok(Some(entries))
    }

    /// Loads `key` from the source of truth and writes it to L2: a value
    /// with no physical TTL, a "none" with the short null TTL. A key the
    /// Bloom filter refuses is never loaded, whichever path asks.
    async fn load_and_store(&self, key: &K) -> Result<Entry<V>, CacheError> {
        let inner = &self.inner;
        if self.refused(key).await? {
            return Ok(self.refusal());
        }
        let loaded = inner.loader.load(key).await.map_err(|err| {
            inner.counters.rebuild_failures.increment(1);
            CacheError::Load(Arc::new(err))
        })?;
        inner.counters.rebuilds.increment(1);
        let ttl = match loaded {
            Some(_) => self.jittered(inner.spec.ttl),
            None => self.jittered(inner.settings.null_ttl_secs),
        };
        let envelope = Envelope { expires_ms: crate::now_ms() + ttl, value: loaded };
        let raw = serde_json::to_vec(&envelope).expect("cache values serialize");
        let l2_key = inner.kv.keys.cache_entry(inner.spec.name, &key.to_string());
        let mut set = redis::cmd("SET");
        set.arg(&l2_key).arg(raw);
        if envelope.value.is_none() {
            set.arg("PX").arg(ttl);
        }
        set.query_async::<()>(&mut inner.kv.conn()).await?;
        Ok(Entry { value: envelope.value.map(Arc::new), expires_ms: envelope.expires_ms })
    }

    /// `ttl` lengthened by a random 0 to `cache.jitter_percent` percent, ms.
    fn jittered(&self, ttl: Duration) -> u64 {
        let ms = ttl.as_millis() as u64;
        let extra = ms * self.inner.settings.jitter_percent / 100;
        ms + if extra > 0 { rand::random_range(0..=extra) } else { 0 }
    }
}

/// What the caches of one process share: the settings, the Redis handle and
/// the invalidation listener. Clone freely.
#[derive(Clone)]
pub struct Caches {
    kv: Kv,
    settings: CacheSettings,
    bus: Invalidations,
}

impl Caches {
    pub fn new(kv: &Kv, settings: &CacheSettings) -> Self {
        Self { kv: kv.clone(), settings: settings.clone(), bus: Invalidations::new(kv) }
    }

    /// Routes invalidations of `name` to `drop` (`Some(key)`, or `None` for
    /// everything after messages may have been missed): for in-memory caches
    /// that are not a [`Cache`], such as sessions.
    pub fn on_invalidation<F, Fut>(&self, name: &'static str, drop: F)
    where
        F: Fn(Option<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.bus.register(name, Arc::new(move |key| Box::pin(drop(key))));
    }

    /// Receives every instance's invalidations until `stop`; each process
    /// that serves reads runs it once.
    pub async fn listen(self, stop: tokio_util::sync::CancellationToken) {
        self.bus.listen(stop).await
    }
}

/// A [`Loader`] from an async closure, for uses that need no type of their own.
pub struct FnLoader<F>(pub F);

impl<K, V, F, Fut> Loader<K, V> for FnLoader<F>
where
    K: Clone + Send + Sync + 'static,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<V>, LoadError>> + Send + 'static,
{
    fn load<'a>(&'a self, key: &'a K) -> Pin<Box<dyn Future<Output = Result<Option<V>, LoadError>> + Send + 'a>> {
        Box::pin((self.0)(key.clone()))
    }
}
