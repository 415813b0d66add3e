//! The social graph's routes: follow and block (writes, one token bucket per
//! user: `limits.follow`), a user's followings and followers (newest first,
//! by cursor), counts, common follows, "does the user follow these", and the
//! caller's friends, blocks and recommendations. Every route needs a session.

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, TimeZone, Utc};
use cityhub_core::social::{Cursor, Entry, List, Matches, Page, Written};
use cityhub_core::UserId;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::{AuthErrors, ReadErrors, WriteErrors};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{cursor, CurrentUser, PathId, ValidQuery};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(follow, unfollow))
        .routes(routes!(block, unblock))
        .routes(routes!(followings))
        .routes(routes!(followers))
        .routes(routes!(counts))
        .routes(routes!(common_follows))
        .routes(routes!(following_status))
        .routes(routes!(friends))
        .routes(routes!(blocks))
        .routes(routes!(recommendations))
}

/// The caller's relation to a user after a follow or unfollow.
#[derive(Debug, Serialize, ToSchema)]
pub struct FollowState {
    pub user_id: String,
    pub following: bool,
    /// False when it already was so (nothing was written).
    pub changed: bool,
}

/// The caller's block of a user after a block or unblock.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockState {
    pub user_id: String,
    pub blocked: bool,
    /// False when it already was so.
    pub changed: bool,
}

/// A user in a list, and since when.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListedUser {
    pub user_id: String,
    /// When the follow (for friends: the later of the two follows) was made.
    pub since: DateTime<Utc>,
}

impl From<&Entry> for ListedUser {
    fn from(e: &Entry) -> Self {
        Self { user_id: e.user_id.to_string(), since: Utc.timestamp_millis_opt(e.at_ms).single().unwrap_or_default() }
    }
}

/// A page of a follow list.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserPage {
    pub users: Vec<ListedUser>,
    /// Users in the whole list.
    pub total: u64,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

impl From<&Page> for UserPage {
    fn from(p: &Page) -> Self {
        Self {
            users: p.entries.iter().map(Into::into).collect(),
            total: p.total,
            next_cursor: p.next.map(|c| c.to_string()),
        }
    }
}

/// `?cursor=&limit=` of a follow list.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `next_cursor` of the previous page; omit for the newest.
    #[param(pattern = "^[0-9]{1,20}-[0-9]{1,20}$")]
    pub cursor: Option<String>,
    /// Users per page, 1 to 100; 20 when omitted.
    #[validate(range(min = 1, max = 100))]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

impl ListQuery {
    fn cursor(&self) -> Result<Option<Cursor>, ApiError> {
        self.cursor
            .as_deref()
            .map(|raw| {
                raw.parse()
                    .map_err(|()| ApiError::bad_request("invalid_query", format!("cursor {raw:?} is not a cursor")))
            })
            .transpose()
    }
}

/// `?cursor=&limit=` of a list paged by position or id.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// `next_cursor` of the previous page; omit for the first.
    #[param(pattern = "^[0-9]{1,20}$")]
    pub cursor: Option<String>,
    /// Entries per page, 1 to 100; 20 when omitted.
    #[validate(range(min = 1, max = 100))]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

const PATH_ID: &str = "The other user's id";

/// Follow a user (a second follow changes nothing and succeeds).
#[utoipa::path(put, path = "/users/{id}/follow", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user to follow")),
    responses(
        (status = 200, description = "Following", body = FollowState),
        (status = 403, description = "The user blocked the caller (`blocked_by_user`)", body = ErrorBody),
        (status = 409, description = "The caller blocked the user (`user_blocked`)", body = ErrorBody),
        AuthErrors, WriteErrors))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id, target = %id))]
async fn follow(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<UserId>,
    State(state): State<AppState>,
) -> Result<Json<FollowState>, ApiError> {
    let written = state.social.follow(me.user_id, id).await?;
    Ok(Json(FollowState { user_id: id.to_string(), following: true, changed: written == Written::Changed }))
}

/// Stop following a user (changes nothing if not following).
#[utoipa::path(delete, path = "/users/{id}/follow", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user to unfollow")),
    responses(
        (status = 200, description = "Not following", body = FollowState),
        AuthErrors, WriteErrors))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id, target = %id))]
async fn unfollow(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<UserId>,
    State(state): State<AppState>,
) -> Result<Json<FollowState>, ApiError> {
    let written = state.social.unfollow(me.user_id, id).await?;
    Ok(Json(FollowState { user_id: id.to_string(), following: false, changed: written == Written::Changed }))
}

/// Block a user: the follows both ways end, and neither can follow the other.
#[utoipa::path(put, path = "/users/{id}/block", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user to block")),
    responses(
        (status = 200, description = "Blocked", body = BlockState),
        AuthErrors, WriteErrors))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id, target = %id))]
async fn block(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<UserId>,
    State(state): State<AppState>,
) -> Result<Json<BlockState>, ApiError> {
    let written = state.social.block(me.user_id, id).await?;
    Ok(Json(BlockState { user_id: id.to_string(), blocked: true, changed: written == Written::Changed }))
}

/// Lift a block (the follows it ended stay ended).
#[utoipa::path(delete, path = "/users/{id}/block", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user to unblock")),
    responses(
        (status = 200, description = "Not blocked", body = BlockState),
        AuthErrors, WriteErrors))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id, target = %id))]
async fn unblock(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<UserId>,
    State(state): State<AppState>,
) -> Result<Json<BlockState>, ApiError> {
    let written = state.social.unblock(me.user_id, id).await?;
    Ok(Json(BlockState { user_id: id.to_string(), blocked: false, changed: written == Written::Changed }))
}

async fn list(state: &AppState, user: UserId, list: List, q: &ListQuery) -> Result<Json<UserPage>, ApiError> {
    let page = state.social.list(user, list, q.cursor()?, q.limit.unwrap_or(20)).await?;
    Ok(Json(page.as_ref().into()))
}

/// Whom a user follows, newest first.
#[utoipa::path(get, path = "/users/{id}/followings", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user"), ListQuery),
    responses(
        (status = 200, description = "A page of the user's followings", body = UserPage),
        AuthErrors, ReadErrors))]
#[tracing::instrument(skip_all, fields(user = %id))]
async fn followings(
    CurrentUser(_viewer): CurrentUser,
    PathId(id): PathId<UserId>,
    ValidQuery(q): ValidQuery<ListQuery>,
    State(state): State<AppState>,
) -> Result<Json<UserPage>, ApiError> {
    list(&state, id, List::Followings, &q).await
}

/// Who follows a user, newest first.
#[utoipa::path(get, path = "/users/{id}/followers", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user"), ListQuery),
    responses(
        (status = 200, description = "A page of the user's followers", body = UserPage),
        AuthErrors, ReadErrors))]
#[tracing::instrument(skip_all, fields(user = %id))]
async fn followers(
    CurrentUser(_viewer): CurrentUser,
    PathId(id): PathId<UserId>,
    ValidQuery(q): ValidQuery<ListQuery>,
    State(state): State<AppState>,
) -> Result<Json<UserPage>, ApiError> {
    list(&state, id, List::Followers, &q).await
}

/// A user's follower and following counts.
#[derive(Debug, Serialize, ToSchema)]
pub struct CountsResponse {
    pub followers: i64,
    pub followings: i64,
}

/// A user's counts.
#[utoipa::path(get, path = "/users/{id}/counts", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user")),
    responses(
        (status = 200, description = "The counts", body = CountsResponse),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such user (`user_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user = %id))]
async fn counts(
    CurrentUser(_viewer): CurrentUser,
    PathId(id): PathId<UserId>,
    State(state): State<AppState>,
) -> Result<Json<CountsResponse>, ApiError> {
    let c = state.social.counts(id).await?;
    Ok(Json(CountsResponse { followers: c.followers, followings: c.followings }))
}

/// A page of a match of two lists: no total (it would cost the whole
/// intersection). A page may be short, even empty, and still carry a
/// cursor: one call scans at most 10 entries per user asked for.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchPage {
    pub users: Vec<ListedUser>,
    /// Pass as `cursor` for the next page; `null` once the scan is done.
    pub next_cursor: Option<String>,
}

impl From<&Matches> for MatchPage {
    fn from(m: &Matches) -> Self {
        Self { users: m.entries.iter().map(Into::into).collect(), next_cursor: m.next.map(|c| c.to_string()) }
    }
}

/// Users both the caller and another user follow: the caller's followings,
/// newest first, that the other follows too, a page at a time.
#[utoipa::path(get, path = "/users/{id}/common-follows", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = PATH_ID), ListQuery),
    responses(
        (status = 200, description = "A page of common follows", body = MatchPage),
        AuthErrors, ReadErrors))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id, other = %id))]
async fn common_follows(
    CurrentUser(me): CurrentUser,
    PathId(id): PathId<UserId>,
    ValidQuery(q): ValidQuery<ListQuery>,
    State(state): State<AppState>,
) -> Result<Json<MatchPage>, ApiError> {
    let common = state.social.common_follows(me.user_id, id, q.cursor()?, q.limit.unwrap_or(20)).await?;
    Ok(Json((&common).into()))
}

/// `?ids=1,2,3`: up to 100 user ids.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct IdsQuery {
    /// 1 to 100 user ids, comma-separated.
    #[param(pattern = "^[0-9]{1,20}(,[0-9]{1,20}){0,99}$")]
    pub ids: String,
}

/// Whether the user follows one id.
#[derive(Debug, Serialize, ToSchema)]
pub struct Following {
    pub user_id: String,
    pub following: bool,
}

/// Whether a user follows each of the ids.
#[derive(Debug, Serialize, ToSchema)]
pub struct FollowingStatus {
    pub results: Vec<Following>,
}

/// Most ids one `following-status` call answers.
const MAX_IDS: usize = 100;

/// Whether a user follows each of up to 100 users, in one call.
#[utoipa::path(get, path = "/users/{id}/following-status", tag = "social", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "The user who may follow"), IdsQuery),
    responses(
        (status = 200, description = "One answer per id, in the order asked", body = FollowingStatus),
        AuthErrors, ReadErrors))]
#[tracing::instrument(skip_all, fields(user = %id))]
async fn following_status(
    CurrentUser(_viewer): CurrentUser,
    PathId(id): PathId<UserId>,
    ValidQuery(q): ValidQuery<IdsQuery>,
    State(state): State<AppState>,
) -> Result<Json<FollowingStatus>, ApiError> {
    let ids = q
        .ids
        .split(',')
        .map(|raw| cursor(Some(raw)).ok().flatten())
        .collect::<Option<Vec<UserId>>>()
        .ok_or_else(|| ApiError::bad_request("invalid_query", "ids: comma-separated positive user ids"))?;
    if ids.len() > MAX_IDS {
        return Err(ApiError::unprocessable("validation_failed", "invalid fields: ids: at most 100"));
    }
    let follows = state.social.follows_each(id, &ids).await?;
    let results = ids.iter().zip(follows).map(|(id, following)| Following { user_id: id.to_string(), following });
    Ok(Json(FollowingStatus { results: results.collect() }))
}

/// The caller's friends (users the caller follows who follow back): the
/// caller's followings, newest first, that follow back, a page at a time.
#[utoipa::path(get, path = "/users/me/friends", tag = "social", security(("bearer" = [])), params(ListQuery),
    responses(
        (status = 200, description = "A page of friends", body = MatchPage),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 422, description = "A limit outside 1 to 100 (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn friends(
    CurrentUser(me): CurrentUser,
    ValidQuery(q): ValidQuery<ListQuery>,
    State(state): State<AppState>,
) -> Result<Json<MatchPage>, ApiError> {
    let page = state.social.friends(me.user_id, q.cursor()?, q.limit.unwrap_or(20)).await?;
    Ok(Json((&page).into()))
}

/// A page of user ids.
#[derive(Debug, Serialize, ToSchema)]
pub struct IdPage {
    pub users: Vec<String>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// The users the caller blocks, by id.
#[utoipa::path(get, path = "/users/me/blocks", tag = "social", security(("bearer" = [])), params(PageQuery),
    responses(
        (status = 200, description = "A page of blocked users", body = IdPage),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 422, description = "A limit outside 1 to 100 (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn blocks(
    CurrentUser(me): CurrentUser,
    ValidQuery(q): ValidQuery<PageQuery>,
    State(state): State<AppState>,
) -> Result<Json<IdPage>, ApiError> {
    let limit = q.limit.unwrap_or(20);
    let ids = state.social.blocks(me.user_id, cursor(q.cursor.as_deref())?, limit).await?;
    let next_cursor = (ids.len() == limit as usize).then(|| ids.last().map(UserId::to_string)).flatten();
    Ok(Json(IdPage { users: ids.iter().map(UserId::to_string).collect(), next_cursor }))
}

/// A suggested user.
#[derive(Debug, Serialize, ToSchema)]
pub struct Suggested {
    pub user_id: String,
    /// How many of the caller's friends follow them.
    pub friends: u32,
}

/// A page of recommendations.
#[derive(Debug, Serialize, ToSchema)]
pub struct Recommendations {
    pub users: Vec<Suggested>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// Friends of the caller's friends, most shared friends first.
#[utoipa::path(get, path = "/users/me/recommendations", tag = "social", security(("bearer" = [])), params(PageQuery),
    responses(
        (status = 200, description = "A page of recommendations", body = Recommendations),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 422, description = "A limit outside 1 to 100 (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn recommendations(
    CurrentUser(me): CurrentUser,
    ValidQuery(q): ValidQuery<PageQuery>,
    State(state): State<AppState>,
) -> Result<Json<Recommendations>, ApiError> {
    let offset: u64 = cursor(q.cursor.as_deref())?.unwrap_or(0);
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    let (found, next) = state.social.recommendations(me.user_id, offset, q.limit.unwrap_or(20)).await?;
    let users = found.iter().map(|r| Suggested { user_id: r.user_id.to_string(), friends: r.friends }).collect();
    Ok(Json(Recommendations { users, next_cursor: next.map(|n| n.to_string()) }))
}
