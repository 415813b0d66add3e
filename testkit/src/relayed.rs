//! The outbox's promise for follow events, checked over a whole run: every
//! follow change committed (an outbox row of the follow topic) was applied
//! exactly once in effect. Used by `cityhub chaos` for the relay's faults.
//!
//! Each check can fail on its own:
//! - every event applied: each outbox row has the follow consumer's row in
//!   `consumed_events` (a lost event has none);
//! - every event marked published by the relay that sent it;
//! - the projection holds the truth: each `follows` row's state and version
//!   is in `followers`, and `followers` holds nothing else (an event applied
//!   twice, or an old one after a newer, would leave a wrong version);
//! - the counts hold the truth: `follow_counts` and every Redis counts hash
//!   present equal the counts of `follows` (an event counted twice shows
//!   here; the run keeps the count-correction job from repairing it first).
//!
//! The delay from an event's commit to its application is measured on
//! MariaDB's clock at both ends.

use std::collections::{BTreeSet, HashMap};

use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::social::projection::CONSUMER;
use cityhub_core::UserId;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

/// What a run's follow events came to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Relayed {
    /// Outbox rows of the follow topic: every follow change committed.
    pub events: usize,
    /// Of them, applied by the follow consumer.
    pub applied: usize,
    /// Of them, marked published by a relay.
    pub published: usize,
    /// `follows` rows whose state and version the projection lacks, plus
    /// projection rows with no such `follows` row.
    pub pairs_disagree: usize,
    /// Users whose `follow_counts` differ from the counts of `follows`.
    pub mysql_counts_disagree: usize,
    /// Users whose Redis counts hash differs from the counts of `follows`.
    pub redis_counts_disagree: usize,
    /// Commit-to-applied delay of the applied events, milliseconds.
    pub lag_p50_ms: f64,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    /// The longest commit-to-marked-published delay, milliseconds: the
    /// relay's share of the lag (it marks after the broker stored a batch,
    /// up to 100 ms later).
    #[serde(default)]
    pub published_max_ms: f64,
}

impl Relayed {
    /// Every event applied and published, and every copy agrees.
    pub fn clean(&self) -> bool {
        self.applied == self.events
            && self.published == self.events
            && self.pairs_disagree == 0
            && self.mysql_counts_disagree == 0
            && self.redis_counts_disagree == 0
    }

    /// Loads and checks the state of `topic`'s events.
    pub async fn load(db: &MySqlPool, kv: &Kv, topic: &str) -> anyhow::Result<Self> {
        let rows: Vec<(u64, Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT o.id, TIMESTAMPDIFF(MICROSECOND, o.created_at, o.published_at), \
             TIMESTAMPDIFF(MICROSECOND, o.created_at, c.consumed_at) \
             FROM outbox o LEFT JOIN consumed_events c ON c.consumer = ? AND c.event_id = o.id WHERE o.topic = ?",
        )
        .bind(CONSUMER)
        .bind(topic)
        .fetch_all(db)
        .await?;
        let mut lags: Vec<f64> = rows.iter().filter_map(|r| r.2).map(|us| us as f64 / 1000.0).collect();
        lags.sort_by(f64::total_cmp);
        let at = |q: f64| lags.get(((lags.len() as f64 * q) as usize).min(lags.len().saturating_sub(1))).copied();
        let (mysql_counts_disagree, redis_counts_disagree) = counts_disagree(db, kv).await?;
        Ok(Self {
            events: rows.len(),
            applied: lags.len(),
            published: rows.iter().filter(|r| r.1.is_some()).count(),
            pairs_disagree: pairs_disagree(db).await?,
            mysql_counts_disagree,
            redis_counts_disagree,
            lag_p50_ms: at(0.5).unwrap_or(0.0),
            lag_p99_ms: at(0.99).unwrap_or(0.0),
            lag_max_ms: lags.last().copied().unwrap_or(0.0),
            published_max_ms: rows.iter().filter_map(|r| r.1).max().map_or(0.0, |us| us as f64 / 1000.0),
        })
    }
}

/// Follow events the consumer has applied so far, of any topic.
pub async fn applied(db: &MySqlPool) -> anyhow::Result<i64> {
    let (n,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM consumed_events WHERE consumer = ?").bind(CONSUMER).fetch_one(db).await?;
    Ok(n)
}

/// Events of `topic` committed more than `secs` ago (MariaDB's clock) and
/// not applied yet: zero once the relay and the consumer have caught up.
pub async fn unapplied_older_than(db: &MySqlPool, topic: &str, secs: u32) -> anyhow::Result<i64> {
    let (n,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM outbox o LEFT JOIN consumed_events c ON c.consumer = ? AND c.event_id = o.id \
         WHERE o.topic = ? AND c.event_id IS NULL AND o.created_at < NOW(3) - INTERVAL ? SECOND",
    )
    .bind(CONSUMER)
    .bind(topic)
    .bind(secs)
    .fetch_one(db)
    .await?;
    Ok(n)
}

async fn pairs_disagree(db: &MySqlPool) -> anyhow::Result<usize> {
    let (missing,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM follows f LEFT JOIN followers p ON p.followee_id = f.followee_id \
         AND p.follower_id = f.follower_id AND p.status = f.status AND p.version = f.version \
         WHERE p.followee_id IS NULL",
    )
    .fetch_one(db)
    .await?;
    let (extra,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM followers p LEFT JOIN follows f ON f.followee_id = p.followee_id \
         AND f.follower_id = p.follower_id WHERE f.follower_id IS NULL",
    )
    .fetch_one(db)
    .await?;
    Ok((missing + extra) as usize)
}

/// Users whose MySQL counts, and whose Redis counts hash (where one
/// exists), differ from the counts of `follows`.
async fn counts_disagree(db: &MySqlPool, kv: &Kv) -> anyhow::Result<(usize, usize)> {
    let pairs: Vec<(UserId, UserId)> =
        sqlx::query_as("SELECT follower_id, followee_id FROM follows WHERE status = 'following'").fetch_all(db).await?;
    let mut truth: HashMap<UserId, (i64, i64)> = HashMap::new();
    for (follower, followee) in pairs {
        truth.entry(followee).or_default().0 += 1;
        truth.entry(follower).or_default().1 += 1;
    }
    let stored: HashMap<UserId, (i64, i64)> =
        sqlx::query_as::<_, (UserId, i64, i64)>("SELECT user_id, followers, followings FROM follow_counts")
            .fetch_all(db)
            .await?
            .into_iter()
            .map(|(u, a, b)| (u, (a, b)))
            .collect();
    let users: BTreeSet<UserId> = truth.keys().chain(stored.keys()).copied().collect();
    let want = |u: &UserId| truth.get(u).copied().unwrap_or((0, 0));
    let mysql = users.iter().filter(|u| stored.get(u).copied().unwrap_or((0, 0)) != want(u)).count();
    let mut redis = 0;
    for u in &users {
        let (followers, followings): (Option<i64>, Option<i64>) = redis::cmd("HMGET")
            .arg(kv.keys.follow_counts(*u))
            .arg("followers")
            .arg("followings")
            .query_async(&mut kv.conn())
            .await?;
        let (a, b) = want(u);
        if followers.is_some_and(|n| n != a) || followings.is_some_and(|n| n != b) {
            redis += 1;
        }
    }
    Ok((mysql, redis))
}
