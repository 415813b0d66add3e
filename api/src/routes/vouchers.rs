//! `POST /admin/vouchers` (create a seckill voucher),
//! `POST /admin/vouchers/ordinary` (create an ordinary coupon),
//! `PUT /admin/vouchers/{id}` (change a voucher's text),
//! `GET /vouchers/{id}` (its page: details and units left),
//! `GET /shops/{id}/vouchers` (a shop's vouchers, each so),
//! `POST /vouchers/{id}/seckill` (try to win one),
//! `POST /vouchers/{id}/claim` (claim a unit of an ordinary coupon) and
//! `GET /users/me/vouchers` (the caller's claimed units).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use chrono::{DateTime, Utc};
use cityhub_core::seckill::page::{self, VoucherPage};
use cityhub_core::vouchers::claims::Claim;
use cityhub_core::vouchers::{
    NewOrdinaryVoucher, NewSeckillVoucher, OrdinaryVoucher, SeckillVoucher, VoucherKind, VoucherText,
};
use cityhub_core::{ClaimId, ShopId, VoucherId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::{AuthErrors, InputErrors};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Admin, ClientIp, CurrentUser, MaybeUser, PathId, ValidJson, ValidQuery};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(create_ordinary))
        .routes(routes!(update))
        .routes(routes!(seckill))
        .routes(routes!(mine))
        .routes(routes!(claim))
        .routes(routes!(show))
        .routes(routes!(of_shop))
}

/// A voucher's page. Money in cents.
#[derive(Debug, Serialize, ToSchema)]
pub struct VoucherView {
    pub id: String,
    pub shop_id: String,
    /// `seckill` (a sale window, one per shopper) or `ordinary` (claimed).
    #[schema(value_type = String, example = "seckill")]
    pub kind: VoucherKind,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    /// A seckill voucher's sale window; `null` for an ordinary coupon.
    pub begin_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
    /// Units left as Redis says at this moment; `null` while the sale has no
    /// state in Redis (it is being rebuilt).
    pub stock_left: Option<i64>,
    /// Whether the caller holds a unit of a seckill voucher; `null` without
    /// a session and for an ordinary coupon (see `GET /users/me/vouchers`).
    pub held: Option<bool>,
}

impl From<VoucherPage> for VoucherView {
    fn from(p: VoucherPage) -> Self {
        let d = &p.details;
        let at = |ms: i64| DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
        Self {
            id: d.id.to_string(),
            shop_id: d.shop_id.to_string(),
            kind: d.kind,
            title: d.title.clone(),
            sub_title: d.sub_title.clone(),
            rules: d.rules.clone(),
            pay_value: d.pay_value,
            actual_value: d.actual_value,
            begin_time: d.sale.map(|s| at(s.begin_ms)),
            end_time: d.sale.map(|s| at(s.end_ms)),
            stock_left: p.stock_left,
            held: p.held,
        }
    }
}

/// A voucher's page: its details (from the two-level cache; MySQL only on a
/// miss) and its units left (from Redis, on every read). A signed-in caller
/// also learns whether they hold one.
#[utoipa::path(get, path = "/vouchers/{id}", tag = "vouchers",
    params(("id" = u64, Path, minimum = 1, description = "Voucher id")),
    responses(
        (status = 200, description = "The voucher", body = VoucherView),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        (status = 401, description = "A bearer token that is not valid (`unauthorized`)", body = ErrorBody),
        (status = 404, description = "No such voucher (`voucher_not_found`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(voucher_id = %id))]
async fn show(
    MaybeUser(viewer): MaybeUser,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
) -> Result<Json<VoucherView>, ApiError> {
    let viewer = viewer.map(|s| s.user_id);
    let found = page::page(&state.vouchers, &state.kv, id, viewer).await?;
    let page = found.ok_or_else(|| ApiError::not_found("voucher_not_found", "no such voucher"))?;
    Ok(Json(page.into()))
}

/// A shop's vouchers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShopVouchers {
    pub vouchers: Vec<VoucherView>,
}

/// A shop's vouchers, oldest first, each with its units left (as
/// `GET /vouchers/{id}`): the list and the details from the two-level cache,
/// every voucher's units left from Redis in one round trip.
#[utoipa::path(get, path = "/shops/{id}/vouchers", tag = "vouchers",
    params(("id" = u64, Path, minimum = 1, description = "Shop id")),
    responses(
        (status = 200, description = "The shop's vouchers", body = ShopVouchers),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        (status = 401, description = "A bearer token that is not valid (`unauthorized`)", body = ErrorBody),
        (status = 404, description = "No such shop (`shop_not_found`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(shop_id = %id))]
async fn of_shop(
    MaybeUser(viewer): MaybeUser,
    PathId(id): PathId<ShopId>,
    State(state): State<AppState>,
) -> Result<Json<ShopVouchers>, ApiError> {
    state.shops.get(id).await?;
    let pages = page::of_shop(&state.vouchers, &state.kv, id, viewer.map(|s| s.user_id)).await?;
    Ok(Json(ShopVouchers { vouchers: pages.into_iter().map(Into::into).collect() }))
}

/// Money is in cents; times are RFC 3339. Field ranges are checked here; the
/// voucher rules (window, price) by `NewSeckillVoucher::check` in core.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSeckillVoucher {
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_u64)]
    pub shop_id: u64,
    #[validate(length(min = 1, max = 255))]
    #[schema(min_length = 1, max_length = 255)]
    pub title: String,
    #[serde(default)]
    #[validate(length(max = 255))]
    #[schema(max_length = 255)]
    pub sub_title: String,
    #[serde(default)]
    #[validate(length(max = 1024))]
    #[schema(max_length = 1024)]
    pub rules: String,
    /// Cents; at most `actual_value`.
    #[validate(range(min = 1, max = 1_000_000_000_u64))]
    #[schema(minimum = 1, maximum = 1_000_000_000_u64)]
    pub pay_value: u64,
    /// Cents.
    #[validate(range(min = 1, max = 1_000_000_000_u64))]
    #[schema(minimum = 1, maximum = 1_000_000_000_u64)]
    pub actual_value: u64,
    #[validate(range(min = 1, max = 10_000_000_u32))]
    #[schema(minimum = 1, maximum = 10_000_000)]
    pub stock: u32,
    /// Stock buckets for a hot sale, each on its own hash tag (so on its own
    /// Redis Cluster master); at most `stock`. One unless given.
    #[serde(default = "one_bucket")]
    #[validate(range(min = 1, max = 64))]
    #[schema(minimum = 1, maximum = 64, default = 1)]
    pub buckets: u16,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

fn one_bucket() -> u16 {
    1
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VoucherResponse {
    pub id: String,
    pub shop_id: String,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
    pub buckets: u16,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

impl From<SeckillVoucher> for VoucherResponse {
    fn from(SeckillVoucher { id, spec: v }: SeckillVoucher) -> Self {
        Self {
            id: id.to_string(),
            shop_id: v.shop_id.to_string(),
            title: v.title,
            sub_title: v.sub_title,
            rules: v.rules,
            pay_value: v.pay_value,
            actual_value: v.actual_value,
            stock: v.stock,
            buckets: v.buckets,
            begin_time: v.begin_time,
            end_time: v.end_time,
        }
    }
}

/// Creates a seckill voucher and preloads its stock and sale window into Redis.
#[utoipa::path(post, path = "/admin/vouchers", tag = "vouchers", request_body = CreateSeckillVoucher,
    security(("bearer" = [])),
    responses((status = 201, description = "Created", body = VoucherResponse), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all)]
async fn create(
    _: Admin,
    State(state): State<AppState>,
    ValidJson(req): ValidJson<CreateSeckillVoucher>,
) -> Result<(StatusCode, Json<VoucherResponse>), ApiError> {
    let created = state
        .vouchers
        .create_seckill(NewSeckillVoucher {
            shop_id: ShopId(req.shop_id),
            title: req.title,
            sub_title: req.sub_title,
            rules: req.rules,
            pay_value: req.pay_value,
            actual_value: req.actual_value,
            stock: req.stock,
            buckets: req.buckets,
            begin_time: req.begin_time,
            end_time: req.end_time,
        })
        .await?;
    tracing::info!(voucher_id = %created.id, stock = created.spec.stock, "seckill voucher created");
    Ok((StatusCode::CREATED, Json(created.into())))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SeckillAccepted {
    /// A 64-bit id, as a string so JavaScript clients keep every digit.
    pub order_id: String,
    /// Always `queued`: the order is stored asynchronously.
    pub status: &'static str,
}

/// Tries to win one unit of a seckill voucher. Decided at once in Redis; the
/// order is then stored asynchronously.
#[utoipa::path(post, path = "/vouchers/{id}/seckill", tag = "vouchers", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Voucher id")),
    responses(
        (status = 202, description = "Won: the order is queued", body = SeckillAccepted),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such seckill voucher (`voucher_not_found`)", body = ErrorBody),
        (status = 409, description = "`sold_out`, `already_bought`, `sale_not_started` or `sale_ended`", body = ErrorBody),
        (status = 429, description = "Over `limits.seckill` for this user or IP (`rate_limited`); see `Retry-After`", body = ErrorBody),
        (status = 503, description = "The order queue or cache is unavailable; nothing was reserved", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(voucher_id = %id, user_id = %user.user_id))]
async fn seckill(
    CurrentUser(user): CurrentUser,
    PathId(id): PathId<VoucherId>,
    ClientIp(ip): ClientIp,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<SeckillAccepted>), ApiError> {
    let request_id = headers.get(crate::REQUEST_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let accepted = state.seckill.attempt(user.user_id, id, ip, request_id).await?;
    Ok((StatusCode::ACCEPTED, Json(SeckillAccepted { order_id: accepted.order_id.to_string(), status: "queued" })))
}

/// An ordinary coupon. Money in cents. Field ranges are checked here; the
/// coupon rules by `NewOrdinaryVoucher::check` in core.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrdinaryVoucher {
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_u64)]
    pub shop_id: u64,
    #[validate(length(min = 1, max = 255))]
    #[schema(min_length = 1, max_length = 255)]
    pub title: String,
    #[serde(default)]
    #[validate(length(max = 255))]
    #[schema(max_length = 255)]
    pub sub_title: String,
    #[serde(default)]
    #[validate(length(max = 1024))]
    #[schema(max_length = 1024)]
    pub rules: String,
    /// Cents; at most `actual_value`.
    #[validate(range(min = 1, max = 1_000_000_000_u64))]
    #[schema(minimum = 1, maximum = 1_000_000_000_u64)]
    pub pay_value: u64,
    /// Cents.
    #[validate(range(min = 1, max = 1_000_000_000_u64))]
    #[schema(minimum = 1, maximum = 1_000_000_000_u64)]
    pub actual_value: u64,
    #[validate(range(min = 1, max = 10_000_000_u32))]
    #[schema(minimum = 1, maximum = 10_000_000)]
    pub stock: u32,
}

/// A voucher's text: what an admin may change once it exists.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TextFields {
    #[validate(length(min = 1, max = 255))]
    #[schema(min_length = 1, max_length = 255)]
    pub title: String,
    #[serde(default)]
    #[validate(length(max = 255))]
    #[schema(max_length = 255)]
    pub sub_title: String,
    #[serde(default)]
    #[validate(length(max = 1024))]
    #[schema(max_length = 1024)]
    pub rules: String,
}

impl From<TextFields> for VoucherText {
    fn from(t: TextFields) -> Self {
        Self { title: t.title, sub_title: t.sub_title, rules: t.rules }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrdinaryVoucherResponse {
    pub id: String,
    pub shop_id: String,
    pub title: String,
    pub sub_title: String,
    pub rules: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub stock: u32,
}

impl From<OrdinaryVoucher> for OrdinaryVoucherResponse {
    fn from(OrdinaryVoucher { id, spec: v }: OrdinaryVoucher) -> Self {
        Self {
            id: id.to_string(),
            shop_id: v.shop_id.to_string(),
            title: v.title,
            sub_title: v.sub_title,
            rules: v.rules,
            pay_value: v.pay_value,
            actual_value: v.actual_value,
            stock: v.stock,
        }
    }
}

/// Creates an ordinary coupon: no sale window, claimed by shoppers while
/// units last (`POST /vouchers/{id}/claim`).
#[utoipa::path(post, path = "/admin/vouchers/ordinary", tag = "vouchers", request_body = CreateOrdinaryVoucher,
    security(("bearer" = [])),
    responses((status = 201, description = "Created", body = OrdinaryVoucherResponse), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all)]
async fn create_ordinary(
    _: Admin,
    State(state): State<AppState>,
    ValidJson(req): ValidJson<CreateOrdinaryVoucher>,
) -> Result<(StatusCode, Json<OrdinaryVoucherResponse>), ApiError> {
    let created = state
        .vouchers
        .create_ordinary(NewOrdinaryVoucher {
            shop_id: ShopId(req.shop_id),
            title: req.title,
            sub_title: req.sub_title,
            rules: req.rules,
            pay_value: req.pay_value,
            actual_value: req.actual_value,
            stock: req.stock,
        })
        .await?;
    tracing::info!(voucher_id = %created.id, stock = created.spec.stock, "ordinary voucher created");
    Ok((StatusCode::CREATED, Json(created.into())))
}

/// Changes a voucher's text (title, sub-title, rules); prices, stock and the
/// sale window are fixed at creation. Every API instance serves the change
/// as soon as the cache's invalidation message arrives (at the latest after
/// `cache.l1_ttl_ms`).
#[utoipa::path(put, path = "/admin/vouchers/{id}", tag = "vouchers", request_body = TextFields,
    security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Voucher id")),
    responses((status = 204, description = "Changed"), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such voucher (`voucher_not_found`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all, fields(voucher_id = %id))]
async fn update(
    _: Admin,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
    ValidJson(req): ValidJson<TextFields>,
) -> Result<StatusCode, ApiError> {
    state.vouchers.update_text(id, req.into()).await?;
    tracing::info!(voucher_id = %id, "voucher text changed");
    Ok(StatusCode::NO_CONTENT)
}

/// A claimed unit of an ordinary coupon. Money in cents.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimView {
    /// The claim's id.
    pub id: String,
    pub voucher_id: String,
    pub title: String,
    pub pay_value: u64,
    pub actual_value: u64,
    pub claimed_at: DateTime<Utc>,
}

impl From<Claim> for ClaimView {
    fn from(c: Claim) -> Self {
        Self {
            id: c.id.to_string(),
            voucher_id: c.voucher_id.to_string(),
            title: c.title,
            pay_value: c.pay_value,
            actual_value: c.actual_value,
            claimed_at: c.claimed_at,
        }
    }
}

/// Claims one unit of an ordinary coupon. A shopper may claim again, as
/// often as `limits.claims` allows, while units last.
#[utoipa::path(post, path = "/vouchers/{id}/claim", tag = "vouchers", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Voucher id")),
    responses(
        (status = 201, description = "Claimed", body = ClaimView),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such voucher (`voucher_not_found`)", body = ErrorBody),
        (status = 409, description = "`sold_out`, or `not_claimable` (a seckill voucher)", body = ErrorBody),
        (status = 429, description = "Over `limits.claims` (`rate_limited`); nothing was claimed", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable; nothing was claimed", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(voucher_id = %id, user_id = %user.user_id))]
async fn claim(
    CurrentUser(user): CurrentUser,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<ClaimView>), ApiError> {
    let claimed = state.vouchers.claim(user.user_id, id).await?;
    Ok((StatusCode::CREATED, Json(claimed.into())))
}

/// A page of `GET /users/me/vouchers`.
#[derive(Debug, Deserialize, Validate, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MineQuery {
    /// Claims with an id below this one (the last `id` of the previous page).
    #[validate(range(min = 1))]
    #[param(minimum = 1)]
    pub before: Option<u64>,
    /// At most this many claims (default 20).
    #[validate(range(min = 1, max = 100))]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MyVouchers {
    /// Newest first.
    pub claims: Vec<ClaimView>,
}

/// The caller's claimed units of ordinary coupons, newest first. (Seckill
/// units are orders: `GET /orders`.)
#[utoipa::path(get, path = "/users/me/vouchers", tag = "vouchers", security(("bearer" = [])), params(MineQuery),
    responses((status = 200, description = "The caller's claims", body = MyVouchers), AuthErrors, InputErrors))]
#[tracing::instrument(skip_all, fields(user_id = %user.user_id))]
async fn mine(
    CurrentUser(user): CurrentUser,
    State(state): State<AppState>,
    ValidQuery(q): ValidQuery<MineQuery>,
) -> Result<Json<MyVouchers>, ApiError> {
    let claims = state.vouchers.claims_of(user.user_id, q.before.map(ClaimId), q.limit.unwrap_or(20)).await?;
    Ok(Json(MyVouchers { claims: claims.into_iter().map(Into::into).collect() }))
}
