//! The sale console: `GET /admin/` serves one static page (no framework, no
//! build step: HTML and a little JavaScript compiled into the binary) that
//! signs an admin in and then reads only the admin JSON routes below, the
//! same ones scripts read:
//!
//! - `GET /admin/sales`: the newest seckill vouchers.
//! - `GET /admin/sales/{voucher_id}`: one sale from both sides (Redis stock
//!   against MySQL stock, units reserved under a 202 against orders stored).
//! - `GET /admin/overview`: every API and worker instance with its health,
//!   the order consumers' lag, the outbox backlog, parked messages.
//! - `GET /admin/parked`, `POST /admin/parked/{id}/replay`: parked messages.
//! - `GET /admin/orders?id=|phone=`: an order by id, a shopper's by phone.
//!
//! Closing an order and the reconciler's reports are in `admin`.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use chrono::{DateTime, TimeZone, Utc};
use cityhub_core::auth::Phone;
use cityhub_core::console::{FoundOrder, Lookup, Overview, SaleFigures, SaleRow};
use cityhub_core::{OrderId, VoucherId};
use cityhub_platform::parking::{self, Parked};
use cityhub_platform::presence::Instance;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Admin, PathId, ValidQuery};
use crate::state::AppState;

/// The console page.
const PAGE: &str = include_str!("../../assets/console.html");

/// Most vouchers `GET /admin/sales` lists.
const SALES_LISTED: u32 = 50;
/// Most parked messages `GET /admin/parked` lists.
const PARKED_LISTED: u32 = 100;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(page))
        .routes(routes!(sales))
        .routes(routes!(sale))
        .routes(routes!(overview))
        .routes(routes!(parked))
        .routes(routes!(replay))
        .routes(routes!(orders))
}

/// The sale console (HTML). It asks for an operator key (`cityhub admin key
/// create`) and reads the admin routes with it.
#[utoipa::path(get, path = "/admin/", tag = "admin",
    responses((status = 200, description = "The console page", content_type = "text/html", body = String)))]
async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // The page runs its own inline script only and is framed by no one.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
}

fn at_ms(ms: u64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms as i64).single().unwrap_or_default()
}

/// A seckill voucher in the list.
#[derive(Debug, Serialize, ToSchema)]
pub struct SaleSummary {
    pub voucher_id: String,
    pub shop_id: String,
    pub title: String,
    pub initial_stock: i64,
    /// MySQL's stock: initial stock less the live orders stored.
    pub mysql_stock: i64,
    pub begin_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub buckets: u16,
    /// `upcoming`, `live` or `ended`.
    pub phase: &'static str,
}

impl From<SaleRow> for SaleSummary {
    fn from(row: SaleRow) -> Self {
        Self {
            phase: row.phase().as_str(),
            voucher_id: row.voucher_id.to_string(),
            shop_id: row.shop_id.to_string(),
            title: row.title,
            initial_stock: row.initial_stock,
            mysql_stock: row.mysql_stock,
            begin_time: row.begin_time,
            end_time: row.end_time,
            buckets: row.buckets,
        }
    }
}

/// The newest seckill vouchers, newest first (at most 50).
#[utoipa::path(get, path = "/admin/sales", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, description = "Seckill vouchers", body = Vec<SaleSummary>),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn sales(_admin: Admin, State(state): State<AppState>) -> Result<Json<Vec<SaleSummary>>, ApiError> {
    Ok(Json(state.console.sales(SALES_LISTED).await?.into_iter().map(SaleSummary::from).collect()))
}

/// A voucher's stored orders by status.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderCountsBody {
    pub unpaid: i64,
    pub paid: i64,
    pub closed: i64,
    pub refunded: i64,
}

/// One sale from both sides.
#[derive(Debug, Serialize, ToSchema)]
pub struct SaleBody {
    #[serde(flatten)]
    pub sale: SaleSummary,
    /// Units left in Redis over every bucket; null while a bucket has no keys.
    pub redis_stock: Option<i64>,
    /// Units Redis holds for buyers, each under a 202 (initial stock less
    /// Redis stock; a closed order's unit comes back); null while a bucket
    /// has no keys.
    pub accepted: Option<i64>,
    /// Orders stored in MySQL that hold a unit (unpaid and paid).
    pub stored: i64,
    /// `accepted` less `stored`: orders on their way to MySQL plus releases
    /// of closed orders on their way back to Redis; 0 once both drained.
    pub in_flight: Option<i64>,
    pub orders: OrderCountsBody,
}

impl From<SaleFigures> for SaleBody {
    fn from(f: SaleFigures) -> Self {
        let (accepted, in_flight, stored, redis_stock) = (f.reserved(), f.in_flight(), f.orders.live(), f.redis_stock);
        let o = f.orders;
        Self {
            sale: f.row.into(),
            redis_stock,
            accepted,
            stored,
            in_flight,
            orders: OrderCountsBody { unpaid: o.unpaid, paid: o.paid, closed: o.closed, refunded: o.refunded },
        }
    }
}

/// One sale now: Redis stock against MySQL stock, accepted against stored.
#[utoipa::path(get, path = "/admin/sales/{voucher_id}", tag = "admin", security(("bearer" = [])),
    params(("voucher_id" = u64, Path, minimum = 1, description = "Seckill voucher id")),
    responses(
        (status = 200, description = "The sale's figures", body = SaleBody),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such seckill voucher (`voucher_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn sale(
    _admin: Admin,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
) -> Result<Json<SaleBody>, ApiError> {
    let figures = state.console.sale(id).await?;
    figures.map(|f| Json(f.into())).ok_or_else(|| ApiError::not_found("voucher_not_found", "no such seckill voucher"))
}

/// One API or worker process, as its last beat shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstanceBody {
    pub id: String,
    /// `api` or `worker`.
    pub kind: String,
    pub version: String,
    /// The commit it was built from (empty when its beat does not say).
    pub commit: String,
    pub host: String,
    pub pid: u32,
    pub started_at: DateTime<Utc>,
    /// When its last beat was sent (beats come every 5 s).
    pub seen_at: DateTime<Utc>,
    /// `up`, `failing` (something in it fails) or `missing` (no beat for 15 s).
    pub state: &'static str,
    /// What fails in it: a dependency that does not answer, a job that is down.
    pub failing: Vec<String>,
    /// An API's 202s since it started (`accepted`); a worker's orders stored
    /// since it started (`stored`) and its order consumer lag (`order_lag`).
    pub figures: std::collections::BTreeMap<String, f64>,
}

impl From<Instance> for InstanceBody {
    fn from(Instance { beat, state }: Instance) -> Self {
        Self {
            id: beat.id,
            kind: beat.kind,
            version: beat.version,
            commit: beat.commit,
            host: beat.host,
            pid: beat.pid,
            started_at: at_ms(beat.started_ms),
            seen_at: at_ms(beat.seen_ms),
            state: state.as_str(),
            failing: beat.failing,
            figures: beat.figures,
        }
    }
}

/// The platform as a whole.
#[derive(Debug, Serialize, ToSchema)]
pub struct OverviewBody {
    pub instances: Vec<InstanceBody>,
    /// Order messages not consumed yet, over the workers that beat.
    pub order_lag: i64,
    /// Outbox events committed and not published yet.
    pub outbox_backlog: i64,
    /// Age of the oldest of them, seconds.
    pub outbox_oldest_secs: f64,
    /// Parked messages not replayed.
    pub parked_open: i64,
    /// Of those, orders whose shopper had a 202.
    pub parked_accepted: i64,
}

impl From<Overview> for OverviewBody {
    fn from(o: Overview) -> Self {
        Self {
            instances: o.instances.into_iter().map(InstanceBody::from).collect(),
            order_lag: o.order_lag,
            outbox_backlog: o.outbox.rows,
            outbox_oldest_secs: o.outbox.oldest_secs,
            parked_open: o.parked_open,
            parked_accepted: o.parked_accepted,
        }
    }
}

/// Every API and worker instance with its health, the order consumers'
/// lag, the outbox backlog and the parked messages.
#[utoipa::path(get, path = "/admin/overview", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, description = "The platform now", body = OverviewBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn overview(_admin: Admin, State(state): State<AppState>) -> Result<Json<OverviewBody>, ApiError> {
    Ok(Json(state.console.overview().await?.into()))
}

/// A message a consumer parked.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParkedBody {
    pub id: String,
    pub topic: String,
    /// Why: `revoked`, `stock_exhausted`, `gave_up`, ...
    pub kind: String,
    pub order_id: Option<String>,
    /// The order's shopper was told 202.
    pub accepted: bool,
    pub reason: String,
    pub parked_at: DateTime<Utc>,
    pub replayed_at: Option<DateTime<Utc>>,
}

impl From<Parked> for ParkedBody {
    fn from(p: Parked) -> Self {
        Self {
            id: p.id.to_string(),
            topic: p.topic,
            kind: p.kind,
            order_id: p.order_id.map(|o| o.to_string()),
            accepted: p.accepted,
            reason: p.reason,
            parked_at: p.created_at,
            replayed_at: p.replayed_at,
        }
    }
}

/// Parked messages not replayed yet, oldest first (at most 100).
#[utoipa::path(get, path = "/admin/parked", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, description = "Open parked messages", body = Vec<ParkedBody>),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn parked(_admin: Admin, State(state): State<AppState>) -> Result<Json<Vec<ParkedBody>>, ApiError> {
    let rows = parking::list(&state.db, false, PARKED_LISTED).await.map_err(parking::ReplayError::Db)?;
    Ok(Json(rows.into_iter().map(ParkedBody::from).collect()))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Replayed {
    pub id: String,
    /// Always `replayed`: published again to its topic.
    pub status: &'static str,
}

/// Publishes a parked message again, unchanged, to its topic (its consumer
/// is idempotent) and marks it replayed. Do it once its cause is fixed.
#[utoipa::path(post, path = "/admin/parked/{id}/replay", tag = "admin", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Parked message id")),
    responses(
        (status = 200, description = "Published again", body = Replayed),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such parked message (`parked_not_found`)", body = ErrorBody),
        (status = 409, description = "Replayed before (`already_replayed`)", body = ErrorBody),
        (status = 503, description = "The broker or the database is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(parked_id = id))]
async fn replay(
    _admin: Admin,
    PathId(id): PathId<u64>,
    State(state): State<AppState>,
) -> Result<Json<Replayed>, ApiError> {
    parking::replay(&state.db, state.producer(), id).await?;
    tracing::info!("parked message replayed");
    Ok(Json(Replayed { id: id.to_string(), status: "replayed" }))
}

/// Exactly one of `id` and `phone`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OrderLookup {
    /// An order id.
    #[param(value_type = Option<String>, pattern = "^[1-9][0-9]{0,19}$")]
    pub id: Option<String>,
    /// A shopper's phone (6 to 15 digits, optional +): their newest 50 orders.
    #[param(pattern = r"^\+?[0-9]{6,15}$")]
    pub phone: Option<String>,
}

impl OrderLookup {
    fn lookup(self) -> Result<Lookup, ApiError> {
        match (self.id, self.phone) {
            (Some(id), None) => match id.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Lookup::Id(OrderId(n))),
                _ => Err(ApiError::unprocessable("validation_failed", "id: must be an order id (digits)")),
            },
            (None, Some(phone)) => Phone::parse(&phone)
                .map(Lookup::Phone)
                .ok_or_else(|| ApiError::unprocessable("validation_failed", "phone: 6 to 15 digits, optional +")),
            _ => Err(ApiError::unprocessable("validation_failed", "give exactly one of id and phone")),
        }
    }
}

/// An order as an admin finds it.
#[derive(Debug, Serialize, ToSchema)]
pub struct FoundOrderBody {
    pub order_id: String,
    pub user_id: String,
    pub phone: String,
    pub voucher_id: String,
    /// `queued`, `unpaid`, `paid`, `closed` or `refunded`.
    pub status: &'static str,
    /// Cents; null while queued.
    pub pay_amount: Option<u64>,
    pub created_at: Option<DateTime<Utc>>,
}

impl From<FoundOrder> for FoundOrderBody {
    fn from(f: FoundOrder) -> Self {
        Self {
            order_id: f.order.order_id.to_string(),
            user_id: f.user_id.to_string(),
            phone: f.phone,
            voucher_id: f.order.voucher_id.to_string(),
            status: f.order.status.as_str(),
            pay_amount: f.order.pay_amount,
            created_at: f.order.created_at,
        }
    }
}

/// Looks orders up: one by id (stored, or still queued), or a shopper's
/// newest 50 by phone. An empty list when nothing matches.
#[utoipa::path(get, path = "/admin/orders", tag = "admin", security(("bearer" = [])), params(OrderLookup),
    responses(
        (status = 200, description = "The orders found", body = Vec<FoundOrderBody>),
        (status = 400, description = "Unknown query parameter (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 422, description = "Not exactly one of id and phone, or a malformed one (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn orders(
    _admin: Admin,
    ValidQuery(query): ValidQuery<OrderLookup>,
    State(state): State<AppState>,
) -> Result<Json<Vec<FoundOrderBody>>, ApiError> {
    let found = state.console.find_orders(&query.lookup()?).await?;
    Ok(Json(found.into_iter().map(FoundOrderBody::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_time_reads_as_the_same_instant() {
        let now = Utc.timestamp_millis_opt(1_765_000_000_123).unwrap();
        assert_eq!(at_ms(1_765_000_000_123), now);
    }

    #[test]
    fn a_lookup_takes_exactly_one_of_id_and_phone() {
        let l = |id: Option<&str>, phone: Option<&str>| {
            OrderLookup { id: id.map(str::to_owned), phone: phone.map(str::to_owned) }.lookup()
        };
        assert!(matches!(l(Some("42"), None), Ok(Lookup::Id(OrderId(42)))));
        assert!(matches!(l(None, Some("13800138000")), Ok(Lookup::Phone(_))));
        for bad in [
            l(None, None),
            l(Some("1"), Some("13800138000")),
            l(Some("0"), None),
            l(Some("x"), None),
            l(None, Some("12")),
        ] {
            assert!(matches!(bad, Err(ApiError::Unprocessable { code: "validation_failed", .. })));
        }
    }
}
