//! The reads: a user's followings and followers newest first, counts,
//! friends (mutual follows), common follows, and "does A follow B" for many B.
//!
//! Lists come from the Redis ZSets the follow consumer keeps (member: user
//! id, score: follow time in ms). A list that exists holds the marker `-`
//! (score 0, never shown): it was built from the projection, so "the key
//! exists" means "complete". A missing list (a user never read, Redis lost
//! its data) is rebuilt by its next reader, one per cluster (a Redis lock),
//! inside a MySQL transaction whose locking read of the user's projection
//! rows holds off the consumer until the rebuilt key is in place, so no
//! change falls between the read and the rename. Others wait for it, up to
//! `cache.wait_ms`. A list nobody reads for `social.list_ttl_secs` expires
//! (every read renews the TTL), so cold lists leave Redis and are rebuilt
//! when read again; the count correction also drops a list that drifted
//! from MySQL (see [`super::counts`]).
//!
//! The first page of a list of at least `social.hot_list_min` entries is kept
//! in process memory for `social.hot_page_ttl_ms` (a celebrity's followers,
//! read by everyone at once); it may lag the ZSet by that long.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use cityhub_platform::cache::lock;
use cityhub_platform::metrics as m;
use redis::{AsyncCommands, Script};

use super::{List, Relation, Social, SocialError};
use crate::ids::UserId;
use crate::kv::CityKeys;

static PAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/social_page.lua")));
static FILL_COUNTS: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/social_counts_fill.lua")));

/// The scripts this module runs, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&PAGE, &FILL_COUNTS]
}

/// Marks a list built from MySQL; never a user id, never shown.
const BUILT: &str = "-";
/// Members per `ZADD` while rebuilding.
const ZADD_CHUNK: usize = 1000;
/// The cache name of hot first pages in metrics.
const HOT_PAGES: &str = "follow_pages";
/// Entries of the scanned list one matching call reads, at most, per
/// entry asked for (see `Social::matching`).
pub const SCAN_PER_ENTRY: u32 = 10;
/// Entries read per chunk of a matching scan.
const SCAN_CHUNK: u32 = 50;

/// One user in a list, and since when (follow time, ms since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub user_id: UserId,
    pub at_ms: i64,
}

/// Where a page ends: the last entry shown. Written `<ms>-<user id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub at_ms: i64,
    pub user_id: UserId,
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.at_ms, self.user_id)
    }
}

impl FromStr for Cursor {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        let (at, user) = s.split_once('-').ok_or(())?;
        let digits = |p: &str| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(at) || !digits(user) {
            return Err(());
        }
        Ok(Self { at_ms: at.parse().map_err(drop)?, user_id: user.parse().map_err(drop)? })
    }
}

/// A page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// Entries in the whole list.
    pub total: u64,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

/// A page of a match of two lists (friends, common follows): no total,
/// which would cost the whole intersection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matches {
    pub entries: Vec<Entry>,
    /// Where the next page starts; `None` when the scanned list is done.
    pub next: Option<Cursor>,
}

/// A user's follower and following counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub followers: i64,
    pub followings: i64,
}

/// Parses `member, score, ...` pairs, leaving out the marker.
fn entries(flat: &[String]) -> Vec<Entry> {
    flat.chunks(2)
        .filter_map(|pair| match pair {
            [member, score] => Some(Entry { user_id: member.parse().ok()?, at_ms: score.parse::<f64>().ok()? as i64 }),
            _ => None,
        })
        .collect()
}

/// Cuts a page of `limit` out of `rest` (fetched with one entry to spare).
fn page(mut rest: Vec<Entry>, total: u64, limit: u32) -> Page {
    let more = rest.len() > limit as usize;
    rest.truncate(limit as usize);
    let next = more.then(|| rest.last().map(|e| Cursor { at_ms: e.at_ms, user_id: e.user_id })).flatten();
    Page { entries: rest, total, next }
}

impl Social {
    /// A page of `user`'s `list`, newest first, after `cursor`.
    pub async fn list(
        &self,
        user: UserId,
        list: List,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Arc<Page>, SocialError> {
        let hot_key = (user, list, limit);
        if cursor.is_none() {
            if let Some(page) = self.hot.get(&hot_key).await {
                metrics::counter!(m::CACHE_HITS, "cache" => HOT_PAGES, "layer" => "l1").increment(1);
                return Ok(page);
            }
        }
        let page = match self.read_page(user, list, cursor, limit).await? {
            Some(page) => page,
            None => {
                self.ensure(user, list).await?;
                self.read_page(user, list, cursor, limit).await?.ok_or(SocialError::Rebuilding)?
            }
        };
        let page = Arc::new(page);
        if cursor.is_none() && page.total >= self.settings.hot_list_min {
            self.hot.insert(hot_key, Arc::clone(&page)).await;
        }
        Ok(page)
    }

    /// One page from the ZSet in one script call; `None` when it is not built.
    async fn read_page(
        &self,
        user: UserId,
        list: List,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Option<Page>, SocialError> {
        let (max, member) = match cursor {
            Some(c) => (c.at_ms.to_string(), c.user_id.to_string()),
            None => ("+inf".to_owned(), String::new()),
        };
        let found: Option<(u64, Vec<String>)> = PAGE
            .key(self.kv.keys.follow_list(user, list.name()))
            .arg(max)
            .arg(member)
            .arg(limit + 1)
            .arg(self.list_ttl_ms())
            .invoke_async::<Option<Vec<redis::Value>>>(&mut self.kv.conn())
            .await?
            .map(|values| {
                let mut values = values.into_iter();
                let total = values.next().and_then(|v| redis::from_redis_value::<u64>(v).ok()).unwrap_or(0);
                (total, values.filter_map(|v| redis::from_redis_value::<String>(v).ok()).collect())
            });
        Ok(found.map(|(total, flat)| page(entries(&flat), total, limit)))
    }

    /// Makes sure `user`'s `list` is built: rebuilds it if this caller gets
    /// the lock, else waits for whoever has it (see the module doc).
    async fn ensure(&self, user: UserId, list: List) -> Result<(), SocialError> {
        let key = self.kv.keys.follow_list(user, list.name());
        let started = tokio::time::Instant::now();
        loop {
            // One command: does it exist, and if so keep it warm.
            let exists: bool = self.kv.conn().pexpire(&key, self.list_ttl_ms()).await?;
            if exists {
                return Ok(());
            }
            // A user who does not exist has no list to build: no MySQL.
            if !self.known.may_exist(user).await? {
                return Err(SocialError::UnknownUser);
            }
            let lock_key = self.kv.keys.follow_list_lock(user, list.name());
            if let Some(held) = lock::try_acquire(&self.kv, lock_key, self.rebuild_lease).await? {
                let rebuilt = self.rebuild(user, list, &key).await;
                if let Err(err) = held.release(&self.kv).await {
                    tracing::debug!(error = %err, "list rebuild lock not released; it lapses");
                }
                return rebuilt;
            }
            metrics::counter!(m::CACHE_LOCK_CONTENTION, "cache" => list.name()).increment(1);
            if started.elapsed() >= self.rebuild_wait {
                return Err(SocialError::Rebuilding);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Builds `user`'s `list` from the projection into a fresh key and
    /// renames it into place, inside the transaction whose locking read holds
    /// the consumer off the user's rows meanwhile.
    async fn rebuild(&self, user: UserId, list: List, key: &str) -> Result<(), SocialError> {
        let mut tx = self.db.begin().await?;
        let sql = match list {
            List::Followers => {
                "SELECT follower_id, followed_at, status FROM followers WHERE followee_id = ? LOCK IN SHARE MODE"
            }
            List::Followings => {
                "SELECT followee_id, followed_at, status FROM followers FORCE INDEX (idx_followers_follower) \
                 WHERE follower_id = ? LOCK IN SHARE MODE"
            }
        };
        let rows: Vec<(UserId, chrono::DateTime<chrono::Utc>, String)> =
            sqlx::query_as(sql).bind(user).fetch_all(&mut *tx).await?;
        if rows.is_empty() && !self.user_exists(user).await? {
            return Err(SocialError::UnknownUser);
        }
        let members: Vec<(i64, UserId)> = rows
            .into_iter()
            .filter(|(_, _, status)| Relation::parse(status) == Some(Relation::Following))
            .map(|(id, at, _)| (at.timestamp_millis(), id))
            .collect();
        let building = format!("{key}:build:{:016x}", rand::random::<u64>());
        let mut pipe = redis::pipe();
        pipe.atomic();
        pipe.del(&building).ignore();
        pipe.zadd(&building, BUILT, 0).ignore();
        for chunk in members.chunks(ZADD_CHUNK) {
            pipe.zadd_multiple(&building, chunk).ignore();
        }
        pipe.rename(&building, key).ignore();
        pipe.pexpire(key, self.list_ttl_ms()).ignore();
        pipe.query_async::<()>(&mut self.kv.conn()).await?;
        tx.commit().await?;
        metrics::counter!(m::CACHE_REBUILDS, "cache" => list.name(), "result" => "rebuilt").increment(1);
        tracing::debug!(%user, list = list.name(), entries = members.len(), "follow list rebuilt from MySQL");
        Ok(())
    }

    /// `user`'s follower and following counts: the Redis hash, filled from
    /// MySQL when missing.
    pub async fn counts(&self, user: UserId) -> Result<Counts, SocialError> {
        let key = self.kv.keys.follow_counts(user);
        let (followers, followings): (Option<i64>, Option<i64>) =
            redis::cmd("HMGET").arg(&key).arg("followers").arg("followings").query_async(&mut self.kv.conn()).await?;
        if let (Some(followers), Some(followings)) = (followers, followings) {
            return Ok(Counts { followers, followings });
        }
        if !self.known.may_exist(user).await? {
            return Err(SocialError::UnknownUser);
        }
        let row: Option<(i64, i64)> =
            sqlx::query_as("SELECT followers, followings FROM follow_counts WHERE user_id = ?")
                .bind(user)
                .fetch_optional(&self.db)
                .await?;
        let counts = match row {
            Some((followers, followings)) => Counts { followers, followings },
            None if self.user_exists(user).await? => Counts::default(),
            None => return Err(SocialError::UnknownUser),
        };
        FILL_COUNTS
            .key(key)
            .arg(counts.followers)
            .arg(counts.followings)
            .invoke_async::<i64>(&mut self.kv.conn())
            .await?;
        Ok(counts)
    }

    /// Users both `a` and `b` follow, a page of `a`'s followings (newest
    /// first, after `cursor`) that `b` follows too; see `Social::matching`.
    pub async fn common_follows(
        &self,
        a: UserId,
        b: UserId,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Matches, SocialError> {
        self.matching((a, List::Followings), (b, List::Followings), cursor, limit).await
    }

    /// `user`'s friends (they follow each other): a page of the user's
    /// followings (newest first, after `cursor`) who follow the user back;
    /// see `Social::matching`.
    pub async fn friends(&self, user: UserId, cursor: Option<Cursor>, limit: u32) -> Result<Matches, SocialError> {
        self.matching((user, List::Followings), (user, List::Followers), cursor, limit).await
    }

    /// A page of the entries of `scanned` (newest first, after `cursor`)
    /// that are also in `other`: `scanned` is read a chunk at a time (one
    /// script call) and each chunk asked of `other` (one `ZMSCORE`), never
    /// more than [`SCAN_PER_ENTRY`] × `limit` entries a call. So a call's
    /// work is bounded by its page, however long both lists are, and a
    /// client scrolls the whole match in work linear in the scanned list. A
    /// page may be short (or empty) and still carry a cursor: the scan
    /// stopped at its bound, and the next call goes on from there.
    async fn matching(
        &self,
        (user, list): (UserId, List),
        (other, other_list): (UserId, List),
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Matches, SocialError> {
        let other_key = self.built(other, other_list).await?;
        self.ensure(user, list).await?;
        let budget = limit.saturating_mul(SCAN_PER_ENTRY) as usize;
        let chunk = (limit + 1).max(SCAN_CHUNK);
        let (mut found, mut at, mut scanned) = (Vec::new(), cursor, 0usize);
        loop {
            let page = self.read_page(user, list, at, chunk).await?.ok_or(SocialError::Rebuilding)?;
            let ids: Vec<UserId> = page.entries.iter().map(|e| e.user_id).collect();
            let scores: Vec<Option<f64>> = if ids.is_empty() {
                Vec::new()
            } else {
                redis::cmd("ZMSCORE").arg(&other_key).arg(&ids).query_async(&mut self.kv.conn()).await?
            };
            for (entry, score) in page.entries.iter().zip(scores) {
                scanned += 1;
                if score.is_some() {
                    found.push(*entry);
                    if found.len() > limit as usize {
                        found.truncate(limit as usize);
                        let last = found.last().map(|e| Cursor { at_ms: e.at_ms, user_id: e.user_id });
                        return Ok(Matches { entries: found, next: last });
                    }
                }
                at = Some(Cursor { at_ms: entry.at_ms, user_id: entry.user_id });
                if scanned >= budget {
                    return Ok(Matches { entries: found, next: at });
                }
            }
            if page.next.is_none() {
                return Ok(Matches { entries: found, next: None });
            }
        }
    }

    /// For each of `ids`, whether `user` follows them: one `ZMSCORE`.
    pub async fn follows_each(&self, user: UserId, ids: &[UserId]) -> Result<Vec<bool>, SocialError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let key = self.built(user, List::Followings).await?;
        let scores: Vec<Option<f64>> = redis::cmd("ZMSCORE").arg(key).arg(ids).query_async(&mut self.kv.conn()).await?;
        Ok(scores.into_iter().map(|s| s.is_some()).collect())
    }

    /// How long an unread list stays in Redis, ms.
    fn list_ttl_ms(&self) -> i64 {
        self.settings.list_ttl_secs.as_millis() as i64
    }

    /// The key of `user`'s `list`, built.
    async fn built(&self, user: UserId, list: List) -> Result<String, SocialError> {
        self.ensure(user, list).await?;
        Ok(self.kv.keys.follow_list(user, list.name()))
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;

    /// Entries as the ZSet orders them: newest first, then member bytes descending.
    fn order(entries: &mut [Entry]) {
        entries.sort_by_key(|e| (Reverse(e.at_ms), Reverse(e.user_id.to_string())));
    }

    /// Whether `e` comes after `cursor` in that order.
    fn after(e: &Entry, cursor: &Cursor) -> bool {
        e.at_ms < cursor.at_ms || (e.at_ms == cursor.at_ms && e.user_id.to_string() < cursor.user_id.to_string())
    }

    #[test]
    fn cursors_round_trip_and_refuse_junk() {
        let c = Cursor { at_ms: 1_733_000_000_123, user_id: UserId(42) };
        assert_eq!(c.to_string().parse::<Cursor>(), Ok(c));
        for bad in ["", "-", "1-", "-1", "1-2-3", "a-1", "1-+2", "1 -2", "123456789012345678901-1"] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn entries_skip_the_marker_and_pages_cut_with_a_cursor() {
        let flat: Vec<String> = ["9", "30", "-", "0", "10", "30", "2", "20"].map(String::from).to_vec();
        let mut found = entries(&flat);
        order(&mut found);
        let ids: Vec<u64> = found.iter().map(|e| e.user_id.get()).collect();
        // Equal scores: member bytes descending, as Redis orders them ("9" > "10").
        assert_eq!(ids, [9, 10, 2]);
        let first = page(found.clone(), 3, 2);
        assert_eq!(first.next, Some(Cursor { at_ms: 30, user_id: UserId(10) }));
        let rest: Vec<u64> = found.iter().filter(|e| after(e, &first.next.unwrap())).map(|e| e.user_id.get()).collect();
        assert_eq!(rest, [2]);
    }
}
