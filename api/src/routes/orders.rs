//! `GET /orders/{id}`: the caller's own order; anyone else's is 404.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use cityhub_core::orders::{find_for_user, OrderView};
use serde::Serialize;

use crate::error::ApiError;
use crate::extract::{CurrentUser, PathId};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/orders/{id}", get(show))
}

#[derive(Debug, Serialize)]
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

#[tracing::instrument(skip_all, fields(order_id = id), err)]
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
