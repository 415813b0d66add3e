//! Order ids: 64-bit, time-ordered, unique across API instances.
//!
//! Layout (Snowflake): 41 bits of milliseconds since 2026-01-01 UTC (good for
//! ~69 years), 10 bits of node id, 12 bits of sequence (4096 ids per ms per
//! node). Why ids cannot collide:
//! - Within a process, [`OrderIds`] never reuses a (millisecond, sequence)
//!   pair: the millisecond it issues from never goes backwards even if the
//!   clock does, and when 4096 ids are spent it moves on to the next one.
//! - Across processes, each live process holds a distinct node id: either set
//!   by config, or leased from Redis (`SET NX` with a TTL, renewed while the
//!   process lives). Two live processes can never hold the same lease.
//! - A node id is reused only after its previous holder's lease expired, by
//!   which time the wall clock has moved past the ms that holder issued from
//!   (assuming the clock does not jump back by more than the lease TTL).

use std::sync::Mutex;
use std::time::Duration;

use redis::AsyncCommands;

use crate::kv::Kv;

/// 2026-01-01T00:00:00Z in Unix ms.
pub const EPOCH_MS: u64 = 1_767_225_600_000;
pub const MAX_NODE: u16 = 1023;
const NODE_BITS: u32 = 10;
const SEQ_BITS: u32 = 12;
const MAX_SEQ: u64 = (1 << SEQ_BITS) - 1;

/// Issues order ids for one node.
#[derive(Debug)]
pub struct OrderIds {
    node: u16,
    state: Mutex<(u64, u64)>, // (last ms since epoch, last sequence)
}

impl OrderIds {
    pub fn new(node: u16) -> Self {
        assert!(node <= MAX_NODE, "node id out of range");
        Self { node, state: Mutex::new((0, 0)) }
    }

    pub fn node(&self) -> u16 {
        self.node
    }

    /// The next id; strictly greater than every id this generator issued.
    pub fn next_id(&self) -> u64 {
        let now = crate::now_ms().saturating_sub(EPOCH_MS);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (last_ms, last_seq) = *state;
        let (ms, seq) = if now > last_ms {
            (now, 0)
        } else if last_seq < MAX_SEQ {
            (last_ms, last_seq + 1)
        } else {
            (last_ms + 1, 0)
        };
        *state = (ms, seq);
        (ms << (NODE_BITS + SEQ_BITS)) | (u64::from(self.node) << SEQ_BITS) | seq
    }
}

/// The Unix ms an id was issued at (to within the clock rules above).
pub fn issued_at_ms(id: u64) -> u64 {
    (id >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS
}

/// A node id held in Redis for as long as this process renews it.
pub struct NodeLease {
    pub node: u16,
    renewer: tokio::task::JoinHandle<()>,
}

impl Drop for NodeLease {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

const LEASE_TTL: Duration = Duration::from_secs(30);

impl NodeLease {
    /// Claims a free node slot (`SET NX PX`), starting from a shared cursor so
    /// instances spread over the slots, and keeps renewing it.
    pub async fn acquire(kv: &Kv) -> redis::RedisResult<Self> {
        let mut conn = kv.conn();
        let owner = format!("{}-{}", std::process::id(), rand::random::<u64>());
        for _ in 0..=MAX_NODE {
            let cursor: u64 = conn.incr(kv.keys.id_node_cursor(), 1).await?;
            let node = (cursor % (u64::from(MAX_NODE) + 1)) as u16;
            let key = kv.keys.id_node_lease(node);
            let opts = redis::SetOptions::default()
                .conditional_set(redis::ExistenceCheck::NX)
                .with_expiration(redis::SetExpiry::PX(LEASE_TTL.as_millis() as u64));
            let won: Option<String> = conn.set_options(&key, &owner, opts).await?;
            if won.is_some() {
                let renewer = tokio::spawn(renew(kv.clone(), key, owner));
                return Ok(Self { node, renewer });
            }
        }
        Err(redis::RedisError::from((redis::ErrorKind::Client, "all 1024 order-id node slots are leased")))
    }
}

async fn renew(kv: Kv, key: String, owner: String) {
    let mut conn = kv.conn();
    let mut tick = tokio::time::interval(LEASE_TTL / 3);
    loop {
        tick.tick().await;
        let held: redis::RedisResult<Option<String>> = conn.get(&key).await;
        match held {
            Ok(Some(v)) if v == owner => {
                let _: redis::RedisResult<bool> = conn.pexpire(&key, LEASE_TTL.as_millis() as i64).await;
            }
            Ok(_) => {
                tracing::error!(%key, "order-id node lease lost; ids may collide with another instance")
            }
            Err(err) => tracing::warn!(%key, error = %err, "cannot renew order-id node lease"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_strictly_increase_even_past_4096_per_ms() {
        let ids = OrderIds::new(7);
        let mut last = 0;
        for _ in 0..20_000 {
            let id = ids.next_id();
            assert!(id > last);
            last = id;
        }
    }

    #[test]
    fn ids_carry_their_node_and_time() {
        let ids = OrderIds::new(1023);
        let id = ids.next_id();
        assert_eq!((id >> SEQ_BITS) & 1023, 1023);
        assert!(issued_at_ms(id).abs_diff(crate::now_ms()) < 1000);
    }

    #[test]
    fn two_nodes_never_share_an_id() {
        let a = OrderIds::new(1);
        let b = OrderIds::new(2);
        let xs: std::collections::HashSet<u64> = (0..5000).map(|_| a.next_id()).collect();
        assert!((0..5000).all(|_| !xs.contains(&b.next_id())));
    }
}
