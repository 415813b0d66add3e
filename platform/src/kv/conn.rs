//! The connection to Redis: one server ([`ConnectionManager`]) or a Redis
//! Cluster (the redis crate's cluster connection, which routes each command
//! to the master of its key's slot and follows MOVED/ASK and failovers).
//! Both are multiplexed; every call site talks to [`Conn`] the same way.
//!
//! What a cluster adds is one rule: the keys of one command, one script or
//! one pipeline must share a hash slot. Keys that belong together carry one
//! hash tag (`core::keys`); work that spans slots goes through
//! [`Conn::query_each`], which sends one command per key on a cluster. The
//! rule is enforced on one server too ([`one_slot`]), so the suite on one
//! server refuses what a cluster would.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A multiplexed handle on one server or on a cluster. Clone freely.
#[derive(Clone)]
pub enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Conn {
    /// True on a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Conn::Cluster(_))
    }

    /// Runs `cmds` and answers their replies in order. On one server they go
    /// as one pipeline (one round trip). On a cluster each goes on its own,
    /// all at once: a pipeline's keys must share a slot, and commands bound
    /// for one node still share that node's connection, so this costs one
    /// round trip per node, in parallel. Not atomic (neither is a pipeline).
    pub async fn query_each(&self, cmds: Vec<Cmd>) -> redis::RedisResult<Vec<Value>> {
        match self {
            Conn::Single(conn) => {
                if cmds.is_empty() {
                    return Ok(Vec::new());
                }
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd);
                }
                // Straight to the server: this pipeline may span slots.
                pipe.query_async(&mut conn.clone()).await
            }
            Conn::Cluster(conn) => {
                let sends = cmds.into_iter().map(|cmd| {
                    let mut conn = conn.clone();
                    async move { cmd.query_async::<Value>(&mut conn).await }
                });
                futures::future::try_join_all(sends).await
            }
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(conn) => match one_slot([cmd]) {
                Ok(()) => conn.req_packed_command(cmd),
                Err(err) => Box::pin(async move { Err(err) }),
            },
            Conn::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(conn) => match one_slot(pipeline.cmd_iter()) {
                Ok(()) => conn.req_packed_commands(pipeline, offset, count),
                Err(err) => Box::pin(async move { Err(err) }),
            },
            Conn::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(conn) => conn.get_db(),
            Conn::Cluster(conn) => conn.get_db(),
        }
    }
}

/// Refuses, as a cluster would (CROSSSLOT), commands whose keys together
/// span more than one slot: a script's KEYS, a multi-key command's keys, the
/// keys of every command of a pipeline.
pub fn one_slot<'a>(cmds: impl IntoIterator<Item = &'a Cmd>) -> redis::RedisResult<()> {
    let mut first: Option<u16> = None;
    for cmd in cmds {
        let args: Vec<&[u8]> = cmd
            .args_iter()
            .filter_map(|arg| match arg {
                redis::Arg::Simple(bytes) => Some(bytes),
                _ => None,
            })
            .collect();
        for key in keys_of(&args) {
            let slot = slot(key);
            match first {
                None => first = Some(slot),
                Some(seen) if seen == slot => {}
                Some(_) => {
                    let name = String::from_utf8_lossy(args[0]).to_uppercase();
                    return Err(redis::RedisError::from((
                        redis::ErrorKind::Server(redis::ServerErrorKind::CrossSlot),
                        "keys in different hash slots",
                        format!("{name} (or its pipeline) touches {}", String::from_utf8_lossy(key)),
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The keys among a command's arguments (`args[0]` is its name).
fn keys_of<'a>(args: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let Some(name) = args.first() else { return Vec::new() };
    // The name in capitals, without an allocation (every name that matters is short).
    let mut upper = [0u8; 16];
    let len = name.len().min(upper.len());
    upper[..len].copy_from_slice(&name[..len]);
    upper.make_ascii_uppercase();
    let name = std::str::from_utf8(&upper[..len]).unwrap_or_default();
    let counted = |at: usize| -> Vec<&'a [u8]> {
        let n = args.get(at).and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok()).unwrap_or(0);
        args.iter().skip(at + 1).take(n).copied().collect()
    };
    match name {
        "EVAL" | "EVALSHA" | "EVAL_RO" | "EVALSHA_RO" | "FCALL" | "FCALL_RO" => counted(2),
        "ZINTER" | "ZUNION" | "ZDIFF" | "ZINTERCARD" | "SINTERCARD" | "LMPOP" | "ZMPOP" => counted(1),
        "ZINTERSTORE" | "ZUNIONSTORE" | "ZDIFFSTORE" => {
            let mut keys = counted(2);
            keys.extend(args.get(1).copied());
            keys
        }
        "DEL" | "UNLINK" | "EXISTS" | "MGET" | "TOUCH" | "WATCH" | "PFCOUNT" | "PFMERGE" | "SINTER" | "SUNION"
        | "SDIFF" | "SINTERSTORE" | "SUNIONSTORE" | "SDIFFSTORE" => args[1..].to_vec(),
        "RENAME" | "RENAMENX" | "RPOPLPUSH" | "LMOVE" | "SMOVE" | "COPY" => {
            args.iter().skip(1).take(2).copied().collect()
        }
        "MSET" | "MSETNX" => args.iter().skip(1).step_by(2).copied().collect(),
        "PING" | "INFO" | "SCRIPT" | "MULTI" | "EXEC" | "DISCARD" | "CLIENT" | "CONFIG" | "PUBLISH" | "SUBSCRIBE"
        | "FLUSHALL" | "FLUSHDB" | "DBSIZE" | "TIME" | "CLUSTER" | "WAIT" | "ECHO" | "SELECT" | "READONLY" | "KEYS"
        | "SCAN" | "RANDOMKEY" | "HELLO" | "AUTH" | "COMMAND" | "MEMORY" | "SLOWLOG" | "LATENCY" | "DEBUG"
        | "SHUTDOWN" | "FUNCTION" | "OBJECT" | "SAVE" | "BGSAVE" | "LASTSAVE" | "ROLE" => Vec::new(),
        _ => args.get(1).copied().into_iter().collect(),
    }
}

/// The hash slot of `key` (CRC16/XMODEM of its hash tag, or of the whole key
/// when it has none, modulo 16384), as Redis Cluster computes it.
pub fn slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % 16384
}

/// CRC16/XMODEM (polynomial 0x1021), a byte at a time from a table.
fn crc16(bytes: &[u8]) -> u16 {
    const TABLE: [u16; 256] = {
        let mut table = [0u16; 256];
        let mut i = 0;
        while i < 256 {
            let mut crc = (i as u16) << 8;
            let mut bit = 0;
            while bit < 8 {
                crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
                bit += 1;
            }
            table[i] = crc;
            i += 1;
        }
        table
    };
    bytes.iter().fold(0u16, |crc, &byte| (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ byte)])
}

/// A short hash tag whose slot is `slot`: a key `...{<tag>}...` lands in that
/// slot (the generation marks of a cluster, one per slot in use).
pub fn tag_of_slot(slot: u16) -> &'static str {
    static TAGS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let mut tags = vec![String::new(); 16384];
        let mut left = tags.len();
        let mut n: u64 = 0;
        while left > 0 {
            let tag = format!("g{n}");
            let slot = usize::from(crc16(tag.as_bytes()) % 16384);
            if tags[slot].is_empty() {
                tags[slot] = tag;
                left -= 1;
            }
            n += 1;
        }
        tags
    });
    &TAGS[usize::from(slot % 16384)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from `CLUSTER KEYSLOT` on Redis 7.
        assert_eq!(slot(b"123456789"), 12739);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
        assert_eq!(slot(b"t1:seckill:{42}:voucher"), slot(b"42"));
        // An empty tag does not count: the whole key is hashed.
        assert_eq!(slot(b"a{}b"), crc16(b"a{}b") % 16384);
        assert_eq!(slot(b"a{b"), crc16(b"a{b") % 16384);
    }

    #[test]
    fn keys_across_slots_are_refused_as_a_cluster_would() {
        let script = |keys: &[&str]| {
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg("abc").arg(keys.len()).arg(keys).arg("an-arg-not-a-key");
            cmd
        };
        assert!(one_slot([&script(&["s:{7}:a", "s:{7}:b"])]).is_ok());
        let err = one_slot([&script(&["s:{7}:a", "s:{8}:b"])]).unwrap_err();
        assert_eq!(err.kind(), redis::ErrorKind::Server(redis::ServerErrorKind::CrossSlot));
        // Arguments are not keys.
        assert!(one_slot([&script(&["s:{7}:a"])]).is_ok());
        let zinter = |a: &str, b: &str| redis::cmd("ZINTER").arg(2).arg(a).arg(b).arg("WITHSCORES").clone();
        assert!(one_slot([&zinter("{1}:a", "{1}:b")]).is_ok());
        assert!(one_slot([&zinter("{1}:a", "{2}:b")]).is_err());
        // A pipeline's commands together.
        let (a, b) = (redis::Cmd::get("{1}:a"), redis::Cmd::get("{2}:b"));
        assert!(one_slot([&a, &a]).is_ok());
        assert!(one_slot([&a, &b]).is_err());
        assert!(one_slot([&redis::cmd("INFO"), &a]).is_ok());
        assert!(one_slot([&redis::Cmd::rename("{1}:a", "{1}:a:tmp")]).is_ok());
        assert!(one_slot([&redis::Cmd::rename("x:a", "x:a:tmp")]).is_err());
    }

    #[test]
    fn every_slot_has_a_tag() {
        for s in [0u16, 1, 5000, 16383] {
            assert_eq!(slot(format!("x:{{{}}}", tag_of_slot(s)).as_bytes()), s);
        }
    }
}
