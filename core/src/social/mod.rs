//! The social graph: follows, blocks, and every copy derived from them.
//!
//! Where a relation lives and what each copy promises (docs/GUARANTEES.md, "The social
//! graph" section walks one follow from request to follower list):
//! - `follows` (MySQL) is the truth. A follow, unfollow or block changes it and
//!   writes the [`FollowEvent`] that announces the change into the shared
//!   outbox in the same transaction ([`graph`]): a change is never saved
//!   without its event. Each pair has one row whose `version` grows with every
//!   change, and the event carries it.
//! - The follow consumer applies events once per event id and in version order
//!   per pair ([`projection`]): the `followers` table (the reverse index), the
//!   `follow_counts` table, and in Redis each user's followings and followers
//!   ZSets (scored by follow time) and counts hash. After a drain every copy
//!   agrees with `follows`.
//! - Reads come from Redis ([`lists`]): a missing list is rebuilt from the
//!   projection by its next reader; the first page of a very long list is
//!   served from process memory for `social.hot_page_ttl_ms`.
//! - [`recommend`]: friends of friends, computed from the projection and
//!   cached briefly. [`counts`]: the correction job's checks.

pub mod counts;
pub mod graph;
pub mod lists;
pub mod projection;
pub mod recommend;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use cityhub_platform::outbox::OutboxError;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

pub use counts::{Correction, CountCheck};
pub use graph::Written;
pub use lists::{Counts, Cursor, Entry, Matches, Page};
pub use projection::{Projected, Projection};
pub use recommend::Recommendation;

use crate::auth::KnownUsers;
use crate::config::{CacheSettings, SocialSettings};
use crate::ids::UserId;
use crate::kv::Kv;

/// The state of an ordered pair (follower, followee), as `follows.status`
/// and `followers.status` store it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    Following,
    Canceled,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Following => "following",
            Relation::Canceled => "canceled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "following" => Some(Relation::Following),
            "canceled" => Some(Relation::Canceled),
            _ => None,
        }
    }
}

/// One user's two lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum List {
    /// Whom the user follows.
    Followings,
    /// Who follows the user.
    Followers,
}

impl List {
    pub fn name(self) -> &'static str {
        match self {
            List::Followings => "followings",
            List::Followers => "followers",
        }
    }
}

/// What a follow event announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    FollowCreated,
    FollowCanceled,
}

/// The event of one change of a pair, written to the outbox with the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowEvent {
    pub kind: EventKind,
    pub follower_id: UserId,
    pub followee_id: UserId,
    /// The pair's `follows.version` after this change.
    pub version: u64,
    /// When the change was made, ms since the epoch (a follow's score).
    pub at_ms: i64,
}

impl FollowEvent {
    /// The relation the pair has after this event.
    pub fn relation(&self) -> Relation {
        match self.kind {
            EventKind::FollowCreated => Relation::Following,
            EventKind::FollowCanceled => Relation::Canceled,
        }
    }

    /// The outbox key: a pair's events are relayed in order on one queue.
    pub fn key(&self) -> String {
        format!("{}:{}", self.follower_id, self.followee_id)
    }

    pub fn at(&self) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(self.at_ms).single().unwrap_or_default()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SocialError {
    #[error("you cannot follow or block yourself")]
    Myself,
    #[error("no such user")]
    UnknownUser,
    #[error("this user blocked you")]
    BlockedByThem,
    #[error("you blocked this user; unblock them first")]
    BlockedByMe,
    #[error("the list is being rebuilt; try again")]
    Rebuilding,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Outbox(#[from] OutboxError),
}

/// The social graph's writes and reads. Clone freely.
#[derive(Clone)]
pub struct Social {
    db: MySqlPool,
    kv: Kv,
    /// Made-up user ids are refused with no MySQL work.
    known: KnownUsers,
    settings: SocialSettings,
    /// First pages of long lists, by (user, list, page size).
    hot: moka::future::Cache<(UserId, List, u32), Arc<Page>>,
    /// A list rebuild's lock lease, and how long a reader waits for another's rebuild.
    rebuild_lease: Duration,
    rebuild_wait: Duration,
}

impl Social {
    pub fn new(db: MySqlPool, kv: Kv, known: KnownUsers, settings: &SocialSettings, cache: &CacheSettings) -> Self {
        let hot = moka::future::Cache::builder()
            .max_capacity(settings.hot_pages_max)
            .time_to_live(settings.hot_page_ttl_ms)
            .build();
        Self {
            db,
            kv,
            known,
            settings: settings.clone(),
            hot,
            rebuild_lease: cache.lock_lease_ms,
            rebuild_wait: cache.wait_ms,
        }
    }

    /// Whether user `id` exists.
    async fn user_exists(&self, id: UserId) -> Result<bool, sqlx::Error> {
        let found: Option<(UserId,)> =
            sqlx::query_as("SELECT id FROM users WHERE id = ?").bind(id).fetch_optional(&self.db).await?;
        Ok(found.is_some())
    }
}

/// How often a transaction InnoDB rolled back as a deadlock's victim is run again.
const DEADLOCK_ATTEMPTS: u32 = 4;

/// Runs `attempt` (one whole transaction) again while it is a deadlock's victim.
async fn retry_deadlocks<T, F, Fut>(mut attempt: F) -> Result<T, SocialError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SocialError>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(SocialError::Db(err)) if tries < DEADLOCK_ATTEMPTS && cityhub_platform::db::is_deadlock(&err) => {
                tracing::debug!(tries, "social write was a deadlock victim; running it again");
                tries += 1;
            }
            done => return done,
        }
    }
}
