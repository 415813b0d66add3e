//! The follow feed: the notes of the people a shopper follows, newest
//! first, read with a scroll cursor.
//!
//! - **Push.** The feed consumer takes each "note published" event (relayed
//!   from the outbox) and adds the note id, scored by its publish time, to
//!   the author's own list and to the inbox ZSet of each of the author's
//!   followers ([`Feed::push`]). `ZADD` of the same member and score is a
//!   no-op, so a redelivered event changes nothing. Every list keeps only
//!   its newest `notes.inbox_max` ids.
//! - **Pull.** An author with more than `notes.pull_above_followers`
//!   followers is not pushed (one inbox write per follower per note would
//!   cost more than the reads): the author joins the pulled set, and a
//!   reader merges the author's own list into their inbox at read time, if
//!   they follow the author then. An author stays pulled once pulled, so no
//!   note falls between the two ways.
//! - **Reading** ([`Feed::page`]) costs one Redis round trip (the inbox, and
//!   whether the reader follows each pulled author; the pulled set itself
//!   is read at most once a second per process), and a second only when the
//!   reader follows pulled authors (their lists). The cursor is the last
//!   score seen and how many items of the page carried it: items of equal
//!   score are skipped by that count, and a page whose items all share the
//!   cursor's score adds its count to the cursor's, so such a page is never
//!   fetched again. New notes score above every cursor, so they never
//!   repeat or push out items of a scroll under way.
//! - Unfollowing stops pushes at once (the consumer reads the followers of
//!   the moment) and pulls at the next read; ids pushed before stay in the
//!   inbox.

use std::cmp::Reverse;
use std::sync::Arc;

use redis::AsyncCommands;
use sqlx::MySqlPool;

use super::{NoteError, NotePublished};
use crate::config::NoteSettings;
use crate::ids::{NoteId, UserId};
use crate::kv::{CityKeys, Kv};
use crate::social::{List, Social};

/// How long a process reuses its read of the pulled authors.
const PULLED_FRESH: std::time::Duration = std::time::Duration::from_secs(1);

/// Followers read from MySQL, and inboxes written, per round.
const PUSH_CHUNK: u32 = 1000;

/// Where a feed page starts: below `max` (inclusive), skipping the first
/// `offset` items that score exactly `max`. The first page has no `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedCursor {
    pub max: Option<i64>,
    pub offset: u32,
}

/// One page of a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedPage {
    /// Note ids with their publish time, newest first.
    pub items: Vec<(NoteId, i64)>,
    /// Where the next page starts; `None` when this one came up short.
    pub next: Option<FeedCursor>,
}

/// How an event was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Into this many inboxes.
    Inboxes(usize),
    /// Not pushed: the author is pulled by readers.
    Pulled,
}

/// The feed's writes and reads. Clone freely.
#[derive(Clone)]
pub struct Feed {
    db: MySqlPool,
    kv: Kv,
    social: Social,
    inbox_max: u32,
    pull_above: u64,
    /// The follow lists' idle TTL, ms (a read renews it).
    list_ttl_ms: i64,
    /// The pulled authors as this process last read them.
    pulled: moka::future::Cache<(), Arc<Vec<UserId>>>,
}

impl Feed {
    pub fn new(db: MySqlPool, kv: Kv, social: Social, settings: &NoteSettings, list_ttl: std::time::Duration) -> Self {
        let (inbox_max, pull_above) = (settings.inbox_max, settings.pull_above_followers);
        let pulled = moka::future::Cache::builder().max_capacity(1).time_to_live(PULLED_FRESH).build();
        Self { db, kv, social, inbox_max, pull_above, list_ttl_ms: list_ttl.as_millis() as i64, pulled }
    }

    /// Adds a member to a bounded ZSet in `pipe`.
    fn bounded_add(&self, key: &str, e: &NotePublished) -> [redis::Cmd; 2] {
        [
            redis::Cmd::zadd(key, e.note_id, e.created_ms),
            redis::Cmd::zremrangebyrank(key, 0, -(self.inbox_max as isize) - 1),
        ]
    }

    /// Pushes one published note (see the module doc).
    pub async fn push(&self, e: &NotePublished) -> Result<Pushed, NoteError> {
        self.kv.conn().query_each(self.bounded_add(&self.kv.keys.feed_authored(e.author), e).into()).await?;
        let pulled: bool = self.kv.conn().sismember(self.kv.keys.feed_pulled(), e.author).await?;
        if pulled {
            return Ok(Pushed::Pulled);
        }
        let followers: Option<i64> = sqlx::query_scalar("SELECT followers FROM follow_counts WHERE user_id = ?")
            .bind(e.author)
            .fetch_optional(&self.db)
            .await?;
        if followers.unwrap_or(0) as u64 > self.pull_above {
            let _: () = self.kv.conn().sadd(self.kv.keys.feed_pulled(), e.author).await?;
            return Ok(Pushed::Pulled);
        }
        let (mut after, mut pushed) = (UserId(0), 0);
        loop {
            let batch: Vec<(UserId,)> = sqlx::query_as(
                "SELECT follower_id FROM followers WHERE followee_id = ? AND status = 'following' \
                 AND follower_id > ? ORDER BY follower_id LIMIT ?",
            )
            .bind(e.author)
            .bind(after)
            .bind(PUSH_CHUNK)
            .fetch_all(&self.db)
            .await?;
            let Some(&(last,)) = batch.last() else { break };
            let adds = batch.iter().flat_map(|(follower,)| self.bounded_add(&self.kv.keys.feed_inbox(*follower), e));
            self.kv.conn().query_each(adds.collect()).await?;
            pushed += batch.len();
            if batch.len() < PUSH_CHUNK as usize {
                break;
            }
            after = last;
        }
        Ok(Pushed::Inboxes(pushed))
    }

    /// A page of `user`'s feed: up to `count` notes from `cursor` on.
    pub async fn page(&self, user: UserId, cursor: FeedCursor, count: u32) -> Result<FeedPage, NoteError> {
        let max = cursor.max.map_or_else(|| "+inf".to_owned(), |m| m.to_string());
        let want = (cursor.offset + count) as isize;
        let mut pulled = (*self.pulled().await?).clone();
        pulled.retain(|&a| a != user);
        let followings = self.kv.keys.follow_list(user, List::Followings.name());
        let mut pipe = redis::pipe();
        pipe.zrevrangebyscore_limit_withscores(self.kv.keys.feed_inbox(user), &max, "-inf", 0, want);
        if !pulled.is_empty() {
            // PEXPIRE: does the list exist, and keep it so for the ZMSCORE after it.
            pipe.pexpire(&followings, self.list_ttl_ms).cmd("ZMSCORE").arg(&followings).arg(&pulled);
        }
        let values: Vec<redis::Value> = pipe.query_async(&mut self.kv.conn()).await?;
        let mut items: Vec<(NoteId, i64)> = parse(&values[0])?;
        if pulled.is_empty() {
            return Ok(cut(items, cursor, count));
        }
        let (built, scores): (bool, Vec<Option<f64>>) = (parse(&values[1])?, parse(&values[2])?);
        // A list not in Redis is rebuilt from MySQL (more round trips, on a miss only).
        let follows = match built {
            true => scores.iter().map(Option::is_some).collect(),
            false => self.social.follows_each(user, &pulled).await?,
        };
        let followed: Vec<UserId> = pulled.into_iter().zip(follows).filter_map(|(a, f)| f.then_some(a)).collect();
        if !followed.is_empty() {
            let reads = followed.iter().map(|author| {
                redis::Cmd::zrevrangebyscore_limit_withscores(
                    self.kv.keys.feed_authored(*author),
                    &max,
                    "-inf",
                    0,
                    want,
                )
            });
            for list in self.kv.conn().query_each(reads.collect()).await? {
                items.extend(parse::<Vec<(NoteId, i64)>>(&list)?);
            }
        }
        Ok(cut(items, cursor, count))
    }

    /// The pulled authors, read from Redis at most once per
    /// [`PULLED_FRESH`] per process (the set only grows, and a newly pulled
    /// author's notes are in their own list, so a reader sees them that much
    /// later at most).
    async fn pulled(&self) -> Result<Arc<Vec<UserId>>, NoteError> {
        let kv = self.kv.clone();
        let read = async move {
            let members: Vec<UserId> = kv.conn().smembers(kv.keys.feed_pulled()).await?;
            Ok::<_, redis::RedisError>(Arc::new(members))
        };
        self.pulled.try_get_with((), read).await.map_err(|e| NoteError::Redis(Arc::unwrap_or_clone(e)))
    }
}

fn parse<T: redis::FromRedisValue>(value: &redis::Value) -> Result<T, NoteError> {
    Ok(redis::from_redis_value_ref(value).map_err(redis::RedisError::from)?)
}

/// The page of `count` from `cursor` out of `items` (each source read up to
/// `offset + count` from the cursor's score down): in Redis's order (score
/// descending, then member bytes descending), without repeats.
fn cut(mut items: Vec<(NoteId, i64)>, cursor: FeedCursor, count: u32) -> FeedPage {
    items.sort_by_key(|&(id, score)| (Reverse(score), Reverse(id.to_string())));
    items.dedup_by_key(|&mut (id, _)| id);
    let skip = cursor.offset as usize;
    let items: Vec<(NoteId, i64)> = items.into_iter().skip(skip).take(count as usize).collect();
    let next = match items.last() {
        Some(&(_, last)) if items.len() == count as usize => {
            let at_last = items.iter().filter(|&&(_, s)| s == last).count() as u32;
            // The whole page carried the cursor's score: those skipped count too.
            let offset = if cursor.max == Some(last) { cursor.offset + at_last } else { at_last };
            Some(FeedCursor { max: Some(last), offset })
        }
        _ => None,
    };
    FeedPage { items, next }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(page: &FeedPage) -> Vec<u64> {
        page.items.iter().map(|(id, _)| id.get()).collect()
    }

    /// Reads `all` page by page as a reader would, each page cut from what a
    /// source read at that cursor returns.
    fn scroll(all: &[(u64, i64)], count: u32) -> Vec<u64> {
        let (mut seen, mut cursor) = (Vec::new(), FeedCursor::default());
        for _ in 0..100 {
            let want = (cursor.offset + count) as usize;
            let mut source: Vec<(NoteId, i64)> =
                all.iter().filter(|(_, s)| cursor.max.is_none_or(|m| *s <= m)).map(|&(i, s)| (NoteId(i), s)).collect();
            source.sort_by_key(|&(id, score)| (Reverse(score), Reverse(id.to_string())));
            source.truncate(want);
            let page = cut(source, cursor, count);
            seen.extend(ids(&page));
            match page.next {
                Some(next) => cursor = next,
                None => return seen,
            }
        }
        panic!("the scroll never ended: {seen:?}");
    }

    #[test]
    fn pages_whose_items_share_one_score_carry_the_offset_and_end() {
        // Seven notes with one score, between others: pages of two.
        let all: Vec<(u64, i64)> =
            [(1, 50), (2, 40), (3, 40), (4, 40), (5, 40), (6, 40), (7, 40), (8, 40), (9, 30)].to_vec();
        let seen = scroll(&all, 2);
        let mut sorted = seen.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=9).collect::<Vec<u64>>(), "each item exactly once: {seen:?}");
        assert_eq!(seen[0], 1);
        assert_eq!(*seen.last().unwrap(), 9);
    }

    #[test]
    fn a_cursor_skips_only_the_items_of_its_score_already_seen() {
        let items = vec![(NoteId(3), 20), (NoteId(2), 20), (NoteId(1), 10)];
        let page = cut(items, FeedCursor { max: Some(20), offset: 1 }, 5);
        assert_eq!(ids(&page), [2, 1]);
        assert_eq!(page.next, None);
        let page = cut(vec![(NoteId(5), 9), (NoteId(5), 9), (NoteId(4), 8)], FeedCursor::default(), 2);
        assert_eq!(ids(&page), [5, 4], "a note both pushed and pulled shows once");
        assert_eq!(page.next, Some(FeedCursor { max: Some(8), offset: 1 }));
    }
}
