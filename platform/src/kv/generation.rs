//! Which copy of its data Redis holds, as a generation: a random token kept
//! in the mark hash `<prefix>redis:generation` (`run_id`, `replid`, `gen`)
//! together with the identity of the server process that holds it.
//!
//! Redis can come back older than it was: restarted from an RDB snapshot or
//! an AOF written every second, or a replica promoted a little behind its
//! master. Such a copy still has keys, and nothing in them says they are
//! old. What always changes is the server's identity: a restart gives a new
//! `run_id`, a promotion a new `master_replid`. So whenever this process
//! cannot be sure it still talks to the process it verified (at connect, after
//! any connection error or NOSCRIPT, and every [`VERIFY_EVERY`]), it reads
//! both from `INFO` and compares them with the mark. A mark that does not
//! match (or is gone) is replaced, atomically and once for all processes,
//! by a fresh generation (`lua/generation_adopt.lua`).
//!
//! Data written under a generation carries it, and the scripts that act on
//! such data ([`Kv::eval_fenced`](super::Kv::eval_fenced)) refuse when the data's generation is not
//! the mark's, or when the caller's is not: a copy restored from the past
//! carries an old generation and is refused until it is rebuilt from the
//! truth. A fenced script is loaded only after a verification, and a server
//! that restarted has no scripts, so the first fenced call on a new server
//! always finds NOSCRIPT, verifies and adopts before anything runs there.
//! Tokens are random, never counted: a copy from any past moment carries a
//! token different from a freshly adopted one, whatever the clocks did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, RwLock, Weak};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::Script;

/// How often a process re-verifies even when nothing went wrong (a failover
/// that kept the connection and the script cache is seen within this).
pub const VERIFY_EVERY: Duration = Duration::from_secs(1);

static ADOPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/generation_adopt.lua")));

/// The Lua prelude of every fenced script (`lua/generation.lua`).
pub const LUA: &str = include_str!("../../../lua/generation.lua");

/// A fenced script: the prelude, then `source` (run it with
/// [`Kv::eval_fenced`](super::Kv::eval_fenced)).
pub fn fenced(source: &str) -> Script {
    Script::new(&format!("{LUA}\n{source}"))
}

/// The generation this process verified, and what invalidates it.
pub struct Generation {
    conn: ConnectionManager,
    mark: String,
    /// Bumped by every suspicion; a verification that saw it move starts over.
    suspicions: AtomicU64,
    current: RwLock<Option<Arc<str>>>,
    verifying: tokio::sync::Mutex<()>,
}

/// The server's identity as `INFO` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub run_id: String,
    pub replid: String,
}

/// The mark's `run_id`, `replid` and `gen`, as read.
type MarkFields = (Option<String>, Option<String>, Option<String>);

fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| line.trim_end().strip_prefix(field)?.strip_prefix(':'))
}

impl Generation {
    pub(super) fn new(conn: ConnectionManager, mark: String) -> Arc<Self> {
        let this = Arc::new(Self {
            conn,
            mark,
            suspicions: AtomicU64::new(0),
            current: RwLock::new(None),
            verifying: tokio::sync::Mutex::new(()),
        });
        tokio::spawn(watch(Arc::downgrade(&this)));
        this
    }

    /// The mark's key.
    pub fn mark_key(&self) -> &str {
        &self.mark
    }

    /// The generation to act under: the verified one, or a fresh verification.
    pub async fn current(&self) -> redis::RedisResult<Arc<str>> {
        if let Some(generation) = self.current.read().expect("generation lock").clone() {
            return Ok(generation);
        }
        self.verify().await
    }

    /// Something suggests the server may not be the verified one (a
    /// connection error, NOSCRIPT, a script that found another generation):
    /// the next [`current`](Self::current) verifies first.
    pub fn suspect(&self) {
        self.suspicions.fetch_add(1, Ordering::SeqCst);
        *self.current.write().expect("generation lock") = None;
    }

    /// Reads the server's identity and the mark; adopts a fresh generation
    /// if they differ. Answers the generation now current.
    pub async fn verify(&self) -> redis::RedisResult<Arc<str>> {
        let _one = self.verifying.lock().await;
        loop {
            let seen = self.suspicions.load(Ordering::SeqCst);
            let (identity, generation) = self.check().await?;
            if self.suspicions.load(Ordering::SeqCst) == seen {
                let generation: Arc<str> = Arc::from(generation);
                let mut current = self.current.write().expect("generation lock");
                if current.as_deref() != Some(&*generation) {
                    tracing::info!(run_id = %identity.run_id, replid = %identity.replid, %generation, "Redis generation verified");
                }
                *current = Some(Arc::clone(&generation));
                return Ok(generation);
            }
        }
    }

    async fn check(&self) -> redis::RedisResult<(Identity, String)> {
        let mut conn = self.conn.clone();
        let (server, replication, mark): (String, String, MarkFields) = redis::pipe()
            .cmd("INFO")
            .arg("server")
            .cmd("INFO")
            .arg("replication")
            .cmd("HMGET")
            .arg(&self.mark)
            .arg("run_id")
            .arg("replid")
            .arg("gen")
            .query_async(&mut conn)
            .await?;
        let field = |info: &str, name: &'static str| {
            info_field(info, name)
                .map(str::to_owned)
                .ok_or_else(|| redis::RedisError::from((redis::ErrorKind::Parse, "INFO", format!("no {name} in INFO"))))
        };
        let identity = Identity { run_id: field(&server, "run_id")?, replid: field(&replication, "master_replid")? };
        if let (Some(run_id), Some(replid), Some(generation)) = mark {
            if run_id == identity.run_id && replid == identity.replid {
                return Ok((identity, generation));
            }
        }
        let fresh = (rand::random::<u64>() >> 1).max(1).to_string();
        let adopted: String = ADOPT
            .key(&self.mark)
            .arg(&identity.run_id)
            .arg(&identity.replid)
            .arg(&fresh)
            .invoke_async(&mut conn)
            .await?;
        if adopted == fresh {
            metrics::counter!(crate::metrics::REDIS_GENERATIONS).increment(1);
            tracing::warn!(
                run_id = %identity.run_id, replid = %identity.replid, generation = %adopted,
                "Redis is not the copy last verified (restart, failover, restore or flush): new generation; \
                 sale state written before it is paused until rebuilt"
            );
        }
        Ok((identity, adopted))
    }
}

/// Re-verifies every [`VERIFY_EVERY`] while the generation is alive.
async fn watch(generation: Weak<Generation>) {
    let mut ticks = tokio::time::interval(VERIFY_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(generation) = generation.upgrade() else { return };
        let verified = generation.current.read().expect("generation lock").clone();
        match generation.check().await {
            Ok((_, now)) if verified.as_deref() == Some(now.as_str()) => {}
            Ok(_) => generation.suspect(),
            Err(err) => {
                tracing::debug!(error = %err, "Redis generation not re-verified");
                generation.suspect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::info_field;

    #[test]
    fn info_fields_are_read_by_name() {
        let info = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\n";
        assert_eq!(info_field(info, "run_id"), Some("abc123"));
        assert_eq!(info_field(info, "run"), None);
        let repl = "# Replication\r\nrole:master\r\nmaster_replid:ff00\r\nmaster_replid2:0000\r\n";
        assert_eq!(info_field(repl, "master_replid"), Some("ff00"));
    }
}
