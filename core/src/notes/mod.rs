//! Notes: what shoppers write about shops, their likes, the hot list and
//! the follow feed ([`feed`]).
//!
//! - **A note** is written once (no edits) with its "note published" event
//!   in the same transaction ([`Notes::publish`]); the feed consumer pushes
//!   it into followers' inboxes, never the request. Reads go through the
//!   shared two-level cache: a note, a shop's latest notes and each page of
//!   the hot list (by likes, `notes.hot_ttl_secs` old at most).
//! - **Likes.** A note's likes ZSet (user id scored by like time) answers
//!   "did I like it", the count and the first likers in like order;
//!   `note_likes` in MySQL is the copy it is rebuilt from and `notes.liked`
//!   the count the hot list sorts by. A toggle runs under the note's row lock
//!   (`SELECT ... FOR UPDATE`): the ZSet flips inside it, then `note_likes`
//!   and the count change in the same transaction, by exactly one and only
//!   when the row really appeared or went. Toggles of one note therefore
//!   reach Redis and MySQL in one order, however many run at once. If the
//!   transaction then fails (or the script's answer is lost), the ZSet is
//!   dropped: its next reader rebuilds it from MySQL, which holds what
//!   committed, one rebuild cluster-wide. An unread, untoggled ZSet expires
//!   after `notes.cache_ttl_secs`.

pub mod feed;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use cityhub_platform::cache::{lock, Cache, CacheError, Caches, FnLoader, Freshness, LoadError, Spec};
use redis::Script;
use serde::{Deserialize, Serialize};
use sqlx::{MySqlConnection, MySqlPool};

use crate::config::{CacheSettings, NoteSettings};
use crate::ids::{NoteId, ShopId, UserId};
use crate::kv::{CityKeys, Kv};

static TOGGLE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/note_like.lua")));
static READ_LIKES: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/note_likes_read.lua")));

/// The scripts this module runs, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&TOGGLE, &READ_LIKES]
}

/// Marks a likes ZSet built from MySQL; never a user id, never shown.
const BUILT: &str = "-";
/// How many first likers a note's page shows.
pub const FIRST_LIKERS: usize = 5;
/// Notes per page of the hot list and of a shop's notes.
pub const PAGE: usize = 10;
/// Pages of the hot list served (the first 500 notes by likes).
pub const HOT_PAGES: u32 = 50;
/// A shop's latest notes kept in its cached list.
const SHOP_LATEST: u32 = 100;
/// Most image URLs on a note.
pub const MAX_IMAGES: usize = 9;
/// Longest image URL, characters: nine of them, JSON-encoded, fit the
/// `notes.images` column (5,000).
const MAX_IMAGE_URL: usize = 512;

/// A note to publish.
#[derive(Debug, Clone)]
pub struct NewNote {
    pub author: UserId,
    pub shop_id: ShopId,
    pub title: String,
    pub content: String,
    /// Up to [`MAX_IMAGES`] http(s) URLs.
    pub images: Vec<String>,
}

impl NewNote {
    /// The rules every note obeys: a title and a text, at most
    /// [`MAX_IMAGES`] images, each an http(s) URL.
    pub fn check(&self) -> Result<(), NoteError> {
        let invalid = |field, reason| Err(NoteError::Invalid { field, reason });
        if self.title.trim().is_empty() {
            return invalid("title", "must not be blank");
        }
        if self.content.trim().is_empty() {
            return invalid("content", "must not be blank");
        }
        if self.images.len() > MAX_IMAGES {
            return invalid("images", "at most 9");
        }
        let url_ok = |u: &str| {
            (u.starts_with("https://") || u.starts_with("http://"))
                && u.len() <= MAX_IMAGE_URL
                && !u.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\\' | '<' | '>'))
        };
        if !self.images.iter().all(|u| url_ok(u)) {
            return invalid(
                "images",
                "each must be an http(s) URL of at most 512 characters, without quotes, backslashes or angle brackets",
            );
        }
        Ok(())
    }
}

/// A stored note, as the cache holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub id: NoteId,
    pub author: UserId,
    pub shop_id: ShopId,
    pub title: String,
    pub content: String,
    pub images: Vec<String>,
    /// Publish time, ms since the epoch (the note's score in feeds).
    pub created_ms: i64,
}

/// A note in a list: what a card shows, with its like count as of the
/// list's load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteSummary {
    pub id: NoteId,
    pub author: UserId,
    pub shop_id: ShopId,
    pub title: String,
    /// The first image, if any.
    pub image: Option<String>,
    pub liked: i64,
    pub created_ms: i64,
}

/// A note's likes as its page shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Likes {
    pub count: i64,
    /// Whether the viewer likes it; `None` without a viewer.
    pub liked: Option<bool>,
    /// The first [`FIRST_LIKERS`] likers, in like order.
    pub first: Vec<UserId>,
}

/// What a like toggle did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toggled {
    /// Whether the user likes the note now.
    pub liked: bool,
    pub count: i64,
}

/// The "note published" event the feed consumer pushes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePublished {
    pub note_id: NoteId,
    pub author: UserId,
    pub created_ms: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: &'static str },
    #[error("shop {0} does not exist")]
    UnknownShop(ShopId),
    #[error("no such note")]
    NotFound,
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Outbox(#[from] cityhub_platform::outbox::OutboxError),
    #[error(transparent)]
    Social(#[from] crate::social::SocialError),
}

/// Notes, likes and the hot list. Clone freely.
#[derive(Clone)]
pub struct Notes {
    db: MySqlPool,
    kv: Kv,
    settings: NoteSettings,
    notes: Cache<NoteId, Note>,
    by_shop: Cache<ShopId, Vec<NoteSummary>>,
    hot: Cache<u32, Vec<NoteSummary>>,
    /// A likes rebuild's lock lease, and how long a reader waits for another's.
    rebuild_lease: std::time::Duration,
    rebuild_wait: std::time::Duration,
}

/// A cache spec served stale while one caller rebuilds it.
fn spec(name: &'static str, ttl: std::time::Duration) -> Spec {
    Spec { name, ttl, freshness: Freshness::StaleWhileRebuild, bloom: None }
}

/// A [`FnLoader`] of `load` on the pool.
macro_rules! loader {
    ($db:expr, $load:expr) => {{
        let pool = $db.clone();
        FnLoader(move |key| {
            let pool = pool.clone();
            async move { $load(&pool, key).await.map_err(|e| Box::new(e) as LoadError) }
        })
    }};
}

/// Notes by id, one at a time or a page's misses in one query.
struct NoteLoader(MySqlPool);

impl cityhub_platform::cache::Loader<NoteId, Note> for NoteLoader {
    fn load<'a>(
        &'a self,
        id: &'a NoteId,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Note>, LoadError>> + Send + 'a>> {
        Box::pin(async move { load_note(&self.0, *id).await.map_err(|e| Box::new(e) as LoadError) })
    }

    fn load_many<'a>(
        &'a self,
        ids: &'a [NoteId],
    ) -> Option<Pin<Box<dyn Future<Output = Result<Vec<Option<Note>>, LoadError>> + Send + 'a>>> {
        Some(Box::pin(async move { load_notes(&self.0, ids).await.map_err(|e| Box::new(e) as LoadError) }))
    }
}

impl Notes {
    pub fn new(db: MySqlPool, kv: Kv, caches: &Caches, settings: &NoteSettings, cache: &CacheSettings) -> Self {
        let notes = Cache::new(spec("notes", settings.cache_ttl_secs), caches, NoteLoader(db.clone()));
        let by_shop = Cache::new(spec("shop_notes", settings.cache_ttl_secs), caches, loader!(db, load_shop_notes));
        let hot = Cache::new(spec("hot_notes", settings.hot_ttl_secs), caches, loader!(db, load_hot_page));
        let (rebuild_lease, rebuild_wait) = (cache.lock_lease_ms, cache.wait_ms);
        Self { db, kv, settings: settings.clone(), notes, by_shop, hot, rebuild_lease, rebuild_wait }
    }

    /// Stores the note and its "note published" event in one transaction;
    /// the feed consumer pushes it. The shop's cached list gains it at once.
    pub async fn publish(&self, new: NewNote) -> Result<Note, NoteError> {
        new.check()?;
        let mut tx = self.db.begin().await?;
        if !crate::shops::repo::lock_existing(&mut tx, new.shop_id).await? {
            return Err(NoteError::UnknownShop(new.shop_id));
        }
        let images = serde_json::to_string(&new.images).expect("strings serialize");
        let id = sqlx::query("INSERT INTO notes (user_id, shop_id, title, content, images) VALUES (?, ?, ?, ?, ?)")
            .bind(new.author)
            .bind(new.shop_id)
            .bind(&new.title)
            .bind(&new.content)
            .bind(images)
            .execute(&mut *tx)
            .await?
            .last_insert_id();
        let id = NoteId(id);
        let (created,): (DateTime<Utc>,) =
            sqlx::query_as("SELECT created_at FROM notes WHERE id = ?").bind(id).fetch_one(&mut *tx).await?;
        let created_ms = created.timestamp_millis();
        let event = NotePublished { note_id: id, author: new.author, created_ms };
        cityhub_platform::outbox::enqueue(&mut tx, &self.settings.feed_topic, &new.author.to_string(), &event).await?;
        tx.commit().await?;
        self.notes.refresh_or_retry(&id).await;
        self.by_shop.refresh_or_retry(&new.shop_id).await;
        let NewNote { author, shop_id, title, content, images } = new;
        Ok(Note { id, author, shop_id, title, content, images, created_ms })
    }

    /// Note `id`: L1, then Redis, then MySQL; `None` when it does not exist.
    pub async fn get(&self, id: NoteId) -> Result<Option<Arc<Note>>, NoteError> {
        Ok(self.notes.get(&id).await?)
    }

    /// Notes `ids`, in order (`None` for one that does not exist): the L1
    /// misses from Redis in one round trip.
    pub async fn get_many(&self, ids: &[NoteId]) -> Result<Vec<Option<Arc<Note>>>, NoteError> {
        Ok(self.notes.get_many(ids).await?)
    }

    /// A page (from 1) of shop `shop`'s latest notes, newest first.
    pub async fn of_shop(&self, shop: ShopId, page: u32) -> Result<Vec<NoteSummary>, NoteError> {
        let all = self.by_shop.get(&shop).await?.unwrap_or_default();
        Ok(all.iter().skip((page.saturating_sub(1) as usize) * PAGE).take(PAGE).cloned().collect())
    }

    /// A page (from 1 to [`HOT_PAGES`]) of the notes with most likes.
    pub async fn hot(&self, page: u32) -> Result<Arc<Vec<NoteSummary>>, NoteError> {
        Ok(self.hot.get(&page).await?.unwrap_or_default())
    }

    /// Note `id`'s likes for `viewer`, in one script call; a missing ZSet is
    /// rebuilt from MySQL first, by one caller cluster-wide (a Redis lock)
    /// while the others wait for it, up to `cache.wait_ms`.
    pub async fn likes(&self, id: NoteId, viewer: Option<UserId>) -> Result<Likes, NoteError> {
        let key = self.kv.keys.note_likes(id);
        let viewer_arg = viewer.map(|v| v.to_string()).unwrap_or_default();
        let started = tokio::time::Instant::now();
        loop {
            let read: Option<Vec<redis::Value>> = READ_LIKES
                .key(&key)
                .arg(&viewer_arg)
                .arg(FIRST_LIKERS)
                .arg(self.likes_ttl_ms())
                .invoke_async(&mut self.kv.conn())
                .await?;
            if let Some(values) = read {
                let mut values = values.into_iter();
                let mut int = || values.next().and_then(|v| redis::from_redis_value::<i64>(v).ok()).unwrap_or(0);
                let (count, liked) = (int(), int());
                let first = values.filter_map(|v| redis::from_redis_value::<UserId>(v).ok()).collect();
                return Ok(Likes { count, liked: viewer.map(|_| liked == 1), first });
            }
            let lock_key = format!("{key}:lock");
            if let Some(held) = lock::try_acquire(&self.kv, lock_key, self.rebuild_lease).await? {
                // In its own task: a reader that goes away cannot leave a
                // rebuild's Redis write landing after the lock is gone.
                let this = self.clone();
                let rebuilt = cityhub_platform::run_to_completion(async move {
                    let mut tx = this.db.begin().await?;
                    let found: Option<(NoteId,)> =
                        sqlx::query_as("SELECT id FROM notes WHERE id = ? LOCK IN SHARE MODE")
                            .bind(id)
                            .fetch_optional(&mut *tx)
                            .await?;
                    if found.is_none() {
                        return Err(NoteError::NotFound);
                    }
                    this.rebuild_likes(&mut tx, id).await?;
                    tx.commit().await?;
                    Ok(())
                })
                .await;
                let _ = held.release(&self.kv).await;
                rebuilt?;
                continue;
            }
            if started.elapsed() >= self.rebuild_wait {
                return Err(NoteError::Cache(CacheError::Busy));
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// How long a likes ZSet nobody reads or toggles stays in Redis, ms.
    fn likes_ttl_ms(&self) -> u64 {
        self.settings.cache_ttl_secs.as_millis() as u64
    }

    /// `user` likes note `id`, or stops liking it (see the module doc).
    pub async fn toggle_like(&self, id: NoteId, user: UserId) -> Result<Toggled, NoteError> {
        let this = self.clone();
        cityhub_platform::run_to_completion(async move { this.toggle_once(id, user).await }).await
    }

    async fn toggle_once(&self, id: NoteId, user: UserId) -> Result<Toggled, NoteError> {
        let mut tx = self.db.begin().await?;
        let found: Option<(NoteId,)> =
            sqlx::query_as("SELECT id FROM notes WHERE id = ? FOR UPDATE").bind(id).fetch_optional(&mut *tx).await?;
        if found.is_none() {
            return Err(NoteError::NotFound);
        }
        let key = self.kv.keys.note_likes(id);
        let mut flipped = None;
        for _ in 0..2 {
            let now = cityhub_platform::now_ms();
            let mut invocation = TOGGLE.key(&key);
            invocation.arg(user).arg(now).arg(self.likes_ttl_ms());
            let answer: redis::RedisResult<Option<(i64, i64)>> = invocation.invoke_async(&mut self.kv.conn()).await;
            match answer {
                Ok(Some((liked, count))) => {
                    flipped = Some((Toggled { liked: liked == 1, count }, now));
                    break;
                }
                Ok(None) => self.rebuild_likes(&mut tx, id).await?,
                Err(err) => {
                    // The script may have run and only its answer been lost.
                    self.drop_likes(id).await;
                    return Err(err.into());
                }
            }
        }
        let (toggled, now) = flipped.ok_or(NoteError::Cache(CacheError::Busy))?;
        // From here the ZSet has flipped: a failure must not leave it ahead of MySQL.
        let stored = self.store_toggle(tx, id, user, toggled.liked, now).await;
        if stored.is_err() {
            self.drop_likes(id).await;
        }
        stored.map(|()| toggled)
    }

    /// Drops a likes ZSet that may be ahead of MySQL; its next reader
    /// rebuilds it from what committed.
    async fn drop_likes(&self, id: NoteId) {
        if let Err(err) = redis::AsyncCommands::del::<_, ()>(&mut self.kv.conn(), self.kv.keys.note_likes(id)).await {
            tracing::error!(note_id = %id, error = %err, "a like ZSet ahead of MySQL could not be dropped");
        }
    }

    /// The like row and the count, by exactly one per real change, then the
    /// commit that releases the note's row lock.
    async fn store_toggle(
        &self,
        mut tx: sqlx::Transaction<'_, sqlx::MySql>,
        id: NoteId,
        user: UserId,
        liked: bool,
        now_ms: u64,
    ) -> Result<(), NoteError> {
        let changed = if liked {
            let at = DateTime::<Utc>::from_timestamp_millis(now_ms as i64).unwrap_or_default();
            sqlx::query("INSERT IGNORE INTO note_likes (note_id, user_id, liked_at) VALUES (?, ?, ?)")
                .bind(id)
                .bind(user)
                .bind(at)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        } else {
            sqlx::query("DELETE FROM note_likes WHERE note_id = ? AND user_id = ?")
                .bind(id)
                .bind(user)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        };
        if changed == 1 {
            let step = if liked { "liked + 1" } else { "liked - 1" };
            sqlx::query(&format!("UPDATE notes SET liked = {step} WHERE id = ?")).bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Writes note `id`'s likes ZSet from `note_likes`, read in the caller's
    /// transaction (which holds the note's row lock, shared or exclusive, so
    /// no toggle changes the rows meanwhile).
    async fn rebuild_likes(&self, tx: &mut MySqlConnection, id: NoteId) -> Result<(), NoteError> {
        let rows: Vec<(UserId, DateTime<Utc>)> =
            sqlx::query_as("SELECT user_id, liked_at FROM note_likes WHERE note_id = ?").bind(id).fetch_all(tx).await?;
        let key = self.kv.keys.note_likes(id);
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore().zadd(&key, BUILT, 0).ignore();
        let members: Vec<(i64, UserId)> = rows.into_iter().map(|(u, at)| (at.timestamp_millis(), u)).collect();
        for chunk in members.chunks(1000) {
            pipe.zadd_multiple(&key, chunk).ignore();
        }
        pipe.pexpire(&key, self.likes_ttl_ms() as i64).ignore();
        pipe.query_async::<()>(&mut self.kv.conn()).await?;
        metrics::counter!(cityhub_platform::metrics::CACHE_REBUILDS, "cache" => "note_likes", "result" => "rebuilt")
            .increment(1);
        Ok(())
    }
}

type NoteRow = (NoteId, UserId, ShopId, String, String, String, i64, DateTime<Utc>);

/// The columns of a [`NoteRow`].
const NOTE_COLUMNS: &str = "id, user_id, shop_id, title, content, images, liked, created_at";

fn note(row: NoteRow) -> (Note, i64) {
    let (id, author, shop_id, title, content, images, liked, created) = row;
    let images = serde_json::from_str(&images).unwrap_or_default();
    (Note { id, author, shop_id, title, content, images, created_ms: created.timestamp_millis() }, liked)
}

fn summary(row: NoteRow) -> NoteSummary {
    let (n, liked) = note(row);
    NoteSummary {
        id: n.id,
        author: n.author,
        shop_id: n.shop_id,
        title: n.title,
        image: n.images.into_iter().next(),
        liked,
        created_ms: n.created_ms,
    }
}

async fn load_note(db: &MySqlPool, id: NoteId) -> Result<Option<Note>, sqlx::Error> {
    let sql = format!("SELECT {NOTE_COLUMNS} FROM notes WHERE id = ?");
    let row: Option<NoteRow> = sqlx::query_as(&sql).bind(id).fetch_optional(db).await?;
    Ok(row.map(|r| note(r).0))
}

/// Notes `ids` in one query, in order (`None` for one that does not exist).
async fn load_notes(db: &MySqlPool, ids: &[NoteId]) -> Result<Vec<Option<Note>>, sqlx::Error> {
    let mut select = sqlx::QueryBuilder::<sqlx::MySql>::new(format!("SELECT {NOTE_COLUMNS} FROM notes WHERE id IN ("));
    let mut list = select.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    select.push(")");
    let rows: Vec<NoteRow> = select.build_query_as().fetch_all(db).await?;
    let by_id: std::collections::HashMap<NoteId, Note> =
        rows.into_iter().map(|r| note(r).0).map(|n| (n.id, n)).collect();
    Ok(ids.iter().map(|id| by_id.get(id).cloned()).collect())
}

async fn load_shop_notes(db: &MySqlPool, shop: ShopId) -> Result<Option<Vec<NoteSummary>>, sqlx::Error> {
    let sql = format!("SELECT {NOTE_COLUMNS} FROM notes WHERE shop_id = ? ORDER BY id DESC LIMIT ?");
    let rows: Vec<NoteRow> = sqlx::query_as(&sql).bind(shop).bind(SHOP_LATEST).fetch_all(db).await?;
    Ok(Some(rows.into_iter().map(summary).collect()))
}

async fn load_hot_page(db: &MySqlPool, page: u32) -> Result<Option<Vec<NoteSummary>>, sqlx::Error> {
    let sql = format!("SELECT {NOTE_COLUMNS} FROM notes ORDER BY liked DESC, id DESC LIMIT ? OFFSET ?");
    let offset = page.saturating_sub(1) as usize * PAGE;
    let rows: Vec<NoteRow> = sqlx::query_as(&sql).bind(PAGE as u32).bind(offset as u64).fetch_all(db).await?;
    Ok(Some(rows.into_iter().map(summary).collect()))
}
