//! `GET /orders/{id}`: the caller's own order; anyone else's is 404.

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use cityhub_core::orders::{find_for_user, OrderView};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{CurrentUser, PathId};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderResponse {
    pub order_id: String,
    pub voucher_id: String,
    /// `queued` until the worker stores it, then `unpaid`, `paid`, `closed` or `refunded`.
    pub status: String,
    pub pay_amount: Option<u64>,
    pub created_at: Option<DateTime<Utc>>,
}

impl From<OrderView> for OrderResponse {
    fn from(o: OrderView) -> Self {
        Self {
            order_id: o.order_id.to_string(),
            voucher_id: o.voucher_id.to_string(),
            status: o.status,
            pay_amount: o.pay_amount,
            created_at: o.created_at,
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
#[tracing::instrument(skip_all, fields(order_id = id))]
async fn show(
    CurrentUser(user): CurrentUser,
    PathId(id): PathId,
    State(state): State<AppState>,
) -> Result<Json<OrderResponse>, ApiError> {
    find_for_user(&state.db, &state.kv, id, user.user_id)
        .await?
        .map(|o| Json(o.into()))
        .ok_or_else(|| ApiError::not_found("order_not_found", "no such order"))
}
