//! Admin operations on orders and sales: `POST /admin/orders/{id}/close`,
//! `GET /admin/reconcile/{voucher_id}` (the last report) and
//! `POST /admin/reconcile/{voucher_id}` (run the reconciler now, or with
//! `?dry_run=true` only report what it would repair).

use axum::extract::{Query, State};
use axum::Json;
use cityhub_core::reconcile::{Mode, Reconciler, Report};
use cityhub_core::{OrderId, VoucherId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Admin, PathId};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(close)).routes(routes!(last_report, reconcile_now))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClosedOrder {
    pub order_id: String,
    /// `closed` (was unpaid) or `refunded` (was paid, or a late payment went back).
    pub status: &'static str,
}

/// Closes an order: unpaid → closed; paid → refunded through the provider,
/// then closed. Its stock comes back once; closing again changes nothing.
#[utoipa::path(post, path = "/admin/orders/{id}/close", tag = "admin", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Order id")),
    responses(
        (status = 200, description = "The order is closed (now or before)", body = ClosedOrder),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such order (`order_not_found`)", body = ErrorBody),
        (status = 409, description = "Accepted but not stored yet (`order_not_stored_yet`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(order_id = %id))]
async fn close(
    _admin: Admin,
    PathId(id): PathId<OrderId>,
    State(state): State<AppState>,
) -> Result<Json<ClosedOrder>, ApiError> {
    let status = state.payments.close(id).await?;
    Ok(Json(ClosedOrder { order_id: id.to_string(), status: status.as_str() }))
}

/// The reconciler's last report for a voucher (scheduled or on demand).
#[utoipa::path(get, path = "/admin/reconcile/{voucher_id}", tag = "admin", security(("bearer" = [])),
    params(("voucher_id" = u64, Path, minimum = 1, description = "Seckill voucher id")),
    responses(
        (status = 200, description = "The last report", body = Object),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No report yet (`report_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn last_report(
    _admin: Admin,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
) -> Result<Json<Report>, ApiError> {
    Reconciler::last_report(&state.db, id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("report_not_found", "the reconciler has no report for this voucher yet"))
}

/// `?dry_run=true`: report what differs and what would be repaired, change nothing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RunOptions {
    /// Only report; the report is not kept as the voucher's last.
    pub dry_run: Option<bool>,
}

/// Reconciles a voucher now: checks Redis against MySQL, repairs what is
/// safe to repair, keeps and returns the report.
#[utoipa::path(post, path = "/admin/reconcile/{voucher_id}", tag = "admin", security(("bearer" = [])),
    params(("voucher_id" = u64, Path, minimum = 1, description = "Seckill voucher id"), RunOptions),
    responses(
        (status = 200, description = "The report of this run", body = Object),
        (status = 400, description = "Malformed id (`invalid_path`) or query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No such seckill voucher (`voucher_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(voucher_id = %id))]
async fn reconcile_now(
    _admin: Admin,
    PathId(id): PathId<VoucherId>,
    options: Result<Query<RunOptions>, axum::extract::rejection::QueryRejection>,
    State(state): State<AppState>,
) -> Result<Json<Report>, ApiError> {
    let Query(options) = options.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let mode = if options.dry_run.unwrap_or(false) { Mode::DryRun } else { Mode::Repair };
    Ok(Json(state.reconciler.run_with(id, mode).await?))
}
