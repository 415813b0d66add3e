//! Recommendations: friends of friends, ranked by how many of the user's
//! friends (mutual follows) follow them, leaving out the user, whom the user
//! follows already, and blocks either way.
//!
//! Computed from the projection in one query (indexes on both directions of
//! `followers`), at most `social.recommendations_max` of them, and kept in
//! Redis for `social.recommendations_ttl_secs` so paging and repeated visits
//! do not recompute; the user's own follows and blocks drop the cached list.

use serde::{Deserialize, Serialize};

use super::{Social, SocialError};
use crate::ids::UserId;
use crate::kv::CityKeys;

/// A suggested user and how many of the caller's friends follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recommendation {
    pub user_id: UserId,
    pub friends: u32,
}

impl Social {
    /// Up to `limit` recommendations for `user`, from position `offset` of
    /// the ranked list; also where the next page starts, if there is one.
    pub async fn recommendations(
        &self,
        user: UserId,
        offset: usize,
        limit: u32,
    ) -> Result<(Vec<Recommendation>, Option<usize>), SocialError> {
        let ranked = self.ranked(user).await?;
        let end = offset.saturating_add(limit as usize).min(ranked.len());
        let page = ranked.get(offset.min(end)..end).unwrap_or_default().to_vec();
        Ok((page, (end < ranked.len()).then_some(end)))
    }

    /// The whole ranked list: cached, or computed and cached.
    async fn ranked(&self, user: UserId) -> Result<Vec<Recommendation>, SocialError> {
        let key = self.kv.keys.recommendations(user);
        let cached: Option<String> = redis::cmd("GET").arg(&key).query_async(&mut self.kv.conn()).await?;
        if let Some(list) = cached.and_then(|json| serde_json::from_str(&json).ok()) {
            return Ok(list);
        }
        let rows: Vec<(UserId, i64)> = sqlx::query_as(
            "SELECT c.followee_id, COUNT(*) AS friends \
             FROM followers mine \
             JOIN followers back ON back.followee_id = mine.follower_id AND back.follower_id = mine.followee_id \
                  AND back.status = 'following' \
             JOIN followers c FORCE INDEX (idx_followers_follower) ON c.follower_id = mine.followee_id \
                  AND c.status = 'following' \
             LEFT JOIN followers already ON already.followee_id = c.followee_id AND already.follower_id = mine.follower_id \
                  AND already.status = 'following' \
             LEFT JOIN blocks mine_b ON mine_b.blocker_id = mine.follower_id AND mine_b.blocked_id = c.followee_id \
             LEFT JOIN blocks their_b ON their_b.blocker_id = c.followee_id AND their_b.blocked_id = mine.follower_id \
             WHERE mine.follower_id = ? AND mine.status = 'following' AND c.followee_id <> mine.follower_id \
               AND already.follower_id IS NULL AND mine_b.blocker_id IS NULL AND their_b.blocker_id IS NULL \
             GROUP BY c.followee_id ORDER BY friends DESC, c.followee_id LIMIT ?",
        )
        .bind(user)
        .bind(self.settings.recommendations_max)
        .fetch_all(&self.db)
        .await?;
        let list: Vec<Recommendation> =
            rows.into_iter().map(|(user_id, friends)| Recommendation { user_id, friends: friends as u32 }).collect();
        let json = serde_json::to_string(&list).unwrap_or_else(|_| "[]".into());
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg(json)
            .arg("EX")
            .arg(self.settings.recommendations_ttl_secs.as_secs())
            .query_async(&mut self.kv.conn())
            .await?;
        Ok(list)
    }
}
