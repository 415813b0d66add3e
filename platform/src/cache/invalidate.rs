//! Cross-instance L1 invalidation over Redis pub/sub. A writer publishes
//! `<cache>\n<key>` on one channel; every instance's listener drops that L1
//! entry. Pub/sub delivers at most once, so after every (re)subscription the
//! listener drops every L1 entry it serves (messages may have been missed
//! while it was away), and L1's own TTL bounds staleness if a message is lost.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::kv::Kv;
use crate::retry::Backoff;

/// Drops one L1 entry (`Some(key)`) or all of them (`None`).
pub(crate) type Dropper = Arc<dyn Fn(Option<String>) -> BoxFuture<'static, ()> + Send + Sync>;

/// Tells every instance to drop `key` of the in-memory cache `cache`.
pub async fn publish(kv: &Kv, cache: &str, key: &str) -> redis::RedisResult<()> {
    redis::cmd("PUBLISH")
        .arg(kv.keys.cache_invalidations())
        .arg(format!("{cache}\n{key}"))
        .query_async(&mut kv.conn())
        .await
}

/// The process's invalidation listener and the caches it serves. Clone freely.
#[derive(Clone)]
pub struct Invalidations {
    kv: Kv,
    channel: String,
    caches: Arc<RwLock<HashMap<&'static str, Dropper>>>,
}

impl Invalidations {
    pub fn new(kv: &Kv) -> Self {
        Self { kv: kv.clone(), channel: kv.keys.cache_invalidations(), caches: Default::default() }
    }

    /// Routes messages for `cache` to `drop` (`None`: drop every entry).
    pub(crate) fn register(&self, cache: &'static str, drop: Dropper) {
        self.caches.write().unwrap_or_else(|p| p.into_inner()).insert(cache, drop);
    }

    /// Tells every instance (this one too) to drop `key` of `cache` from L1.
    pub(crate) async fn publish(&self, cache: &str, key: &str) -> redis::RedisResult<()> {
        publish(&self.kv, cache, key).await
    }

    async fn dispatch(&self, cache: &str, key: Option<&str>) {
        let drops: Vec<Dropper> = {
            let caches = self.caches.read().unwrap_or_else(|p| p.into_inner());
            match cache {
                "*" => caches.values().cloned().collect(),
                name => caches.get(name).cloned().into_iter().collect(),
            }
        };
        for drop in drops {
            drop(key.map(str::to_owned)).await;
        }
    }

    /// Listens until `stop`, resubscribing after a lost connection.
    pub async fn listen(self, stop: CancellationToken) {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        while !stop.is_cancelled() {
            match self.kv.pubsub().await {
                Ok(mut pubsub) => match pubsub.subscribe(&self.channel).await {
                    Ok(()) => {
                        backoff.reset();
                        // Whatever was published while nobody listened is lost: start clean.
                        self.dispatch("*", None).await;
                        tracing::debug!(channel = %self.channel, "listening for cache invalidations");
                        let mut messages = pubsub.into_on_message();
                        loop {
                            tokio::select! {
                                _ = stop.cancelled() => return,
                                msg = messages.next() => match msg {
                                    Some(msg) => {
                                        let payload: String = msg.get_payload().unwrap_or_default();
                                        if let Some((cache, key)) = payload.split_once('\n') {
                                            self.dispatch(cache, Some(key)).await;
                                        }
                                    }
                                    None => break,
                                },
                            }
                        }
                        tracing::warn!("cache invalidation subscription lost; resubscribing");
                    }
                    Err(err) => tracing::warn!(error = %err, "cannot subscribe to cache invalidations"),
                },
                Err(err) => tracing::warn!(error = %err, "cannot connect for cache invalidations"),
            }
            if !backoff.wait(&stop).await {
                return;
            }
        }
    }
}
