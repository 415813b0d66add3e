//! The writes: follow, unfollow, block, unblock.
//!
//! Invariant: a change of `follows` and the [`FollowEvent`] announcing it
//! commit in one transaction (the shared outbox), or neither does. Every
//! change of a pair adds one to its `version`; a request that changes
//! nothing (a second follow, an unfollow of someone not followed) writes no
//! event and answers success.
//!
//! Blocks and follows cannot cross: a follow reads the pair's block rows
//! with a shared lock before it writes, and a block inserts its row before it
//! cancels the follows both ways, so whichever commits second sees the other.

use chrono::{TimeZone, Utc};
use cityhub_platform::outbox;
use sqlx::MySqlConnection;

use super::{retry_deadlocks, EventKind, FollowEvent, Relation, Social, SocialError};
use crate::ids::UserId;
use crate::kv::CityKeys;

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The relation changed; its events are in the outbox.
    Changed,
    /// It already was as asked: nothing written.
    Unchanged,
}

impl Social {
    /// `me` follows `them`.
    pub async fn follow(&self, me: UserId, them: UserId) -> Result<Written, SocialError> {
        self.check_target(me, them).await?;
        let written = retry_deadlocks(|| async {
            let mut tx = self.db.begin().await?;
            let blocks: Vec<(UserId,)> = sqlx::query_as(
                "SELECT blocker_id FROM blocks \
                 WHERE (blocker_id = ? AND blocked_id = ?) OR (blocker_id = ? AND blocked_id = ?) LOCK IN SHARE MODE",
            )
            .bind(them)
            .bind(me)
            .bind(me)
            .bind(them)
            .fetch_all(&mut *tx)
            .await?;
            if blocks.iter().any(|&(by,)| by == them) {
                return Err(SocialError::BlockedByThem);
            }
            if !blocks.is_empty() {
                return Err(SocialError::BlockedByMe);
            }
            let written = self.set(&mut tx, me, them, Relation::Following).await?;
            tx.commit().await?;
            Ok(written)
        })
        .await?;
        self.forget_recommendations(&[me]).await;
        Ok(written)
    }

    /// `me` stops following `them`.
    pub async fn unfollow(&self, me: UserId, them: UserId) -> Result<Written, SocialError> {
        self.check_target(me, them).await?;
        let written = retry_deadlocks(|| async {
            let mut tx = self.db.begin().await?;
            let written = self.set(&mut tx, me, them, Relation::Canceled).await?;
            tx.commit().await?;
            Ok(written)
        })
        .await?;
        self.forget_recommendations(&[me]).await;
        Ok(written)
    }

    /// `me` blocks `them`: the follows both ways are canceled (through the
    /// outbox, like an unfollow) and neither can follow the other until
    /// `me` unblocks.
    pub async fn block(&self, me: UserId, them: UserId) -> Result<Written, SocialError> {
        self.check_target(me, them).await?;
        let written = retry_deadlocks(|| async {
            let mut tx = self.db.begin().await?;
            let inserted = sqlx::query("INSERT IGNORE INTO blocks (blocker_id, blocked_id) VALUES (?, ?)")
                .bind(me)
                .bind(them)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            self.set(&mut tx, me, them, Relation::Canceled).await?;
            self.set(&mut tx, them, me, Relation::Canceled).await?;
            tx.commit().await?;
            Ok(if inserted == 1 { Written::Changed } else { Written::Unchanged })
        })
        .await?;
        self.forget_recommendations(&[me, them]).await;
        Ok(written)
    }

    /// `me` lifts a block of `them` (follows canceled by it stay canceled).
    pub async fn unblock(&self, me: UserId, them: UserId) -> Result<Written, SocialError> {
        self.check_target(me, them).await?;
        let deleted = sqlx::query("DELETE FROM blocks WHERE blocker_id = ? AND blocked_id = ?")
            .bind(me)
            .bind(them)
            .execute(&self.db)
            .await?
            .rows_affected();
        self.forget_recommendations(&[me, them]).await;
        Ok(if deleted == 1 { Written::Changed } else { Written::Unchanged })
    }

    /// Whom `me` blocks, by id after `after`, at most `limit`.
    pub async fn blocks(&self, me: UserId, after: Option<UserId>, limit: u32) -> Result<Vec<UserId>, SocialError> {
        let rows: Vec<(UserId,)> = sqlx::query_as(
            "SELECT blocked_id FROM blocks WHERE blocker_id = ? AND blocked_id > ? ORDER BY blocked_id LIMIT ?",
        )
        .bind(me)
        .bind(after.unwrap_or_default())
        .bind(limit)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// The checks every write makes first: not oneself, an existing user.
    async fn check_target(&self, me: UserId, them: UserId) -> Result<(), SocialError> {
        if me == them {
            return Err(SocialError::Myself);
        }
        if !self.known.may_exist(them).await? || !self.user_exists(them).await? {
            return Err(SocialError::UnknownUser);
        }
        Ok(())
    }

    /// Puts the pair (follower, followee) in `to` inside `tx`, with its
    /// event, unless it is there already.
    async fn set(
        &self,
        tx: &mut MySqlConnection,
        follower: UserId,
        followee: UserId,
        to: Relation,
    ) -> Result<Written, SocialError> {
        let current: Option<(String, u64)> =
            sqlx::query_as("SELECT status, version FROM follows WHERE follower_id = ? AND followee_id = ? FOR UPDATE")
                .bind(follower)
                .bind(followee)
                .fetch_optional(&mut *tx)
                .await?;
        let version = match &current {
            Some((status, _)) if Relation::parse(status) == Some(to) => return Ok(Written::Unchanged),
            None if to == Relation::Canceled => return Ok(Written::Unchanged),
            Some((_, version)) => version + 1,
            None => 1,
        };
        let at_ms = Utc::now().timestamp_millis();
        let at = Utc.timestamp_millis_opt(at_ms).single().unwrap_or_default();
        sqlx::query(
            "INSERT INTO follows (follower_id, followee_id, status, version, followed_at) VALUES (?, ?, ?, ?, ?) \
             ON DUPLICATE KEY UPDATE status = VALUES(status), version = VALUES(version), \
             followed_at = IF(VALUES(status) = 'following', VALUES(followed_at), followed_at)",
        )
        .bind(follower)
        .bind(followee)
        .bind(to.as_str())
        .bind(version)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        let kind = match to {
            Relation::Following => EventKind::FollowCreated,
            Relation::Canceled => EventKind::FollowCanceled,
        };
        let event = FollowEvent { kind, follower_id: follower, followee_id: followee, version, at_ms };
        outbox::enqueue(&mut *tx, &self.settings.follow_topic, &event.key(), &event).await?;
        Ok(Written::Changed)
    }

    /// Drops the cached recommendations of `users` (best effort: they
    /// expire within `social.recommendations_ttl_secs` anyway).
    async fn forget_recommendations(&self, users: &[UserId]) {
        let drops = users.iter().map(|&user| redis::Cmd::del(self.kv.keys.recommendations(user))).collect();
        if let Err(err) = self.kv.conn().query_each(drops).await {
            tracing::warn!(error = %err, "cached recommendations not dropped; they expire");
        }
    }
}
