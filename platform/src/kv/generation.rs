//! Which copy of its data Redis holds, as a generation: a random token kept
//! in a mark hash `<prefix>redis:generation:{<tag>}` (`run_id`, `replid`, `gen`)
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
//!
//! **Answers fenced in time.** Every fenced call that ran (its script found
//! the caller's generation in the mark) and every verification confirms the
//! generation as of when it was sent. A process tells a client that a write
//! on a copy took effect (a seckill's 202) only while that copy's generation
//! was confirmed within [`CONFIRMED_WITHIN`] ([`Generation::confirmed_within`],
//! which asks the server when its last confirmation is older). Every
//! confirmation of a copy comes before the copy is replaced, so nothing done
//! on a lost copy is answered later than [`CONFIRMED_WITHIN`] after anyone
//! first saw it replaced: the reconciler waits that long, not for every send
//! that may still be in flight, before it rebuilds a sale from MySQL.
//!
//! A script's keys must share a hash slot (on a cluster, where every master
//! is such a server; and on one server too, see `conn::one_slot`), so there
//! is one mark per slot in use (`<prefix>redis:generation:{<tag>}`, the tag
//! chosen to land in that slot, see [`Generation::mark_for`]). Each is
//! verified against the master that holds its slot; the watch reads every
//! master's identity each [`VERIFY_EVERY`] and, when any changed (a restart,
//! a replica promoted), suspects them all. A mark that is gone while its
//! server stayed (a flush) is found by the first fenced script that reads it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo};
use redis::Script;

use super::conn::{slot, tag_of_slot, Conn};

/// How often a process re-verifies even when nothing went wrong (a failover
/// that kept the connection and the script cache is seen within this).
pub const VERIFY_EVERY: Duration = Duration::from_secs(1);

/// A write on a copy is answered only while the copy's generation was
/// confirmed within this (see the module doc).
pub const CONFIRMED_WITHIN: Duration = Duration::from_millis(500);

/// Where confirmation times count from (µs after it).
static BASE: LazyLock<Instant> = LazyLock::new(Instant::now);

static ADOPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/generation_adopt.lua")));

/// The Lua prelude of every fenced script (`lua/generation.lua`).
pub const LUA: &str = include_str!("../../../lua/generation.lua");

/// A fenced script: the prelude, then `source` (run it with
/// [`Kv::eval_fenced`](super::Kv::eval_fenced)).
pub fn fenced(source: &str) -> Script {
    Script::new(&format!("{LUA}\n{source}"))
}

/// The generations this process verified, by mark, and what invalidates them.
pub struct Generation {
    conn: Conn,
    /// The stem of the per-slot marks.
    mark: String,
    /// Bumped by every suspicion; a verification that saw it move starts over.
    suspicions: AtomicU64,
    current: RwLock<HashMap<String, Arc<Verified>>>,
    verifying: tokio::sync::Mutex<()>,
    /// Every master's identity, as the watch last read them.
    masters: Mutex<Vec<Identity>>,
}

/// A generation this process verified for a mark, and when a call last
/// found it current there.
#[derive(Debug)]
pub struct Verified {
    pub generation: Arc<str>,
    /// The send time of the latest such call, µs after [`BASE`].
    confirmed_us: AtomicU64,
}

impl Verified {
    fn new(generation: Arc<str>, sent: Instant) -> Arc<Self> {
        Arc::new(Self { generation, confirmed_us: AtomicU64::new(micros(sent)) })
    }

    /// A call sent at `sent` found this generation current.
    pub fn confirm(&self, sent: Instant) {
        self.confirmed_us.fetch_max(micros(sent), Ordering::SeqCst);
    }

    fn confirmed_since(&self, at: Instant) -> bool {
        self.confirmed_us.load(Ordering::SeqCst) >= micros(at)
    }
}

fn micros(at: Instant) -> u64 {
    at.saturating_duration_since(*BASE).as_micros() as u64
}

/// The server's identity as `INFO` reports it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Identity {
    pub run_id: String,
    pub replid: String,
}

impl Identity {
    fn from_info(server: &str, replication: &str) -> redis::RedisResult<Self> {
        let field = |info: &str, name: &'static str| {
            info_field(info, name)
                .map(str::to_owned)
                .ok_or_else(|| redis::RedisError::from((redis::ErrorKind::Parse, "INFO", format!("no {name} in INFO"))))
        };
        Ok(Self { run_id: field(server, "run_id")?, replid: field(replication, "master_replid")? })
    }
}

/// The mark's `run_id`, `replid` and `gen`, as read.
type MarkFields = (Option<String>, Option<String>, Option<String>);

fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| line.trim_end().strip_prefix(field)?.strip_prefix(':'))
}

impl Generation {
    pub(super) fn new(conn: Conn, mark: String) -> Arc<Self> {
        let this = Arc::new(Self {
            conn,
            mark,
            suspicions: AtomicU64::new(0),
            current: RwLock::new(HashMap::new()),
            verifying: tokio::sync::Mutex::new(()),
            masters: Mutex::new(Vec::new()),
        });
        tokio::spawn(watch(Arc::downgrade(&this)));
        this
    }

    /// The mark that fences `key`: the mark of its slot (a script's keys
    /// and its mark share a slot).
    pub fn mark_for(&self, key: &str) -> String {
        format!("{}:{{{}}}", self.mark, tag_of_slot(slot(key.as_bytes())))
    }

    /// The generation to act under on `key`'s copy: the verified one, or a
    /// fresh verification.
    pub async fn current(&self, key: &str) -> redis::RedisResult<Arc<str>> {
        Ok(Arc::clone(&self.verified(key).await?.generation))
    }

    /// [`current`](Self::current), with its confirmations: a fenced call
    /// that ran under it confirms it ([`Verified::confirm`]).
    pub async fn verified(&self, key: &str) -> redis::RedisResult<Arc<Verified>> {
        let mark = self.mark_for(key);
        if let Some(verified) = self.current.read().expect("generation lock").get(&mark).cloned() {
            return Ok(verified);
        }
        self.verify(&mark, Instant::now()).await
    }

    /// Whether `generation` is `key`'s copy's, confirmed within `within`:
    /// a write made under it may be answered now (see the module doc). A
    /// confirmation older than `within` is renewed by asking the server,
    /// once for all callers waiting on it.
    pub async fn confirmed_within(&self, key: &str, generation: &str, within: Duration) -> redis::RedisResult<bool> {
        let mark = self.mark_for(key);
        let asked = Instant::now();
        if let Some(verified) = self.current.read().expect("generation lock").get(&mark) {
            if &*verified.generation != generation {
                return Ok(false);
            }
            if verified.confirmed_since(asked.checked_sub(within).unwrap_or(*BASE)) {
                return Ok(true);
            }
        }
        let verified = self.verify(&mark, asked).await?;
        Ok(&*verified.generation == generation)
    }

    /// Something suggests a server may not be the verified one (a
    /// connection error, NOSCRIPT, a script that found another generation):
    /// the next [`current`](Self::current) of every mark verifies first.
    pub fn suspect(&self) {
        self.suspicions.fetch_add(1, Ordering::SeqCst);
        self.current.write().expect("generation lock").clear();
    }

    /// At connect: reads the identity of every master (each slot's mark
    /// is verified on first use).
    pub async fn start(&self) -> redis::RedisResult<()> {
        *self.masters.lock().expect("masters lock") = self.masters().await?;
        Ok(())
    }

    /// Reads the identity of the server holding `mark` and the mark; adopts
    /// a fresh generation if they differ. Answers the generation now current,
    /// confirmed by a read sent after `since` (one that another caller made
    /// while this one waited its turn will do).
    async fn verify(&self, mark: &str, since: Instant) -> redis::RedisResult<Arc<Verified>> {
        let _one = self.verifying.lock().await;
        if let Some(verified) = self.current.read().expect("generation lock").get(mark) {
            if verified.confirmed_since(since) {
                return Ok(Arc::clone(verified));
            }
        }
        loop {
            let seen = self.suspicions.load(Ordering::SeqCst);
            let sent = Instant::now();
            let (identity, generation) = self.check(mark).await?;
            if self.suspicions.load(Ordering::SeqCst) == seen {
                let mut current = self.current.write().expect("generation lock");
                let verified = match current.get(mark) {
                    Some(known) if *known.generation == *generation => {
                        known.confirm(sent);
                        Arc::clone(known)
                    }
                    _ => {
                        tracing::info!(run_id = %identity.run_id, replid = %identity.replid, %mark, %generation, "Redis generation verified");
                        let verified = Verified::new(Arc::from(generation), sent);
                        current.insert(mark.to_owned(), Arc::clone(&verified));
                        verified
                    }
                };
                return Ok(verified);
            }
        }
    }

    async fn check(&self, mark: &str) -> redis::RedisResult<(Identity, String)> {
        let mut conn = self.conn.clone();
        // On a cluster the pipeline goes where the mark's slot is (INFO has no key).
        let (server, replication, fields): (String, String, MarkFields) = redis::pipe()
            .cmd("INFO")
            .arg("server")
            .cmd("INFO")
            .arg("replication")
            .cmd("HMGET")
            .arg(mark)
            .arg("run_id")
            .arg("replid")
            .arg("gen")
            .query_async(&mut conn)
            .await?;
        let identity = Identity::from_info(&server, &replication)?;
        // No mark at all: a slot first used, or a flush (whose data went too).
        let unmarked = fields.2.is_none();
        if let (Some(run_id), Some(replid), Some(generation)) = fields {
            if run_id == identity.run_id && replid == identity.replid {
                return Ok((identity, generation));
            }
        }
        let fresh = (rand::random::<u64>() >> 1).max(1).to_string();
        let adopted: String =
            ADOPT.key(mark).arg(&identity.run_id).arg(&identity.replid).arg(&fresh).invoke_async(&mut conn).await?;
        if adopted == fresh && unmarked {
            metrics::counter!(crate::metrics::REDIS_GENERATIONS).increment(1);
            tracing::info!(run_id = %identity.run_id, %mark, generation = %adopted, "Redis generation marked");
        } else if adopted == fresh {
            metrics::counter!(crate::metrics::REDIS_GENERATIONS).increment(1);
            tracing::warn!(
                run_id = %identity.run_id, replid = %identity.replid, %mark, generation = %adopted,
                "Redis is not the copy last verified (restart, failover, restore or flush): new generation; \
                 sale state written before it is paused until rebuilt"
            );
        }
        Ok((identity, adopted))
    }

    /// Every master's identity, sorted.
    async fn masters(&self) -> redis::RedisResult<Vec<Identity>> {
        let mut info = redis::cmd("INFO");
        info.arg("server").arg("replication");
        let conn = match &self.conn {
            Conn::Single(conn) => {
                let text: String = info.query_async(&mut conn.clone()).await?;
                return Ok(vec![Identity::from_info(&text, &text)?]);
            }
            Conn::Cluster(conn) => conn,
        };
        let routing = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
        let reply = conn.clone().route_command(info, routing).await?;
        let redis::Value::Map(by_node) = reply else {
            return Err(redis::RedisError::from((redis::ErrorKind::Parse, "INFO", "no reply per master".to_owned())));
        };
        let mut identities = by_node
            .into_iter()
            .map(|(_, text)| {
                let text: String = redis::from_redis_value(text)?;
                Identity::from_info(&text, &text)
            })
            .collect::<redis::RedisResult<Vec<_>>>()?;
        identities.sort();
        Ok(identities)
    }

    /// One watch step: is every master the process it was?
    async fn masters_unchanged(&self) -> redis::RedisResult<bool> {
        let now = self.masters().await?;
        let mut seen = self.masters.lock().expect("masters lock");
        let same = *seen == now;
        *seen = now;
        Ok(same)
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
        match generation.masters_unchanged().await {
            Ok(true) => {}
            Ok(false) => generation.suspect(),
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
