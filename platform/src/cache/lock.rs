//! A Redis lock with a lease: `SET key token NX PX lease`, released only by
//! the holder whose random token it still holds (`lease.lua` compares and
//! deletes in one step). A holder whose lease ran out cannot release the lock
//! the next holder took; it learns so from [`Held::release`].

use std::time::Duration;

use crate::kv::{Kv, LEASE};

/// A lock this process holds until [`Held::release`] or its lease runs out.
#[derive(Debug)]
pub struct Held {
    key: String,
    token: String,
}

/// Takes the lock `key` for `lease` if nobody holds it.
pub async fn try_acquire(kv: &Kv, key: String, lease: Duration) -> redis::RedisResult<Option<Held>> {
    let token = format!("{:032x}", rand::random::<u128>());
    let set: Option<String> = redis::cmd("SET")
        .arg(&key)
        .arg(&token)
        .arg("NX")
        .arg("PX")
        .arg(lease.as_millis() as u64)
        .query_async(&mut kv.conn())
        .await?;
    Ok(set.map(|_| Held { key, token }))
}

impl Held {
    /// Releases the lock; `false` when the lease had run out and the lock is
    /// gone or someone else's (their lock is left alone).
    pub async fn release(self, kv: &Kv) -> redis::RedisResult<bool> {
        let released: i64 = LEASE.key(&self.key).arg(&self.token).arg(0).invoke_async(&mut kv.conn()).await?;
        Ok(released == 1)
    }
}
