//! Order ids: 64-bit, time-ordered, unique across API instances.
//!
//! Layout (Snowflake): 41 bits of milliseconds since 2026-01-01 UTC (good for
//! ~69 years), 10 bits of node id, 12 bits of sequence (4096 ids per ms per
//! node). Why ids cannot collide:
//! - Within a process, [`OrderIds`] never reuses a (millisecond, sequence)
//!   pair: the millisecond it issues from never goes backwards, and when 4096
//!   ids are spent it moves on to the next one. A clock that went back by
//!   more than [`CLOCK_SLACK_MS`] is refused ([`IdError::ClockWentBack`]), so
//!   the generator never runs far ahead of the wall clock.
//! - Across processes, each process issues only while it holds a node slot
//!   leased in Redis (`SET NX` with a TTL, fixed node ids included, which are
//!   refused when taken), and only while it *knows* it holds it: every issue
//!   needs a renewal confirmed within the last `window` (monotonic clock).
//!   A lost, expired or unconfirmable lease stops issuing ([`IdError::NoLease`])
//!   until a lease is held again.
//! - A slot is taken over only after its holder stopped: while Redis keeps its
//!   data, the key outlives the holder's `window` (`ttl > window`). A holder
//!   that gives its slot up stops issuing first, then marks the key
//!   `free:<generation>` (`lua/id_lease_free.lua`), and the next taker may
//!   issue at once. A key that is missing (Redis lost it: restart, flush,
//!   failover, eviction, whatever else survived) or marked free under
//!   another Redis generation (a copy older than a later holder) may hide a
//!   holder still issuing: that holder learns it at its next renewal and
//!   stops within `window` of its last confirmed one, so the taker waits a
//!   whole `window` before it issues (`lua/id_lease_take.lua`), and then
//!   issues only if the key still holds its token (an earlier holder may
//!   have taken the node back meanwhile, see below).
//! - A holder that finds its own key gone (Redis restarted, failed over or
//!   lost the key) while its last confirmed renewal still allows issuing
//!   takes the node back at once, without a pause in issuing: any other
//!   process that took the node since that renewal did so in a copy where
//!   the key was missing, so it is still waiting out its window and finds
//!   the node taken back when it confirms. A holder whose issuing window
//!   lapsed (it could not reach Redis) waits like any taker.
//!   Assumption: wall clocks of API hosts agree to well within the window.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::AsyncCommands;
use tokio_util::sync::CancellationToken;

use crate::config::IdSettings;
use crate::kv::Kv;

static TAKE: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| crate::kv::generation::fenced(include_str!("../../lua/id_lease_take.lua")));
static FREE: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| crate::kv::generation::fenced(include_str!("../../lua/id_lease_free.lua")));

static FORGET: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(include_str!("../../lua/id_beats_forget.lua")));

/// The lease and beat scripts, to load at connect time.
pub(crate) fn scripts() -> [&'static redis::Script; 3] {
    [&*TAKE, &*FREE, &*FORGET]
}

/// 2026-01-01T00:00:00Z in Unix ms.
pub const EPOCH_MS: u64 = 1_767_225_600_000;
pub const MAX_NODE: u16 = 1023;
const NODE_BITS: u32 = 10;
const SEQ_BITS: u32 = 12;
const MAX_SEQ: u64 = (1 << SEQ_BITS) - 1;
/// How far the generator may run ahead of a clock that stepped back (or
/// of 4096 ids in one ms) before it refuses.
pub const CLOCK_SLACK_MS: u64 = 5;

/// Why no id was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("no order-id node lease is held right now")]
    NoLease,
    #[error("the clock went back by {0} ms")]
    ClockWentBack(u64),
}

#[derive(Debug)]
struct State {
    node: u16,
    /// Issuing is allowed before this instant; `None` never, until granted.
    valid_until: Option<Instant>,
    last_ms: u64,
    last_seq: u64,
}

impl State {
    /// Whether the lease allows issuing at `now`.
    fn allows(&self, now: Instant) -> bool {
        self.valid_until.is_some_and(|until| now < until)
    }
}

/// Issues order ids as the node it currently holds.
#[derive(Debug)]
pub struct OrderIds {
    state: Mutex<State>,
    /// Always valid (a fixed node outside any lease: the unit tests below).
    unleased: bool,
}

impl OrderIds {
    /// A generator for a node nobody else uses, needing no lease (the
    /// generator's own tests).
    #[cfg(test)]
    fn unleased(node: u16) -> Self {
        assert!(node <= MAX_NODE, "node id out of range");
        Self { state: Mutex::new(State { node, valid_until: None, last_ms: 0, last_seq: 0 }), unleased: true }
    }

    fn leased() -> Self {
        Self { state: Mutex::new(State { node: 0, valid_until: None, last_ms: 0, last_seq: 0 }), unleased: false }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Allows issuing as `node` until `until`.
    fn grant(&self, node: u16, until: Instant) {
        let mut s = self.lock();
        s.node = node;
        s.valid_until = Some(until);
    }

    /// Whether issuing is allowed at `now`.
    fn holds(&self, now: Instant) -> bool {
        self.lock().allows(now)
    }

    /// Stops issuing at once.
    fn revoke(&self) {
        self.lock().valid_until = None;
    }

    /// The next id; strictly greater than every id this generator issued.
    /// Both clocks are read under the lock: a reading taken before it
    /// (and held while the thread waited or was preempted) could be older
    /// than an id another caller issued meanwhile, which would look like a
    /// clock that went back, and older than the lease's end.
    pub fn next_id(&self) -> Result<u64, IdError> {
        let mut s = self.lock();
        self.issue(&mut s, crate::now_ms(), Instant::now())
    }

    #[cfg(test)]
    fn next_id_at(&self, wall_ms: u64, now: Instant) -> Result<u64, IdError> {
        self.issue(&mut self.lock(), wall_ms, now)
    }

    fn issue(&self, s: &mut State, wall_ms: u64, now: Instant) -> Result<u64, IdError> {
        let now_ms = wall_ms.saturating_sub(EPOCH_MS);
        if !self.unleased && !s.allows(now) {
            return Err(IdError::NoLease);
        }
        let (ms, seq) = if now_ms > s.last_ms {
            (now_ms, 0)
        } else if s.last_seq < MAX_SEQ {
            (s.last_ms, s.last_seq + 1)
        } else {
            (s.last_ms + 1, 0)
        };
        if ms > now_ms + CLOCK_SLACK_MS {
            return Err(IdError::ClockWentBack(ms - now_ms));
        }
        (s.last_ms, s.last_seq) = (ms, seq);
        Ok(compose(ms + EPOCH_MS, s.node, seq))
    }
}

/// The id of sequence `seq` issued as `node` at `wall_ms` (Unix ms): the
/// layout above, which [`issued_at_ms`] reads back. Only [`OrderIds`]
/// decides which ids are issued; this is their format.
pub fn compose(wall_ms: u64, node: u16, seq: u64) -> u64 {
    let ms = wall_ms.saturating_sub(EPOCH_MS);
    (ms << (NODE_BITS + SEQ_BITS)) | (u64::from(node.min(MAX_NODE)) << SEQ_BITS) | (seq & MAX_SEQ)
}

/// The Unix ms an id was issued at (to within the clock rules above).
pub fn issued_at_ms(id: u64) -> u64 {
    (id >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS
}

/// The node slot an id was issued under.
pub fn node_of(id: u64) -> u16 {
    ((id >> SEQ_BITS) & u64::from(MAX_NODE)) as u16
}

/// Heartbeats: each holder writes its node and the Unix ms of its last
/// confirmed renewal into one sorted set (`ids:beats`) after each renewal,
/// and 0 when it gives the slot up, so that whoever holds reservations of
/// a node can tell when nothing more can come from it: a node whose beat
/// is older than the lease TTL has no holder issuing or publishing (its
/// process is gone, or has not reached Redis for longer than it may issue).
/// A node taken over by another process beats again: it is not "stopped",
/// and what its earlier holder left waits for the reconciler's grace.
/// Redis losing the set forgets beats, never invents one: nothing is
/// judged stopped then.
pub mod beats {
    use std::time::Duration;

    use crate::kv::Kv;

    /// Records that `node`'s holder was confirmed at `at_ms` (0: gave it up).
    pub async fn record(kv: &Kv, node: u16, at_ms: u64) -> redis::RedisResult<()> {
        redis::cmd("ZADD").arg(kv.keys.id_node_beats()).arg(at_ms).arg(node).query_async(&mut kv.conn()).await
    }

    /// The nodes whose last beat is older than `for_at_least`.
    pub async fn stopped(kv: &Kv, for_at_least: Duration) -> redis::RedisResult<Vec<u16>> {
        let before = crate::now_ms().saturating_sub(for_at_least.as_millis() as u64);
        redis::cmd("ZRANGE")
            .arg(kv.keys.id_node_beats())
            .arg("-inf")
            .arg(format!("({before}"))
            .arg("BYSCORE")
            .query_async(&mut kv.conn())
            .await
    }

    /// Forgets `nodes` (what they left was handled), unless one beat again
    /// since `stopped` saw it, which keeps it.
    pub async fn forget(kv: &Kv, nodes: &[u16], for_at_least: Duration) -> redis::RedisResult<()> {
        if nodes.is_empty() {
            return Ok(());
        }
        let before = crate::now_ms().saturating_sub(for_at_least.as_millis() as u64);
        let mut forget = super::FORGET.key(kv.keys.id_node_beats());
        forget.arg(before).arg(nodes);
        let _forgotten: u64 = forget.invoke_async(&mut kv.conn()).await?;
        Ok(())
    }
}

/// How leases are held; see the module doc.
#[derive(Debug, Clone, Copy)]
pub struct LeaseTiming {
    /// TTL of the lease key; longer than `window`.
    pub ttl: Duration,
    /// How long one confirmed renewal allows issuing; renewals run every `window / 3`.
    pub window: Duration,
}

impl From<&IdSettings> for LeaseTiming {
    fn from(s: &IdSettings) -> Self {
        Self { ttl: s.lease_ttl_ms, window: s.lease_window_ms }
    }
}

/// The node lease of one process: renews it in the background, re-acquires
/// it when lost, and gives it up on [`NodeLease::release`].
pub struct NodeLease {
    ids: Arc<OrderIds>,
    stop: CancellationToken,
    keeper: Option<tokio::task::JoinHandle<()>>,
}

struct Held {
    node: u16,
    key: String,
}

struct Leaser {
    kv: Kv,
    owner: String,
    fixed: Option<u16>,
    timing: LeaseTiming,
}

impl NodeLease {
    /// Leases a node slot (the `fixed` one, refused if another process holds
    /// it, else any free one), waits a window if it was not given up cleanly
    /// (see the module doc), and starts issuing.
    pub async fn acquire(kv: &Kv, fixed: Option<u16>, timing: LeaseTiming) -> Result<Self, LeaseError> {
        assert!(timing.ttl > timing.window, "the lease must outlive its issuing window");
        let leaser = Leaser {
            kv: kv.clone(),
            owner: format!("{}-{:016x}", std::process::id(), rand::random::<u64>()),
            fixed,
            timing,
        };
        let held = leaser.acquire().await?;
        let _ = beats::record(kv, held.node, crate::now_ms()).await;
        let ids = Arc::new(OrderIds::leased());
        ids.grant(held.node, Instant::now() + timing.window);
        tracing::info!(node = held.node, "order ids issued as node {}", held.node);
        let stop = CancellationToken::new();
        let keeper = tokio::spawn(leaser.keep(held, Arc::clone(&ids), stop.clone()));
        Ok(Self { ids, stop, keeper: Some(keeper) })
    }

    /// The generator, valid while the lease is held.
    pub fn ids(&self) -> Arc<OrderIds> {
        Arc::clone(&self.ids)
    }

    /// Stops issuing and deletes the lease (if still ours), so the slot is
    /// free at once, e.g. for a restart with the same fixed node id.
    pub async fn release(mut self) {
        self.ids.revoke();
        self.stop.cancel();
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.await;
        }
    }
}

impl Drop for NodeLease {
    fn drop(&mut self) {
        self.ids.revoke();
        self.stop.cancel();
    }
}

/// Why no lease was taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("order-id node {0} is held by another process")]
    Taken(u16),
    #[error("all 1024 order-id node slots are leased")]
    Exhausted,
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

impl Leaser {
    async fn acquire(&self) -> Result<Held, LeaseError> {
        let mut conn = self.kv.conn();
        for attempt in 0..=MAX_NODE {
            let node = match self.fixed {
                Some(node) if attempt == 0 => node,
                Some(node) => return Err(LeaseError::Taken(node)),
                None => {
                    let cursor: u64 = conn.incr(self.kv.keys.id_node_cursor(), 1).await?;
                    (cursor % (u64::from(MAX_NODE) + 1)) as u16
                }
            };
            let key = self.kv.keys.id_node_lease(node);
            match self.take(&key).await? {
                Some(1) => return Ok(Held { node, key }),
                Some(2) => {
                    tracing::info!(
                        node,
                        wait_ms = self.timing.window.as_millis() as u64,
                        "order-id node was not given up cleanly; waiting for an earlier holder to stop"
                    );
                    tokio::time::sleep(self.timing.window).await;
                    let held = Held { node, key };
                    // An earlier holder whose key vanished takes it back at
                    // once (see the module doc): issue only if it did not.
                    if self.renew(&held, self.timing.ttl.as_millis() as u64).await? {
                        return Ok(held);
                    }
                    tracing::info!(node, "order-id node taken back by its earlier holder");
                    if let Some(node) = self.fixed {
                        return Err(LeaseError::Taken(node));
                    }
                }
                _ => continue,
            }
        }
        Err(LeaseError::Exhausted)
    }

    /// Gives the lease up cleanly (the caller stopped issuing already).
    async fn free(&self, held: &Held) -> redis::RedisResult<()> {
        let ttl = self.timing.ttl.as_millis().to_string();
        let _: Vec<i64> =
            self.kv.eval_fenced(&FREE, std::slice::from_ref(&held.key), &[self.owner.clone(), ttl]).await?;
        Ok(())
    }

    /// `lua/id_lease_take.lua` on lease key `key`: its answer code.
    async fn take(&self, key: &str) -> redis::RedisResult<Option<i64>> {
        let args = [self.owner.clone(), self.timing.ttl.as_millis().to_string()];
        let taken: Vec<i64> = self.kv.eval_fenced(&TAKE, &[key.to_owned()], &args).await?;
        Ok(taken.first().copied())
    }

    /// Takes `held`'s node back after its key vanished; false when another
    /// process holds it (or Redis cannot say).
    async fn take_back(&self, held: &Held) -> bool {
        match self.take(&held.key).await {
            Ok(taken) => matches!(taken, Some(1 | 2)),
            Err(err) => {
                tracing::warn!(error = %err, "cannot take the order-id node lease back");
                false
            }
        }
    }

    async fn renew(&self, held: &Held, ttl_ms: u64) -> redis::RedisResult<bool> {
        let held_now: i64 =
            crate::kv::LEASE.key(&held.key).arg(&self.owner).arg(ttl_ms).invoke_async(&mut self.kv.conn()).await?;
        Ok(held_now == 1)
    }

    /// Renews every `window / 3`; each confirmed renewal extends issuing by
    /// `window`. A key that vanished while issuing was allowed is taken back
    /// at once; a lease held by another process, or lost past the window,
    /// stops issuing at once and is re-acquired.
    async fn keep(self, mut held: Held, ids: Arc<OrderIds>, stop: CancellationToken) {
        let mut tick = tokio::time::interval(self.timing.window / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let ttl_ms = self.timing.ttl.as_millis() as u64;
        loop {
            tokio::select! {
                () = stop.cancelled() => {
                    if let Err(err) = self.free(&held).await {
                        tracing::warn!(error = %err, "cannot give up the order-id node lease; it expires by itself");
                    }
                    let _ = beats::record(&self.kv, held.node, 0).await;
                    return;
                }
                _ = tick.tick() => {}
            }
            let (asked, asked_ms) = (Instant::now(), crate::now_ms());
            match self.renew(&held, ttl_ms).await {
                Ok(true) => {
                    ids.grant(held.node, asked + self.timing.window);
                    if let Err(err) = beats::record(&self.kv, held.node, asked_ms).await {
                        tracing::debug!(error = %err, "cannot record the order-id node's beat");
                    }
                }
                Ok(false) if ids.holds(Instant::now()) && self.take_back(&held).await => {
                    ids.grant(held.node, asked + self.timing.window);
                    tracing::warn!(node = held.node, "order-id node lease key was gone (Redis lost it); taken back");
                    let _ = beats::record(&self.kv, held.node, asked_ms).await;
                }
                Ok(false) => {
                    ids.revoke();
                    tracing::error!(
                        node = held.node,
                        "order-id node lease lost; issuing stopped until a lease is held again"
                    );
                    match self.acquire().await {
                        Ok(again) => {
                            held = again;
                            ids.grant(held.node, Instant::now() + self.timing.window);
                            tracing::info!(node = held.node, "order-id node lease held again");
                        }
                        Err(err) => tracing::warn!(error = %err, "cannot lease an order-id node yet"),
                    }
                }
                Err(err) => tracing::warn!(error = %err, "cannot renew the order-id node lease"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_strictly_increase_even_past_4096_per_ms() {
        let ids = OrderIds::unleased(7);
        let mut last = 0;
        for _ in 0..20_000 {
            let id = ids.next_id().unwrap();
            assert!(id > last);
            last = id;
        }
    }

    #[test]
    fn ids_carry_their_node_and_time() {
        let ids = OrderIds::unleased(1023);
        let id = ids.next_id().unwrap();
        assert_eq!((id >> SEQ_BITS) & 1023, 1023);
        assert!(issued_at_ms(id).abs_diff(crate::now_ms()) < 1000);
    }

    #[test]
    fn a_leased_generator_issues_only_inside_its_window() {
        let ids = OrderIds::leased();
        let t0 = Instant::now();
        let wall = crate::now_ms();
        assert_eq!(ids.next_id_at(wall, t0), Err(IdError::NoLease), "nothing before the first grant");
        ids.grant(5, t0 + Duration::from_millis(100));
        assert!(ids.next_id_at(wall, t0 + Duration::from_millis(99)).is_ok());
        assert_eq!(ids.next_id_at(wall + 100, t0 + Duration::from_millis(100)), Err(IdError::NoLease));
        ids.grant(5, t0 + Duration::from_secs(10));
        ids.revoke();
        assert_eq!(ids.next_id_at(wall + 1, t0), Err(IdError::NoLease), "a revoked lease stops issuing at once");
    }

    #[test]
    fn a_caller_that_waited_for_the_lock_while_others_issued_is_not_refused() {
        let ids = Arc::new(OrderIds::unleased(4));
        let first = ids.next_id().unwrap();
        let mut held = ids.lock();
        let waiter = std::thread::spawn({
            let ids = Arc::clone(&ids);
            move || ids.next_id()
        });
        // While the waiter waits, another caller issues 20 ms later than
        // the waiter could have read the clock.
        std::thread::sleep(Duration::from_millis(20));
        let later = crate::now_ms().saturating_sub(EPOCH_MS);
        (held.last_ms, held.last_seq) = (later, 0);
        drop(held);
        let id = waiter.join().unwrap().expect("a caller that waited its turn gets an id");
        assert!(id > first && issued_at_ms(id) >= later + EPOCH_MS, "{id} after {first}");
    }

    #[test]
    fn a_clock_that_went_back_is_refused_beyond_the_slack() {
        let ids = OrderIds::unleased(3);
        let now = Instant::now();
        let wall = crate::now_ms();
        let first = ids.next_id_at(wall, now).unwrap();
        let small_step_back = ids.next_id_at(wall - CLOCK_SLACK_MS, now).unwrap();
        assert!(small_step_back > first, "within the slack ids keep rising");
        assert_eq!(ids.next_id_at(wall - 1000, now), Err(IdError::ClockWentBack(1000)));
        assert!(ids.next_id_at(wall + 1, now).unwrap() > small_step_back, "issuing resumes once the clock is back");
    }
}
