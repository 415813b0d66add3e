//! `GET /orders` (the caller's orders, newest first, by cursor) and
//! `GET /orders/{id}` (the caller's own order; anyone else's is 404).

use axum::extract::{Query, State};
use axum::Json;
use chrono::{DateTime, Utc};
use cityhub_core::orders::{find_for_user, list_for_user, OrderView};
use cityhub_core::OrderId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{cursor, CurrentUser, PathId};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(show))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderResponse {
    pub order_id: String,
    pub voucher_id: String,
    /// `queued` until the worker stores it, then `unpaid`, `paid`, `closed`
    /// or `refunded`; an unpaid order past its payment window reads `closed`.
    pub status: &'static str,
    pub pay_amount: Option<u64>,
    pub created_at: Option<DateTime<Utc>>,
    /// An unpaid order's payment deadline: the payment timeout counted from
    /// when the order was stored, so a late-stored order keeps its whole window.
    pub pay_by: Option<DateTime<Utc>>,
}

impl From<OrderView> for OrderResponse {
    fn from(o: OrderView) -> Self {
        Self {
            order_id: o.order_id.to_string(),
            voucher_id: o.voucher_id.to_string(),
            status: o.status.as_str(),
            pay_amount: o.pay_amount,
            created_at: o.created_at,
            pay_by: o.pay_by,
        }
    }
}

/// One of the caller's orders.
#[utoipa::path(get, path = "/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Order id")),
    responses(
        (status = 200, description = "The order", body = OrderResponse),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such order of the caller (`order_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(order_id = %id))]
async fn show(
    CurrentUser(user): CurrentUser,
    PathId(id): PathId<OrderId>,
    State(state): State<AppState>,
) -> Result<Json<OrderResponse>, ApiError> {
    find_for_user(&state.db, &state.kv, state.payments.window(), id, user.user_id)
        .await?
        .map(|o| Json(o.into()))
        .ok_or_else(|| ApiError::not_found("order_not_found", "no such order"))
}

/// `?cursor=<order id>&limit=<1..=100>`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// `next_cursor` of the previous page; omit for the newest orders.
    #[param(pattern = "^[0-9]{1,20}$")]
    pub cursor: Option<String>,
    /// Orders per page, 1 to 100; 20 when omitted.
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderPage {
    pub orders: Vec<OrderResponse>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// The caller's stored orders, newest first.
#[utoipa::path(get, path = "/orders", tag = "orders", security(("bearer" = [])), params(Page),
    responses(
        (status = 200, description = "A page of orders", body = OrderPage),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 422, description = "A limit outside 1 to 100 (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %user.user_id))]
async fn list(
    CurrentUser(user): CurrentUser,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
    State(state): State<AppState>,
) -> Result<Json<OrderPage>, ApiError> {
    let Query(page) = page.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let cursor = cursor(page.cursor.as_deref())?;
    let limit = page.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::unprocessable("validation_failed", "invalid fields: limit: must be 1 to 100"));
    }
    let orders = list_for_user(&state.db, state.payments.window(), user.user_id, cursor, limit).await?;
    let next_cursor = (orders.len() == limit as usize).then(|| orders.last().map(|o| o.order_id.to_string())).flatten();
    Ok(Json(OrderPage { orders: orders.into_iter().map(Into::into).collect(), next_cursor }))
}
