//! Admin operations on orders and sales: `POST /admin/orders/{id}/close`,
//! `GET /admin/reconcile/{voucher_id}` (the last report) and
//! `POST /admin/reconcile/{voucher_id}` (run the reconciler now, or with
//! `?dry_run=true` only report what it would repair).

use axum::extract::{Query, State};
use axum::Json;
use chrono::{DateTime, Utc};
use cityhub_core::reconcile::{Difference, Mode, Reconciler, Report};
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

/// One difference the reconciler found, and what it did about it.
#[derive(Debug, Serialize, ToSchema)]
pub struct DifferenceBody {
    /// `keys_missing`, `stale_copy`, `unconfirmed_reservation`, `redis_stock`, ...
    pub kind: &'static str,
    /// The orders concerned, as strings.
    pub order_ids: Vec<String>,
    pub detail: String,
    /// This run repaired it (or handed it to the worker).
    pub repaired: bool,
}

/// A reconciler run: what it read on each side, its verdict and findings.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReportBody {
    pub voucher_id: String,
    pub ran_at: DateTime<Utc>,
    /// `consistent`, `repaired`, `drift` (an operator must look) or `paused`.
    pub verdict: &'static str,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders: i64,
    /// Null when the voucher's keys were missing.
    pub redis_stock: Option<i64>,
    pub live_buyers: i64,
    /// Reservations younger than the grace period, left alone.
    pub in_flight: i64,
    pub differences: Vec<DifferenceBody>,
}

impl From<Report> for ReportBody {
    fn from(r: Report) -> Self {
        let difference = |d: Difference| DifferenceBody {
            kind: d.kind.label(),
            order_ids: d.order_ids.iter().map(ToString::to_string).collect(),
            detail: d.detail,
            repaired: d.repaired,
        };
        Self {
            voucher_id: r.voucher_id.to_string(),
            ran_at: r.ran_at,
            verdict: r.verdict.as_str(),
            initial_stock: r.initial_stock,
            db_stock: r.db_stock,
            live_orders: r.live_orders,
            redis_stock: r.redis_stock,
            live_buyers: r.live_buyers,
            in_flight: r.in_flight,
            differences: r.differences.into_iter().map(difference).collect(),
        }
    }
}

/// The reconciler's last report for a voucher (scheduled or on demand).
#[utoipa::path(get, path = "/admin/reconcile/{voucher_id}", tag = "admin", security(("bearer" = [])),
    params(("voucher_id" = u64, Path, minimum = 1, description = "Seckill voucher id")),
    responses(
        (status = 200, description = "The last report", body = ReportBody),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 403, description = "Not an admin (`forbidden`)", body = ErrorBody),
        (status = 404, description = "No report yet (`report_not_found`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
async fn last_report(
    _admin: Admin,
    PathId(id): PathId<VoucherId>,
    State(state): State<AppState>,
) -> Result<Json<ReportBody>, ApiError> {
    Reconciler::last_report(&state.db, id)
        .await?
        .map(|r| Json(r.into()))
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
        (status = 200, description = "The report of this run", body = ReportBody),
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
) -> Result<Json<ReportBody>, ApiError> {
    let Query(options) = options.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let mode = if options.dry_run.unwrap_or(false) { Mode::DryRun } else { Mode::Repair };
    Ok(Json(state.reconciler.run_with(id, mode).await?.into()))
}
