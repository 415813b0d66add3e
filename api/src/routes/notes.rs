//! Notes and the feed: `POST /notes` (publish), `GET /notes/{id}` (a note
//! with its likes), `GET /shops/{id}/notes` (a shop's latest),
//! `GET /notes/hot` (most liked), `PUT /notes/{id}/like` (toggle) and
//! `GET /feed` (the notes of the people the caller follows, with the scroll
//! cursor). See `cityhub_core::notes`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use cityhub_core::notes::feed::FeedCursor;
use cityhub_core::notes::{Likes, NewNote, Note, NoteError, NoteSummary, HOT_PAGES, MAX_IMAGES};
use cityhub_core::{NoteId, ShopId};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::{AuthErrors, InputErrors};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{CurrentUser, MaybeUser, PathId, ValidJson, ValidQuery};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(publish))
        .routes(routes!(like))
        .routes(routes!(feed))
        .routes(routes!(hot))
        .routes(routes!(show))
        .routes(routes!(of_shop))
}

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default()
}

/// A note to publish.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishNote {
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_u64)]
    pub shop_id: u64,
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub title: String,
    #[validate(length(min = 1, max = 4096))]
    #[schema(min_length = 1, max_length = 4096)]
    pub content: String,
    /// Up to 9 http(s) URLs of at most 512 characters.
    #[serde(default)]
    #[validate(length(max = 9))]
    #[schema(max_items = 9)]
    pub images: Vec<String>,
}

/// A note with its likes.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoteView {
    pub id: String,
    pub author: String,
    pub shop_id: String,
    pub title: String,
    pub content: String,
    pub images: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub likes: i64,
    /// Whether the caller likes it; `null` without a session.
    pub liked: Option<bool>,
    /// The first five likers, in like order.
    pub first_likers: Vec<String>,
}

impl NoteView {
    fn new(n: &Note, likes: Likes) -> Self {
        Self {
            id: n.id.to_string(),
            author: n.author.to_string(),
            shop_id: n.shop_id.to_string(),
            title: n.title.clone(),
            content: n.content.clone(),
            images: n.images.clone(),
            created_at: at(n.created_ms),
            likes: likes.count,
            liked: likes.liked,
            first_likers: likes.first.iter().map(ToString::to_string).collect(),
        }
    }
}

/// A note in a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoteCard {
    pub id: String,
    pub author: String,
    pub shop_id: String,
    pub title: String,
    /// The first image, if any.
    pub image: Option<String>,
    /// Likes when the list was loaded (the hot list lags by at most
    /// `notes.hot_ttl_secs`); `null` in the feed (the note's page has them).
    pub likes: Option<i64>,
    pub created_at: DateTime<Utc>,
}

impl From<&NoteSummary> for NoteCard {
    fn from(n: &NoteSummary) -> Self {
        Self {
            id: n.id.to_string(),
            author: n.author.to_string(),
            shop_id: n.shop_id.to_string(),
            title: n.title.clone(),
            image: n.image.clone(),
            likes: Some(n.liked),
            created_at: at(n.created_ms),
        }
    }
}

impl From<&Note> for NoteCard {
    fn from(n: &Note) -> Self {
        Self {
            id: n.id.to_string(),
            author: n.author.to_string(),
            shop_id: n.shop_id.to_string(),
            title: n.title.clone(),
            image: n.images.first().cloned(),
            likes: None,
            created_at: at(n.created_ms),
        }
    }
}

/// A list of notes.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoteList {
    pub notes: Vec<NoteCard>,
}

/// Publishes a note about a shop; it reaches the author's followers' feeds
/// shortly after (pushed by the worker, never inside this request).
#[utoipa::path(post, path = "/notes", tag = "notes", request_body = PublishNote, security(("bearer" = [])),
    responses((status = 201, description = "Published", body = NoteView), AuthErrors, InputErrors,
        (status = 503, description = "A dependency is unavailable; nothing was published", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn publish(
    CurrentUser(me): CurrentUser,
    State(state): State<AppState>,
    ValidJson(req): ValidJson<PublishNote>,
) -> Result<(StatusCode, Json<NoteView>), ApiError> {
    let new = NewNote {
        author: me.user_id,
        shop_id: ShopId(req.shop_id),
        title: req.title,
        content: req.content,
        images: req.images,
    };
    let note = state.notes.publish(new).await?;
    tracing::info!(note_id = %note.id, "note published");
    let none = Likes { count: 0, liked: Some(false), first: Vec::new() };
    Ok((StatusCode::CREATED, Json(NoteView::new(&note, none))))
}

/// A note with its likes: the note from the two-level cache, the likes from
/// its Redis ZSet in one call.
#[utoipa::path(get, path = "/notes/{id}", tag = "notes",
    params(("id" = u64, Path, minimum = 1, description = "Note id")),
    responses(
        (status = 200, description = "The note", body = NoteView),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        (status = 401, description = "A bearer token that is not valid (`unauthorized`)", body = ErrorBody),
        (status = 404, description = "No such note (`note_not_found`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(note_id = %id))]
async fn show(
    MaybeUser(viewer): MaybeUser,
    PathId(id): PathId<NoteId>,
    State(state): State<AppState>,
) -> Result<Json<NoteView>, ApiError> {
    let note = state.notes.get(id).await?.ok_or(NoteError::NotFound)?;
    let likes = state.notes.likes(id, viewer.map(|s| s.user_id)).await?;
    Ok(Json(NoteView::new(&note, likes)))
}

/// `?page=`, from 1.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Pages of 10, from 1 (the default) to 50.
    #[validate(range(min = 1, max = 50))]
    #[param(minimum = 1, maximum = 50)]
    pub page: Option<u32>,
}

const _: () = assert!(HOT_PAGES == 50, "PageQuery's bound");

/// A shop's latest notes (the newest 100, 10 a page), newest first.
#[utoipa::path(get, path = "/shops/{id}/notes", tag = "notes", params(("id" = u64, Path, minimum = 1, description = "Shop id"), PageQuery),
    responses(
        (status = 200, description = "The shop's notes", body = NoteList),
        (status = 400, description = "Malformed id or query (`invalid_path`, `invalid_query`)", body = ErrorBody),
        (status = 404, description = "No such shop (`shop_not_found`)", body = ErrorBody),
        (status = 422, description = "A page out of range (`validation_failed`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(shop_id = %id))]
async fn of_shop(
    PathId(id): PathId<ShopId>,
    ValidQuery(q): ValidQuery<PageQuery>,
    State(state): State<AppState>,
) -> Result<Json<NoteList>, ApiError> {
    state.shops.get(id).await?;
    let notes = state.notes.of_shop(id, q.page.unwrap_or(1)).await?;
    Ok(Json(NoteList { notes: notes.iter().map(Into::into).collect() }))
}

/// The most liked notes, 10 a page: order and like counts are at most
/// `notes.hot_ttl_secs` old.
#[utoipa::path(get, path = "/notes/hot", tag = "notes", params(PageQuery),
    responses(
        (status = 200, description = "The most liked notes", body = NoteList),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        (status = 422, description = "A page out of range (`validation_failed`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn hot(ValidQuery(q): ValidQuery<PageQuery>, State(state): State<AppState>) -> Result<Json<NoteList>, ApiError> {
    let notes = state.notes.hot(q.page.unwrap_or(1)).await?;
    Ok(Json(NoteList { notes: notes.iter().map(Into::into).collect() }))
}

/// A like toggle's outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct LikeState {
    /// Whether the caller likes the note now.
    pub liked: bool,
    pub likes: i64,
}

/// Likes the note, or stops liking it if the caller did.
#[utoipa::path(put, path = "/notes/{id}/like", tag = "notes", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Note id")),
    responses(
        (status = 200, description = "Toggled", body = LikeState),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such note (`note_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable; nothing changed", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(note_id = %id, user_id = %me.user_id))]
async fn like(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<NoteId>,
    State(state): State<AppState>,
) -> Result<Json<LikeState>, ApiError> {
    let toggled = state.notes.toggle_like(id, me.user_id).await?;
    Ok(Json(LikeState { liked: toggled.liked, likes: toggled.count }))
}

/// `?max=&offset=&count=`: the scroll cursor (both from the previous page's
/// `next`; neither on the first page).
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// The previous page's `next_max`: the publish time (ms) of its last note.
    #[validate(range(min = 0))]
    #[param(minimum = 0)]
    pub max: Option<i64>,
    /// The previous page's `next_offset`: how many notes published at `max` it showed.
    #[validate(range(max = 1000))]
    #[param(maximum = 1000)]
    pub offset: Option<u32>,
    /// Notes per page, 1 to 50 (10).
    #[validate(range(min = 1, max = 50))]
    #[param(minimum = 1, maximum = 50)]
    pub count: Option<u32>,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedView {
    /// Newest first.
    pub notes: Vec<NoteCard>,
    /// Pass as `max` and `offset` for the next page; `null` on the last page.
    pub next_max: Option<i64>,
    pub next_offset: Option<u32>,
}

/// The notes of the people the caller follows, newest first, a page at a
/// time with the scroll cursor: notes published while scrolling neither
/// repeat nor push out those still to come.
#[utoipa::path(get, path = "/feed", tag = "notes", security(("bearer" = [])), params(FeedQuery),
    responses((status = 200, description = "A page of the feed", body = FeedView), AuthErrors, InputErrors,
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn feed(
    CurrentUser(me): CurrentUser,
    ValidQuery(q): ValidQuery<FeedQuery>,
    State(state): State<AppState>,
) -> Result<Json<FeedView>, ApiError> {
    if q.offset.is_some() && q.max.is_none() {
        return Err(ApiError::unprocessable("validation_failed", "invalid fields: offset: needs max"));
    }
    let cursor = FeedCursor { max: q.max, offset: q.offset.unwrap_or(0) };
    let page = state.feed.page(me.user_id, cursor, q.count.unwrap_or(10)).await?;
    let ids: Vec<NoteId> = page.items.iter().map(|(id, _)| *id).collect();
    // A note that is gone since is left out.
    let notes = state.notes.get_many(&ids).await?.iter().flatten().map(|n| NoteCard::from(&**n)).collect();
    let (next_max, next_offset) = page.next.map_or((None, None), |c| (c.max, Some(c.offset)));
    Ok(Json(FeedView { notes, next_max, next_offset }))
}

const _: () = assert!(MAX_IMAGES == 9, "PublishNote's bound");
