//! The users' Bloom filter: every user id, in Redis, so that a read about a
//! user who does not exist (a made-up id in a follow list's path) is refused
//! without MySQL. Registration adds an id before the caller sees it; the
//! worker's `user_bloom` job builds the filter from `users` when Redis does
//! not hold a complete one. Until then every id "may exist" (see
//! `cityhub_platform::cache::bloom`): the filter never refuses a real user.
//!
//! Redis can come back older than it was (a replica promoted behind its
//! master, a restore): such a filter lacks the newest users' bits yet still
//! says it is complete. So completeness is also stamped with the Redis
//! generation it was built under (`cityhub_platform::kv::generation`); a
//! filter of another generation refuses nothing until the job rebuilds it.

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
        // One hash tag for the filter and its stamp: one round trip reads both.
        let bloom = Bloom::new(&kv, "{users}", bits, hashes);
        Self { db, kv, bloom }
    }

    /// Adds `ids` (registration, before it answers).
    pub(crate) async fn add(&self, ids: &[UserId]) -> redis::RedisResult<()> {
        let items: Vec<String> = ids.iter().map(UserId::to_string).collect();
        self.bloom.add_all(&self.kv, &items).await
    }

    /// False only when `id` surely does not exist: one Redis round trip, no MySQL.
    pub async fn may_exist(&self, id: UserId) -> redis::RedisResult<bool> {
        let generation = self.kv.generation.current(&self.stamp_key()).await?;
        let mut read = redis::pipe();
        read.add_command(self.bloom.check(id.to_string().as_bytes())).get(self.stamp_key());
        let (bits, stamp): (Vec<u8>, Option<String>) = read.query_async(&mut self.kv.conn()).await?;
        Ok(!(Bloom::refuses(&bits) && stamp.as_deref() == Some(&*generation)))
    }

    /// The key stamped with the generation the filter was completed under.
    fn stamp_key(&self) -> String {
        self.kv.keys.bloom("{users}:generation")
    }

    /// Builds the filter from MySQL when Redis holds no complete one;
    /// returns whether it did.
    pub async fn ensure(&self) -> anyhow::Result<bool> {
        let generation = self.kv.generation.current(&self.stamp_key()).await?;
        let stamp: Option<String> = redis::AsyncCommands::get(&mut self.kv.conn(), self.stamp_key()).await?;
        if stamp.as_deref() == Some(&*generation) && self.bloom.is_complete(&self.kv).await? {
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
        let _: () = redis::AsyncCommands::set(&mut self.kv.conn(), self.stamp_key(), &*generation).await?;
        tracing::info!(users, "user Bloom filter built from MySQL");
        Ok(true)
    }
}
