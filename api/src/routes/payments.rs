//! `POST /orders/{id}/pay` (the owner starts paying) and
//! `POST /payments/callback` (the provider's signed result).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use cityhub_core::payments::signature;
use cityhub_core::OrderId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{CurrentUser, PathId};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(pay)).routes(routes!(callback))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentStarted {
    pub order_id: String,
    /// The provider's transaction id.
    pub txn_id: String,
    /// Cents.
    pub amount: u64,
    /// Always `pending`: the provider confirms through its callback.
    pub status: &'static str,
}

/// Starts paying one of the caller's orders (unpaid, or still queued).
#[utoipa::path(post, path = "/orders/{id}/pay", tag = "payments", security(("bearer" = [])),
    params(("id" = u64, Path, minimum = 1, description = "Order id")),
    responses(
        (status = 202, description = "Payment started; the order turns paid when the provider confirms", body = PaymentStarted),
        (status = 400, description = "Malformed id (`invalid_path`)", body = ErrorBody),
        AuthErrors,
        (status = 404, description = "No such order of the caller (`order_not_found`)", body = ErrorBody),
        (status = 409, description = "The order is paid, closed or refunded (`order_not_payable`)", body = ErrorBody),
        (status = 429, description = "Over `limits.payment` (`rate_limited`); see `Retry-After`", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(order_id = %id, user_id = %user.user_id))]
async fn pay(
    CurrentUser(user): CurrentUser,
    PathId(id): PathId<OrderId>,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<PaymentStarted>), ApiError> {
    let started = state.payments.start(user.user_id, id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(PaymentStarted {
            order_id: started.order_id.to_string(),
            txn_id: started.txn_id,
            amount: started.amount,
            status: "pending",
        }),
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackResult {
    /// `paid`, `failed`, `duplicate` (seen before; nothing changed) or
    /// `refunded` (the order could not take it; the money went back).
    pub result: &'static str,
}

/// The payment provider's result, signed: header `X-Cityhub-Signature:
/// sha256=<hex HMAC-SHA256 of the raw body>`. Body: `{"txn_id", "order_id",
/// "amount", "result": "succeeded" | "failed", "ts": <unix seconds>}`. It is
/// applied only to a payment started by `POST /orders/{id}/pay` with the same
/// transaction id, order and amount, and only within
/// `payments.callback_max_age_secs` of `ts`.
#[utoipa::path(post, path = "/payments/callback", tag = "payments",
    request_body(content = String, content_type = "application/json", description = "The signed callback body"),
    params(("x-cityhub-signature" = Option<String>, Header, description = "`sha256=<hex>`")),
    responses(
        (status = 200, description = "Applied (or seen before)", body = CallbackResult),
        (status = 401, description = "Missing or wrong signature (`bad_signature`), or signed too long ago (`stale_callback`); nothing changed", body = ErrorBody),
        (status = 409, description = "Matches no started payment: unknown transaction, another order or another amount (`payment_mismatch`); nothing changed", body = ErrorBody),
        (status = 422, description = "Signed but not a callback (`invalid_callback`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable, or the payment's refund is not confirmed yet (`refund_pending`); the provider retries", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<CallbackResult>, ApiError> {
    let body = body.map_err(|e| ApiError::bad_request("invalid_body", e.body_text()))?;
    let sig = headers.get(signature::HEADER).map(|v| v.as_bytes());
    let cb = state.payments.verify(&body, sig)?;
    let applied = state.payments.apply(&cb).await?;
    metrics::counter!(cityhub_core::metrics::PAYMENT_CALLBACKS, "result" => applied.as_str()).increment(1);
    Ok(Json(CallbackResult { result: applied.as_str() }))
}
