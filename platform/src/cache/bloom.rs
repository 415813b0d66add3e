//! A Bloom filter kept in a Redis bitmap, shared by every instance, with no
//! Redis module (RedisBloom is not assumed). Items are hashed here (SHA-256,
//! stable across builds and hosts) into `hashes` positions by double hashing.
//!
//! Invariant: bit 0 is set only once the filter holds every item, so a
//! filter that is missing, partly built or lost with Redis data answers
//! "maybe" for everything and never refuses an existing item. Items are only
//! added, never removed: an add racing a rebuild cannot be lost, since both
//! only set bits.

use sha2::{Digest, Sha256};

use crate::kv::Kv;

/// How many positions one rebuild pipeline sets.
const REBUILD_CHUNK: usize = 4096;

/// One filter: its key, its size in bits and its number of hash functions.
#[derive(Clone, Debug)]
pub struct Bloom {
    key: String,
    bits: u64,
    hashes: u32,
}

impl Bloom {
    pub fn new(kv: &Kv, name: &str, bits: u64, hashes: u32) -> Self {
        assert!(bits > 1 && hashes > 0, "a Bloom filter needs bits and hashes");
        Self { key: kv.keys.bloom(name), bits, hashes }
    }

    /// The bit positions of `item`, all in `1..bits` (bit 0 marks a complete filter).
    pub fn positions(&self, item: &[u8]) -> impl Iterator<Item = u64> + '_ {
        let digest = Sha256::digest(item);
        let h1 = u64::from_le_bytes(digest[0..8].try_into().expect("8 bytes"));
        let h2 = u64::from_le_bytes(digest[8..16].try_into().expect("8 bytes")) | 1;
        (0..u64::from(self.hashes)).map(move |i| 1 + h1.wrapping_add(i.wrapping_mul(h2)) % (self.bits - 1))
    }

    /// Adds `item`. Creates the bitmap if it is missing, which is harmless:
    /// without bit 0 it is not trusted until a rebuild completes it.
    pub async fn add(&self, kv: &Kv, item: &[u8]) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        for p in self.positions(item) {
            pipe.setbit(&self.key, p as usize, true).ignore();
        }
        pipe.query_async(&mut kv.conn()).await
    }

    /// Adds every item, then marks the filter complete.
    pub async fn rebuild<I: AsRef<[u8]>>(&self, kv: &Kv, items: impl IntoIterator<Item = I>) -> redis::RedisResult<()> {
        self.add_all(kv, items).await?;
        self.complete(kv).await
    }

    /// Marks the filter complete: every item is in it.
    pub async fn complete(&self, kv: &Kv) -> redis::RedisResult<()> {
        redis::cmd("SETBIT").arg(&self.key).arg(0).arg(1).query_async::<i64>(&mut kv.conn()).await.map(drop)
    }

    /// Adds every item (a few pipelines, not one round trip an item).
    pub async fn add_all<I: AsRef<[u8]>>(&self, kv: &Kv, items: impl IntoIterator<Item = I>) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        let mut queued = 0;
        for item in items {
            for p in self.positions(item.as_ref()) {
                pipe.setbit(&self.key, p as usize, true).ignore();
                queued += 1;
            }
            if queued >= REBUILD_CHUNK {
                pipe.query_async::<()>(&mut kv.conn()).await?;
                pipe = redis::pipe();
                queued = 0;
            }
        }
        if queued > 0 {
            pipe.query_async::<()>(&mut kv.conn()).await?;
        }
        Ok(())
    }

    /// True once a rebuild completed the filter (and Redis kept it).
    pub async fn is_complete(&self, kv: &Kv) -> redis::RedisResult<bool> {
        redis::cmd("GETBIT").arg(&self.key).arg(0).query_async(&mut kv.conn()).await
    }

    /// The one read [`Bloom::refuses`] interprets (`BITFIELD_RO`: bit 0,
    /// then `item`'s bits), so a lookup can ask the filter in the same round
    /// trip as its other reads.
    pub fn check(&self, item: &[u8]) -> redis::Cmd {
        let mut cmd = redis::cmd("BITFIELD_RO");
        cmd.arg(&self.key).arg("GET").arg("u1").arg(0);
        for p in self.positions(item) {
            cmd.arg("GET").arg("u1").arg(p);
        }
        cmd
    }

    /// `true` when the filter is complete and says the item was never added
    /// (`bits` as [`Bloom::check`] answers them).
    pub fn refuses(bits: &[u8]) -> bool {
        matches!(bits.split_first(), Some((1, rest)) if rest.contains(&0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bloom() -> Bloom {
        Bloom { key: "t".into(), bits: 1 << 16, hashes: 7 }
    }

    #[test]
    fn positions_are_stable_in_range_and_never_the_completion_bit() {
        let b = bloom();
        let a: Vec<u64> = b.positions(b"42").collect();
        assert_eq!(a, b.positions(b"42").collect::<Vec<_>>());
        assert_eq!(a.len(), 7);
        assert!(a.iter().all(|p| (1..1 << 16).contains(p)));
        assert_ne!(a, b.positions(b"43").collect::<Vec<_>>());
    }

    #[test]
    fn only_a_complete_filter_refuses() {
        assert!(!Bloom::refuses(&[0, 0, 0]), "incomplete filter: maybe");
        assert!(!Bloom::refuses(&[1, 1, 1]), "every bit set: maybe");
        assert!(Bloom::refuses(&[1, 1, 0]));
        assert!(!Bloom::refuses(&[]));
    }

    /// With 2^16 bits and 7 hashes, 4,000 items should give about 0.06% false
    /// positives; allow up to 1%.
    #[test]
    fn the_false_positive_rate_is_near_the_design_figure() {
        let b = bloom();
        let mut set = vec![false; 1 << 16];
        for i in 0..4000u32 {
            for p in b.positions(i.to_string().as_bytes()) {
                set[p as usize] = true;
            }
        }
        let fp = (1_000_000..1_020_000u32)
            .filter(|i| b.positions(i.to_string().as_bytes()).all(|p| set[p as usize]))
            .count();
        assert!(fp < 200, "{fp} false positives in 20,000");
    }
}
