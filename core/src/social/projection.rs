//! The follow consumer's work: applies one [`FollowEvent`] to the
//! projection (the `followers` table and `follow_counts`) and to Redis (the
//! pair's two list ZSets and the two users' counts hashes).
//!
//! - **Once per event id.** The event id goes into `consumed_events` in the
//!   same transaction as its effects; a redelivery finds it there, however
//!   late, and changes nothing.
//! - **Newest version wins.** An event whose version is not above the one the
//!   pair's `followers` row holds is recorded and otherwise ignored, so an
//!   older event arriving after a newer one cannot undo it.
//! - **Redis in the projection's order.** Redis is written while the pair's
//!   `followers` row (and the users' `follow_counts` rows) are locked, before
//!   the commit: two changes of a pair, or two count changes of a user, reach
//!   Redis in the order they reach MySQL. If the commit then fails, the event
//!   is redelivered and writes the same again.
//! - Locks are taken in one order (event row, pair row, count rows by user
//!   id), so consumers do not deadlock with each other; a deadlock with a
//!   list rebuild runs the event again.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use redis::Script;
use sqlx::MySqlPool;

use super::{retry_deadlocks, FollowEvent, List, Relation, SocialError};
use crate::ids::UserId;
use crate::kv::{CityKeys, Kv};

static APPLY: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/social_apply.lua")));

/// The consumer name its applied events are recorded under.
pub const CONSUMER: &str = "follow_projection";

/// What applying an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Projected {
    /// Its change is in the projection and in Redis.
    Changed,
    /// The pair already had this version or a newer one: recorded, ignored.
    Stale,
    /// This event id was applied before: nothing changed.
    Duplicate,
}

impl Projected {
    pub fn label(self) -> &'static str {
        match self {
            Projected::Changed => "changed",
            Projected::Stale => "stale",
            Projected::Duplicate => "duplicate",
        }
    }
}

/// Applies follow events. Clone freely.
#[derive(Clone)]
pub struct Projection {
    db: MySqlPool,
    kv: Kv,
}

impl Projection {
    pub fn new(db: MySqlPool, kv: Kv) -> Self {
        Self { db, kv }
    }

    /// Applies event `event_id` (see the module doc).
    pub async fn apply(&self, event_id: u64, event: &FollowEvent) -> Result<Projected, SocialError> {
        retry_deadlocks(|| self.apply_once(event_id, event)).await
    }

    async fn apply_once(&self, event_id: u64, e: &FollowEvent) -> Result<Projected, SocialError> {
        let mut tx = self.db.begin().await?;
        let fresh = sqlx::query("INSERT IGNORE INTO consumed_events (consumer, event_id) VALUES (?, ?)")
            .bind(CONSUMER)
            .bind(event_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if fresh == 0 {
            return Ok(Projected::Duplicate);
        }
        let row: Option<(String, u64, DateTime<Utc>)> = sqlx::query_as(
            "SELECT status, version, followed_at FROM followers WHERE followee_id = ? AND follower_id = ? FOR UPDATE",
        )
        .bind(e.followee_id)
        .bind(e.follower_id)
        .fetch_optional(&mut *tx)
        .await?;
        if row.as_ref().is_some_and(|(_, version, _)| *version >= e.version) {
            tx.commit().await?;
            return Ok(Projected::Stale);
        }
        let was = row.as_ref().is_some_and(|(status, _, _)| Relation::parse(status) == Some(Relation::Following));
        let now = e.relation() == Relation::Following;
        let followed_at = match &row {
            Some((_, _, at)) if !now => *at,
            _ => e.at(),
        };
        sqlx::query(
            "INSERT INTO followers (followee_id, follower_id, status, version, followed_at) VALUES (?, ?, ?, ?, ?) \
             ON DUPLICATE KEY UPDATE status = VALUES(status), version = VALUES(version), followed_at = VALUES(followed_at)",
        )
        .bind(e.followee_id)
        .bind(e.follower_id)
        .bind(e.relation().as_str())
        .bind(e.version)
        .bind(followed_at)
        .execute(&mut *tx)
        .await?;
        let delta = i64::from(now) - i64::from(was);
        let counts = if delta == 0 { None } else { Some(self.count(&mut tx, e, delta).await?) };
        let (op, score) = (if now { "add" } else { "rem" }, followed_at.timestamp_millis());
        let count_args = |user: UserId| match &counts {
            Some(rows) => {
                let (followers, followings) = rows.iter().find(|r| r.0 == user).map_or((0, 0), |r| (r.1, r.2));
                (followers.to_string(), followings.to_string())
            }
            None => (String::new(), String::new()),
        };
        let keys = &self.kv.keys;
        // One script per user: the two users' keys live in slots of their own.
        let applies =
            [(e.follower_id, List::Followings, e.followee_id), (e.followee_id, List::Followers, e.follower_id)].map(
                |(user, list, other)| {
                    let (followers, followings) = count_args(user);
                    let mut conn = self.kv.conn();
                    let mut apply = APPLY.key(keys.follow_list(user, list.name()));
                    apply.key(keys.follow_counts(user)).arg(op).arg(other).arg(score).arg(followers).arg(followings);
                    async move { apply.invoke_async::<()>(&mut conn).await }
                },
            );
        let [follower, followee] = applies;
        tokio::try_join!(follower, followee)?;
        tx.commit().await?;
        Ok(Projected::Changed)
    }

    /// Moves both users' counts by `delta` (the follower's followings, the
    /// followee's followers), locking their rows in user id order; answers
    /// (user, followers, followings) of both.
    async fn count(
        &self,
        tx: &mut sqlx::MySqlConnection,
        e: &FollowEvent,
        delta: i64,
    ) -> Result<Vec<(UserId, i64, i64)>, SocialError> {
        let mut moves = [(e.follower_id, 0, delta), (e.followee_id, delta, 0)];
        moves.sort_by_key(|m| m.0);
        for (user, followers, followings) in moves {
            sqlx::query(
                "INSERT INTO follow_counts (user_id, followers, followings) VALUES (?, ?, ?) \
                 ON DUPLICATE KEY UPDATE followers = followers + VALUES(followers), \
                 followings = followings + VALUES(followings)",
            )
            .bind(user)
            .bind(followers)
            .bind(followings)
            .execute(&mut *tx)
            .await?;
        }
        let rows = sqlx::query_as(
            "SELECT user_id, followers, followings FROM follow_counts WHERE user_id IN (?, ?) FOR UPDATE",
        )
        .bind(e.follower_id)
        .bind(e.followee_id)
        .fetch_all(&mut *tx)
        .await?;
        Ok(rows)
    }
}

/// The script this module runs, to load at connect time.
pub fn script() -> &'static Script {
    &APPLY
}
