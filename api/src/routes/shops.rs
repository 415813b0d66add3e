//! Shops: `GET /shops/{id}`, `GET /shops` (by type, by cursor),
//! `GET /shops/nearby`, `GET /shop-types`; admin `POST /admin/shops`,
//! `PUT /admin/shops/{id}` and `GET /admin/shops/{id}/uv`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::NaiveDate;
use cityhub_core::shops::{NewShop, Point, Shop, ShopType};
use cityhub_core::ShopId;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::{AuthErrors, InputErrors};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{cursor, Admin, MaybeUser, PathId, ValidJson, ValidQuery};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show))
        .routes(routes!(list))
        .routes(routes!(nearby))
        .routes(routes!(types))
        .routes(routes!(create))
        .routes(routes!(update))
        .routes(routes!(visitors))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShopResponse {
    pub id: String,
    pub name: String,
    pub type_id: String,
    pub address: String,
    /// Longitude, degrees; `null` for a shop with no position.
    pub x: Option<f64>,
    /// Latitude, degrees.
    pub y: Option<f64>,
    /// Cents.
    pub avg_price: u64,
    /// Tenths of a star (47 = 4.7).
    pub score: u32,
    pub open_hours: String,
}

impl From<&Shop> for ShopResponse {
    fn from(Shop { id, spec: s }: &Shop) -> Self {
        Self {
            id: id.to_string(),
            name: s.name.clone(),
            type_id: s.type_id.to_string(),
            address: s.address.clone(),
            x: s.position.map(|p| p.x),
            y: s.position.map(|p| p.y),
            avg_price: s.avg_price,
            score: s.score,
            open_hours: s.open_hours.clone(),
        }
    }
}

/// One shop. A signed-in reader counts as one of the day's unique visitors.
#[utoipa::path(get, path = "/shops/{id}", tag = "shops",
    params(("id" = u64, Path, minimum = 1, description = "Shop id")),
    responses(
        (status = 200, description = "The shop", body = ShopResponse),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        (status = 401, description = "A bearer token that is not valid (`unauthorized`)", body = ErrorBody),
        (status = 404, description = "No such shop (`shop_not_found`)", body = ErrorBody),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(shop_id = %id))]
async fn show(
    MaybeUser(user): MaybeUser,
    PathId(id): PathId<ShopId>,
    State(state): State<AppState>,
) -> Result<Json<ShopResponse>, ApiError> {
    let shop = state.shops.get(id).await?;
    if let Some(user) = user {
        state.shops.visited(id, user.user_id);
    }
    Ok(Json(shop.as_ref().into()))
}

/// `?type_id=&cursor=&limit=`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ShopQuery {
    /// Only shops of this type; all when omitted.
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[param(minimum = 1)]
    pub type_id: Option<u64>,
    /// `next_cursor` of the previous page; omit for the first.
    #[param(pattern = "^[0-9]{1,20}$")]
    pub cursor: Option<String>,
    /// Shops per page, 1 to 100; 20 when omitted.
    #[validate(range(min = 1, max = 100))]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShopPage {
    pub shops: Vec<ShopResponse>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// Shops by id, of one type or all, a page at a time.
#[utoipa::path(get, path = "/shops", tag = "shops", params(ShopQuery),
    responses((status = 200, description = "A page of shops", body = ShopPage), InputErrors,
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn list(ValidQuery(q): ValidQuery<ShopQuery>, State(state): State<AppState>) -> Result<Json<ShopPage>, ApiError> {
    let after: ShopId = cursor(q.cursor.as_deref())?.unwrap_or_default();
    let limit = q.limit.unwrap_or(20);
    let shops = state.shops.page(q.type_id, after, limit).await?;
    let next_cursor = (shops.len() == limit as usize).then(|| shops.last().map(|s| s.id.to_string())).flatten();
    Ok(Json(ShopPage { shops: shops.iter().map(Into::into).collect(), next_cursor }))
}

/// `?x=&y=&radius_m=&type_id=&limit=`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NearbyQuery {
    /// Longitude of the searcher, degrees.
    #[validate(range(min = -180.0, max = 180.0))]
    #[param(minimum = -180, maximum = 180)]
    pub x: f64,
    /// Latitude of the searcher, degrees.
    #[validate(range(min = -85.05112878, max = 85.05112878))]
    #[param(minimum = -85.05112878, maximum = 85.05112878)]
    pub y: f64,
    /// Search radius, metres, 1 to 50,000; 5,000 when omitted.
    #[validate(range(min = 1.0, max = 50000.0))]
    #[param(minimum = 1, maximum = 50000)]
    pub radius_m: Option<f64>,
    /// The shop type to search.
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[param(minimum = 1)]
    pub type_id: u64,
    /// Most shops returned, 1 to 50; 20 when omitted.
    #[validate(range(min = 1, max = 50))]
    #[param(minimum = 1, maximum = 50)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NearbyShop {
    #[serde(flatten)]
    pub shop: ShopResponse,
    /// Metres from the searcher.
    pub distance_m: f64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NearbyShops {
    /// Nearest first.
    pub shops: Vec<NearbyShop>,
}

/// Shops of one type within a radius, nearest first, with their distance.
#[utoipa::path(get, path = "/shops/nearby", tag = "shops", params(NearbyQuery),
    responses((status = 200, description = "Shops within the radius", body = NearbyShops), InputErrors,
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn nearby(
    ValidQuery(q): ValidQuery<NearbyQuery>,
    State(state): State<AppState>,
) -> Result<Json<NearbyShops>, ApiError> {
    let at = Point { x: q.x, y: q.y };
    let found = state.shops.nearby(q.type_id, at, q.radius_m.unwrap_or(5000.0), q.limit.unwrap_or(20)).await?;
    let shops = found.iter().map(|n| NearbyShop { shop: n.shop.as_ref().into(), distance_m: n.distance_m }).collect();
    Ok(Json(NearbyShops { shops }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShopTypeResponse {
    pub id: String,
    pub name: String,
    pub icon: String,
    pub sort: u32,
}

impl From<ShopType> for ShopTypeResponse {
    fn from(t: ShopType) -> Self {
        Self { id: t.id.to_string(), name: t.name, icon: t.icon, sort: t.sort }
    }
}

/// Every shop type, in display order.
#[utoipa::path(get, path = "/shop-types", tag = "shops",
    responses((status = 200, description = "Shop types", body = [ShopTypeResponse]),
        (status = 429, description = "Over `limits.reads` (`rate_limited`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn types(State(state): State<AppState>) -> Result<Json<Vec<ShopTypeResponse>>, ApiError> {
    Ok(Json(state.shops.types().await?.iter().cloned().map(Into::into).collect()))
}

/// A shop as an admin writes it; `x` and `y` go together or not at all.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShopBody {
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub name: String,
    #[validate(range(min = 1, max = 9_007_199_254_740_991_u64))]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_u64)]
    pub type_id: u64,
    #[serde(default)]
    #[validate(length(max = 255))]
    #[schema(max_length = 255)]
    pub address: String,
    /// Longitude, degrees.
    #[validate(range(min = -180.0, max = 180.0))]
    #[schema(minimum = -180, maximum = 180)]
    pub x: Option<f64>,
    /// Latitude, degrees.
    #[validate(range(min = -85.05112878, max = 85.05112878))]
    #[schema(minimum = -85.05112878, maximum = 85.05112878)]
    pub y: Option<f64>,
    /// Cents.
    #[serde(default)]
    #[validate(range(max = 1_000_000_000_u64))]
    #[schema(maximum = 1_000_000_000_u64)]
    pub avg_price: u64,
    /// Tenths of a star, 0 to 50.
    #[serde(default)]
    #[validate(range(max = 50))]
    #[schema(maximum = 50)]
    pub score: u32,
    #[serde(default)]
    #[validate(length(max = 32))]
    #[schema(max_length = 32)]
    pub open_hours: String,
}

impl TryFrom<ShopBody> for NewShop {
    type Error = ApiError;

    fn try_from(b: ShopBody) -> Result<Self, ApiError> {
        let position = match (b.x, b.y) {
            (Some(x), Some(y)) => Some(Point { x, y }),
            (None, None) => None,
            _ => return Err(ApiError::unprocessable("validation_failed", "invalid fields: x and y go together")),
        };
        Ok(NewShop {
            name: b.name,
            type_id: b.type_id,
            address: b.address,
            position,
            avg_price: b.avg_price,
            score: b.score,
            open_hours: b.open_hours,
        })
    }
}

/// Creates a shop; it is searchable nearby at once.
#[utoipa::path(post, path = "/admin/shops", tag = "admin", request_body = ShopBody, security(("bearer" = [])),
    responses((status = 201, description = "Created", body = ShopResponse), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all)]
async fn create(
    _: Admin,
    State(state): State<AppState>,
    ValidJson(body): ValidJson<ShopBody>,
) -> Result<(StatusCode, Json<ShopResponse>), ApiError> {
    let shop = state.shops.create(&body.try_into()?).await?;
    tracing::info!(shop_id = %shop.id, "shop created");
    Ok((StatusCode::CREATED, Json((&shop).into())))
}

/// Replaces a shop. Every API instance serves the new version as soon as
/// the invalidation reaches it (at most `cache.l1_ttl_ms` if it is lost).
#[utoipa::path(put, path = "/admin/shops/{id}", tag = "admin", request_body = ShopBody, security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Shop id")),
    responses((status = 200, description = "Updated", body = ShopResponse), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such shop (`shop_not_found`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all, fields(shop_id = %id))]
async fn update(
    _: Admin,
    PathId(id): PathId<ShopId>,
    State(state): State<AppState>,
    ValidJson(body): ValidJson<ShopBody>,
) -> Result<Json<ShopResponse>, ApiError> {
    let shop = state.shops.update(id, &body.try_into()?).await?;
    tracing::info!(shop_id = %id, "shop updated");
    Ok(Json((&shop).into()))
}

/// `?from=YYYY-MM-DD&to=YYYY-MM-DD` (UTC days, inclusive).
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DayRange {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DayVisitors {
    pub date: NaiveDate,
    pub visitors: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VisitorReport {
    pub shop_id: String,
    pub days: Vec<DayVisitors>,
    /// Distinct visitors over the whole range (HyperLogLog, about 1% error).
    pub visitors: u64,
}

/// Unique signed-in visitors of a shop per day and over the range.
#[utoipa::path(get, path = "/admin/shops/{id}/uv", tag = "admin", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Shop id"), DayRange),
    responses((status = 200, description = "Daily and merged counts", body = VisitorReport), AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such shop (`shop_not_found`)", body = ErrorBody), InputErrors))]
#[tracing::instrument(skip_all, fields(shop_id = %id))]
async fn visitors(
    _: Admin,
    PathId(id): PathId<ShopId>,
    ValidQuery(range): ValidQuery<DayRange>,
    State(state): State<AppState>,
) -> Result<Json<VisitorReport>, ApiError> {
    let counts = state.shops.visitors(id, range.from, range.to).await?;
    let days = counts.days.into_iter().map(|(date, visitors)| DayVisitors { date, visitors }).collect();
    Ok(Json(VisitorReport { shop_id: id.to_string(), days, visitors: counts.total }))
}
