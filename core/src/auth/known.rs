//! The users' Bloom filter: every user id, in Redis, so that a read about a
//! user who does not exist (a made-up id in a follow list's path) is refused
//! without MySQL. Registration adds an id before the caller sees it; the
//! worker's `user_bloom` job builds the filter from `users` when Redis does
//! not hold a complete one. Until then every id "may exist" (see
//! `cityhub_platform::cache::bloom`): the filter never refuses a real user.

use cityhub_platform::cache::bloom::Bloom;
use sqlx::MySqlPool;

use crate::ids::UserId;
use crate::kv::Kv;

/// Ids read from `users` per query while building.
const BUILD_CHUNK: u64 = 50_000;

#[derive(Clone)]
pub struct KnownUsers {
    db: MySqlPool,
    kv: Kv,
    bloom: Bloom,
}

impl KnownUsers {
    pub fn new(db: MySqlPool, kv: Kv, bits: u64, hashes: u32) -> Self {
        let bloom = Bloom::new(&kv, "users", bits, hashes);
        Self { db, kv, bloom }
    }

    /// Adds `ids` (registration, before it answers).
    pub(crate) async fn add(&self, ids: &[UserId]) -> redis::RedisResult<()> {
        let items: Vec<String> = ids.iter().map(UserId::to_string).collect();
        self.bloom.add_all(&self.kv, &items).await
    }

    /// False only when `id` surely does not exist: one Redis read, no MySQL.
    pub async fn may_exist(&self, id: UserId) -> redis::RedisResult<bool> {
        let bits: Vec<u8> = self.bloom.check(id.to_string().as_bytes()).query_async(&mut self.kv.conn()).await?;
        Ok(!Bloom::refuses(&bits))
    }

    /// Builds the filter from MySQL when Redis holds no complete one;
    /// returns whether it did.
    pub async fn ensure(&self) -> anyhow::Result<bool> {
        if self.bloom.is_complete(&self.kv).await? {
            return Ok(false);
        }
        let (mut after, mut users) = (0u64, 0usize);
        loop {
            let ids: Vec<u64> = sqlx::query_scalar("SELECT id FROM users WHERE id > ? ORDER BY id LIMIT ?")
                .bind(after)
                .bind(BUILD_CHUNK)
                .fetch_all(&self.db)
                .await?;
            let Some(&last) = ids.last() else { break };
            let items: Vec<String> = ids.iter().map(u64::to_string).collect();
            self.bloom.add_all(&self.kv, &items).await?;
            (after, users) = (last, users + ids.len());
        }
        self.bloom.complete(&self.kv).await?;
        tracing::info!(users, "user Bloom filter built from MySQL");
        Ok(true)
    }
}
