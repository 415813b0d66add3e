//! Presence: every running API and worker announces itself in Redis every
//! [`BEAT_EVERY`] with what it is and how it fares, so an operator's view
//! lists every instance of the platform, with its health, without knowing
//! where each runs. The invariant the reader keeps: an instance shows as up
//! only while its last beat is younger than [`STALE_AFTER`]; one that
//! stopped beating (killed, cut off from Redis, hung) shows as `missing`,
//! and one silent for [`FORGET_AFTER`] is dropped. An instance that stops
//! cleanly takes its own entry away.
//!
//! One hash, `<prefix>presence` (instance id → its last [`Beat`], JSON):
//! a beat is one `HSET` (with the hash's expiry pushed to [`FORGET_AFTER`],
//! in the same round trip), the whole list one `HGETALL`, on a cluster too.
//! Entries past [`FORGET_AFTER`] are dropped by every reader and by each
//! instance every [`PRUNE_EVERY`] beats, so crashed instances do not pile
//! up when no one reads the list. Ages are judged on the clocks of the
//! hosts (kept in step by NTP): one more than [`STALE_AFTER`] off would
//! show its instances as missing.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::kv::Kv;

/// How often an instance announces itself.
pub const BEAT_EVERY: Duration = Duration::from_secs(5);
/// A beat older than this marks its instance `missing`: three beats lost.
pub const STALE_AFTER: Duration = Duration::from_secs(15);
/// An instance silent this long is dropped from the list.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Every this many beats an instance drops the entries past [`FORGET_AFTER`].
pub const PRUNE_EVERY: u32 = 12;

/// What an instance says of itself in each beat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Beat {
    /// Unique per process: `<kind>-<host>-<pid>-<random>`.
    pub id: String,
    /// `api` or `worker`.
    pub kind: String,
    pub version: String,
    /// The commit it was built from (absent in beats of builds before it
    /// was sent; instances of two builds serve side by side in a deploy).
    #[serde(default)]
    pub commit: String,
    pub host: String,
    pub pid: u32,
    /// When the process started, ms since the epoch.
    pub started_ms: u64,
    /// When this beat was sent, ms since the epoch (the sender's clock).
    pub seen_ms: u64,
    /// What fails in the process now (a dependency that does not answer, a
    /// job that is down); empty when it is healthy.
    pub failing: Vec<String>,
    /// A few figures of the process's own metrics, by name.
    pub figures: BTreeMap<String, f64>,
}

/// What a process reports in a beat besides who it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub failing: Vec<String>,
    pub figures: BTreeMap<String, f64>,
}

/// How an instance stands, as the reader judges from its last beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Beating and healthy.
    Up,
    /// Beating, but something in it fails.
    Failing,
    /// No beat for [`STALE_AFTER`].
    Missing,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Up => "up",
            State::Failing => "failing",
            State::Missing => "missing",
        }
    }
}

/// An instance in the list: its last beat and how it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub beat: Beat,
    pub state: State,
}

/// Who this process is, for its beats.
#[derive(Debug, Clone)]
pub struct Identity {
    pub id: String,
    pub kind: &'static str,
    pub host: String,
    pub pid: u32,
    pub started_ms: u64,
}

impl Identity {
    /// This process, as a `kind` (`api`, `worker`).
    pub fn of_this_process(kind: &'static str) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".to_owned());
        let pid = std::process::id();
        let id = format!("{kind}-{host}-{pid}-{:04x}", rand::random::<u16>());
        Self { id, kind, host, pid, started_ms: crate::now_ms() }
    }

    fn beat(&self, status: Status) -> Beat {
        Beat {
            id: self.id.clone(),
            kind: self.kind.to_owned(),
            version: crate::metrics::VERSION.to_owned(),
            commit: crate::metrics::COMMIT.to_owned(),
            host: self.host.clone(),
            pid: self.pid,
            started_ms: self.started_ms,
            seen_ms: crate::now_ms(),
            failing: status.failing,
            figures: status.figures,
        }
    }
}

fn key(kv: &Kv) -> String {
    kv.keys.key(format_args!("presence"))
}

/// Writes one beat of `me` with `status`; the list expires
/// [`FORGET_AFTER`] after the last beat of any instance.
pub async fn announce(kv: &Kv, me: &Identity, status: Status) -> redis::RedisResult<()> {
    let beat = serde_json::to_string(&me.beat(status)).expect("a beat serializes");
    let key = key(kv);
    let mut pipe = redis::pipe();
    pipe.hset(&key, &me.id, beat).ignore().pexpire(&key, FORGET_AFTER.as_millis() as i64).ignore();
    pipe.query_async::<()>(&mut kv.conn()).await
}

/// Takes `me` out of the list.
pub async fn withdraw(kv: &Kv, me: &Identity) -> redis::RedisResult<()> {
    kv.conn().hdel::<_, _, ()>(key(kv), &me.id).await
}

/// Beats every [`BEAT_EVERY`] with what `probe` reports, until `stop`; then
/// withdraws. A beat that cannot be written is logged and the next one
/// tries again (while Redis is away the instance shows as missing).
pub async fn run<F, Fut>(kv: Kv, me: Identity, stop: CancellationToken, probe: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Status>,
{
    let mut ticks = tokio::time::interval(BEAT_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for beat in 1u32.. {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = ticks.tick() => {
                let status = tokio::select! {
                    () = stop.cancelled() => break,
                    status = probe() => status,
                };
                if let Err(err) = announce(&kv, &me, status).await {
                    tracing::debug!(error = %err, "presence beat not written");
                }
                if beat % PRUNE_EVERY == 0 {
                    if let Err(err) = list(&kv).await {
                        tracing::debug!(error = %err, "presence list not pruned");
                    }
                }
            }
        }
    }
    if let Err(err) = withdraw(&kv, &me).await {
        tracing::debug!(error = %err, "presence entry not withdrawn; it will show as missing");
    }
}

/// How an instance whose last beat is `beat` stands at `now_ms`.
pub fn judge(beat: &Beat, now_ms: u64) -> State {
    if now_ms.saturating_sub(beat.seen_ms) > STALE_AFTER.as_millis() as u64 {
        State::Missing
    } else if beat.failing.is_empty() {
        State::Up
    } else {
        State::Failing
    }
}

/// Every instance heard from within [`FORGET_AFTER`], by kind then id;
/// older entries (and unreadable ones) are dropped on the way.
pub async fn list(kv: &Kv) -> redis::RedisResult<Vec<Instance>> {
    let entries: BTreeMap<String, String> = kv.conn().hgetall(key(kv)).await?;
    let now = crate::now_ms();
    let mut gone = Vec::new();
    let mut instances = Vec::new();
    for (id, raw) in entries {
        match serde_json::from_str::<Beat>(&raw) {
            Ok(beat) if now.saturating_sub(beat.seen_ms) <= FORGET_AFTER.as_millis() as u64 => {
                instances.push(Instance { state: judge(&beat, now), beat });
            }
            _ => gone.push(id),
        }
    }
    if !gone.is_empty() {
        kv.conn().hdel::<_, _, ()>(key(kv), gone).await?;
    }
    instances.sort_by(|a, b| (&a.beat.kind, &a.beat.id).cmp(&(&b.beat.kind, &b.beat.id)));
    Ok(instances)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(seen_ms: u64, failing: &[&str]) -> Beat {
        Beat {
            id: "api-h-1-0000".into(),
            kind: "api".into(),
            version: "0".into(),
            commit: "c0".into(),
            host: "h".into(),
            pid: 1,
            started_ms: 0,
            seen_ms,
            failing: failing.iter().map(|s| s.to_string()).collect(),
            figures: BTreeMap::new(),
        }
    }

    #[test]
    fn an_instance_is_missing_once_its_beat_is_older_than_the_stale_limit() {
        let stale = STALE_AFTER.as_millis() as u64;
        assert_eq!(judge(&beat(1_000, &[]), 1_000 + stale), State::Up);
        assert_eq!(judge(&beat(1_000, &[]), 1_001 + stale), State::Missing);
        assert_eq!(judge(&beat(1_000, &["redis"]), 1_000), State::Failing);
        assert_eq!(judge(&beat(1_000, &["redis"]), 1_001 + stale), State::Missing, "silence outranks failing");
    }

    #[test]
    fn a_beat_from_a_clock_ahead_is_up_not_missing() {
        assert_eq!(judge(&beat(5_000, &[]), 1_000), State::Up);
    }
}
