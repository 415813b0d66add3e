//! Count correction: recomputes users' follower and following counts from
//! the projection (`followers`) and repairs `follow_counts` and the Redis
//! counts hash where they differ.
//!
//! A user's check runs with their `follow_counts` row locked, and the
//! consumer changes a count only under that lock, in the same transaction as
//! the projection rows it counts: so the recount sees every change the row
//! has absorbed and none it has not, and a check never races a consumer into
//! a wrong "repair". Redis is rewritten under the same lock.
//!
//! Under that lock it also samples the user's two follow lists in Redis
//! (the consumer changes a user's list only while holding the user's count
//! row): a list whose size differs from the projection's count, or holds a
//! sampled member the projection does not (up to `social.list_sample` of
//! the list's random members), or lacks one of the projection's newest
//! `social.list_sample` rows, is dropped; its next reader rebuilds it from
//! the projection.

use std::time::Duration;

use cityhub_platform::db::is_transient;
use sqlx::MySqlPool;

use redis::AsyncCommands;

use super::{List, SocialError};
use crate::ids::UserId;
use crate::kv::{CityKeys, Kv};

/// What one round of checks found and fixed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Correction {
    pub checked: usize,
    /// `follow_counts` rows that were wrong (or missing with non-zero counts).
    pub fixed_mysql: usize,
    /// Redis counts hashes that were wrong (a missing hash is left for the
    /// next reader to fill).
    pub fixed_redis: usize,
    /// Follow lists in Redis that drifted from the projection and were dropped.
    pub dropped_lists: usize,
}

/// Checks counts. Clone freely.
#[derive(Clone)]
pub struct CountCheck {
    db: MySqlPool,
    kv: Kv,
    /// Members of each list compared per check.
    sample: u32,
}

impl CountCheck {
    pub fn new(db: MySqlPool, kv: Kv, sample: u32) -> Self {
        Self { db, kv, sample }
    }

    /// Users on either side of a projection row changed in the last `secs` seconds.
    pub async fn recently_changed(&self, within: Duration) -> Result<Vec<UserId>, SocialError> {
        let secs = within.as_secs();
        let rows: Vec<(UserId,)> = sqlx::query_as(
            "SELECT follower_id FROM followers WHERE updated_at >= CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND \
             UNION SELECT followee_id FROM followers WHERE updated_at >= CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND",
        )
        .bind(secs)
        .bind(secs)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Up to `n` user ids after `after`, in id order (the slow sweep of everyone).
    pub async fn users_after(&self, after: UserId, n: u32) -> Result<Vec<UserId>, SocialError> {
        let rows: Vec<(UserId,)> = sqlx::query_as("SELECT id FROM users WHERE id > ? ORDER BY id LIMIT ?")
            .bind(after)
            .bind(n)
            .fetch_all(&self.db)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Checks and repairs each of `users` (see the module doc).
    pub async fn correct(&self, users: &[UserId]) -> Result<Correction, SocialError> {
        let mut done = Correction::default();
        for &user in users {
            let mut tries = 1;
            let (mysql, redis, lists) = loop {
                match self.correct_one(user).await {
                    Err(SocialError::Db(err)) if tries < 3 && is_transient(&err) => {
                        tracing::debug!(%user, error = %err, "count check conflicted; again");
                        tries += 1;
                    }
                    other => break other?,
                }
            };
            done.checked += 1;
            done.fixed_mysql += usize::from(mysql);
            done.fixed_redis += usize::from(redis);
            done.dropped_lists += lists;
        }
        Ok(done)
    }

    async fn correct_one(&self, user: UserId) -> Result<(bool, bool, usize), SocialError> {
        let mut tx = self.db.begin().await?;
        let stored: Option<(i64, i64)> =
            sqlx::query_as("SELECT followers, followings FROM follow_counts WHERE user_id = ? FOR UPDATE")
                .bind(user)
                .fetch_optional(&mut *tx)
                .await?;
        let (followers,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM followers WHERE followee_id = ? AND status = 'following'")
                .bind(user)
                .fetch_one(&mut *tx)
                .await?;
        let (followings,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM followers FORCE INDEX (idx_followers_follower) \
             WHERE follower_id = ? AND status = 'following'",
        )
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        let truth = (followers, followings);
        let mysql_wrong = match stored {
            Some(row) => row != truth,
            None => truth != (0, 0),
        };
        if mysql_wrong {
            sqlx::query(
                "INSERT INTO follow_counts (user_id, followers, followings) VALUES (?, ?, ?) \
                 ON DUPLICATE KEY UPDATE followers = VALUES(followers), followings = VALUES(followings)",
            )
            .bind(user)
            .bind(followers)
            .bind(followings)
            .execute(&mut *tx)
            .await?;
            tracing::warn!(%user, ?stored, followers, followings, "follow counts in MySQL were wrong; repaired");
        }
        let key = self.kv.keys.follow_counts(user);
        let cached: (Option<i64>, Option<i64>) =
            redis::cmd("HMGET").arg(&key).arg("followers").arg("followings").query_async(&mut self.kv.conn()).await?;
        let redis_wrong = match cached {
            (None, None) => false,
            (Some(a), Some(b)) => (a, b) != truth,
            _ => true,
        };
        if redis_wrong {
            let _: () = redis::cmd("HSET")
                .arg(&key)
                .arg("followers")
                .arg(followers)
                .arg("followings")
                .arg(followings)
                .query_async(&mut self.kv.conn())
                .await?;
            tracing::warn!(%user, ?cached, followers, followings, "follow counts in Redis were wrong; repaired");
        }
        let mut dropped = 0;
        for (list, count) in [(List::Followers, followers), (List::Followings, followings)] {
            if self.list_drifted(&mut tx, user, list, count).await? {
                let _: () = self.kv.conn().del(self.kv.keys.follow_list(user, list.name())).await?;
                tracing::warn!(%user, list = list.name(), "a follow list in Redis drifted from MySQL; dropped");
                dropped += 1;
            }
        }
        tx.commit().await?;
        Ok((mysql_wrong, redis_wrong, dropped))
    }

    /// Whether `user`'s `list` in Redis (if there is one) disagrees with the
    /// projection, which counts `count` entries: its size, a sample of its
    /// members, and the projection's newest rows.
    async fn list_drifted(
        &self,
        tx: &mut sqlx::MySqlConnection,
        user: UserId,
        list: List,
        count: i64,
    ) -> Result<bool, SocialError> {
        let key = self.kv.keys.follow_list(user, list.name());
        let (size, sampled): (i64, Vec<String>) = redis::pipe()
            .zcard(&key)
            .cmd("ZRANDMEMBER")
            .arg(&key)
            .arg(self.sample)
            .query_async(&mut self.kv.conn())
            .await?;
        if size == 0 {
            return Ok(false);
        }
        if size - 1 != count {
            return Ok(true);
        }
        let (mine, other) = match list {
            List::Followers => ("followee_id", "follower_id"),
            List::Followings => ("follower_id", "followee_id"),
        };
        let members: Vec<UserId> = sampled.iter().filter_map(|m| m.parse().ok()).collect();
        if !members.is_empty() {
            let marks = vec!["?"; members.len()].join(", ");
            let sql = format!(
                "SELECT COUNT(*) FROM followers WHERE {mine} = ? AND status = 'following' AND {other} IN ({marks})"
            );
            let mut query = sqlx::query_scalar::<_, i64>(&sql).bind(user);
            for m in &members {
                query = query.bind(m);
            }
            if query.fetch_one(&mut *tx).await? != members.len() as i64 {
                return Ok(true);
            }
        }
        let sql = format!(
            "SELECT {other} FROM followers WHERE {mine} = ? AND status = 'following' ORDER BY followed_at DESC LIMIT ?"
        );
        let newest: Vec<(UserId,)> = sqlx::query_as(&sql).bind(user).bind(self.sample).fetch_all(&mut *tx).await?;
        if newest.is_empty() {
            return Ok(false);
        }
        let ids: Vec<UserId> = newest.into_iter().map(|(id,)| id).collect();
        let scores: Vec<Option<f64>> =
            redis::cmd("ZMSCORE").arg(&key).arg(&ids).query_async(&mut self.kv.conn()).await?;
        Ok(scores.iter().any(Option::is_none))
    }

    /// Forgets applied-event records older than `days` (far past any redelivery).
    pub async fn purge_consumed(&self, days: u32) -> Result<u64, SocialError> {
        let deleted = sqlx::query(
            "DELETE FROM consumed_events WHERE consumed_at < CURRENT_TIMESTAMP(3) - INTERVAL ? DAY LIMIT 10000",
        )
        .bind(days)
        .execute(&self.db)
        .await?
        .rows_affected();
        Ok(deleted)
    }
}
