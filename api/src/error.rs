//! The one error type of the API and its JSON body
//! `{"code": "...", "message": "..."}`. `code` is stable for clients;
//! `message` is for humans. 5xx responses log the cause chain and return an
//! opaque message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use cityhub_core::auth::AuthError;
use cityhub_core::orders::OrderError;
use cityhub_core::seckill::SeckillError;
use cityhub_core::vouchers::VoucherError;
use serde::Serialize;

/// The JSON body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Stable, machine-readable: `sold_out`, `validation_failed`, ...
    #[schema(example = "sold_out")]
    pub code: &'static str,
    /// For humans; may change.
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed (bad JSON, bad path or query).
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    /// 401: no valid credentials.
    #[error("missing or invalid bearer token")]
    Unauthorized,
    /// 403: valid credentials without the right.
    #[error("not allowed")]
    Forbidden,
    /// 404: no such resource (or not yours).
    #[error("{message}")]
    NotFound { code: &'static str, message: String },
    /// 409: the request conflicts with the current state.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 422: well-formed but invalid values.
    #[error("{message}")]
    Unprocessable { code: &'static str, message: String },
    /// 503: a dependency is unavailable; retry later.
    #[error("{message}")]
    Unavailable { code: &'static str, message: String },
    /// 500: a bug or an unexpected failure; the cause is logged, not shown.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::BadRequest { code, message: message.into() }
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::NotFound { code, message: message.into() }
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::Conflict { code, message: message.into() }
    }

    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::Unprocessable { code, message: message.into() }
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            Self::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Self::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            Self::NotFound { code, .. } => (StatusCode::NOT_FOUND, code),
            Self::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            Self::Unprocessable { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
            Self::Unavailable { code, .. } => (StatusCode::SERVICE_UNAVAILABLE, code),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let message = match &self {
            Self::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                "internal error".to_owned()
            }
            other => other.to_string(),
        };
        (status, Json(ErrorBody { code, message })).into_response()
    }
}

impl From<SeckillError> for ApiError {
    fn from(err: SeckillError) -> Self {
        let message = err.to_string();
        match err {
            SeckillError::SoldOut => Self::Conflict { code: "sold_out", message },
            SeckillError::AlreadyBought => Self::Conflict { code: "already_bought", message },
            SeckillError::NotStarted => Self::Conflict { code: "sale_not_started", message },
            SeckillError::Ended => Self::Conflict { code: "sale_ended", message },
            SeckillError::UnknownVoucher => Self::NotFound { code: "voucher_not_found", message },
            SeckillError::QueueUnavailable(cause) => {
                tracing::warn!(error = %cause, "order not queued; reservation released");
                Self::Unavailable {
                    code: "order_queue_unavailable",
                    message: "orders cannot be queued right now; nothing was reserved, try again".into(),
                }
            }
            SeckillError::Redis(e) => unavailable_redis(e),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(err: AuthError) -> Self {
        match err {
            AuthError::InvalidCode => Self::unprocessable("invalid_code", err.to_string()),
            AuthError::Redis(e) => unavailable_redis(e),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<VoucherError> for ApiError {
    fn from(err: VoucherError) -> Self {
        match err {
            VoucherError::UnknownShop(_) => Self::unprocessable("shop_not_found", err.to_string()),
            VoucherError::Redis(e) => unavailable_redis(e),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<OrderError> for ApiError {
    fn from(err: OrderError) -> Self {
        match err {
            OrderError::Redis(e) => unavailable_redis(e),
            other => Self::Internal(other.into()),
        }
    }
}

fn unavailable_redis(err: redis::RedisError) -> ApiError {
    tracing::error!(error = %err, "redis error");
    ApiError::Unavailable { code: "cache_unavailable", message: "the cache is unavailable; try again".into() }
}

impl From<validator::ValidationErrors> for ApiError {
    fn from(errs: validator::ValidationErrors) -> Self {
        let mut fields: Vec<String> = errs
            .field_errors()
            .into_iter()
            .map(|(field, errs)| {
                let why = errs
                    .iter()
                    .filter_map(|e| e.message.as_ref())
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                if why.is_empty() {
                    field.to_string()
                } else {
                    format!("{field}: {why}")
                }
            })
            .collect();
        fields.sort();
        Self::unprocessable("validation_failed", format!("invalid fields: {}", fields.join("; ")))
    }
}

/// Fallback for unknown routes.
pub async fn not_found() -> ApiError {
    ApiError::not_found("route_not_found", "no such route")
}

/// Fallback for a known path with the wrong method.
pub async fn method_not_allowed() -> Response {
    let body = ErrorBody { code: "method_not_allowed", message: "method not allowed on this route".into() };
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

/// Error responses shared by the routes, for the OpenAPI document.
pub mod doc {
    use super::ErrorBody;

    /// 400 malformed JSON or path, 422 invalid values, 503 dependency down.
    #[derive(utoipa::IntoResponses)]
    pub enum InputErrors {
        /// Malformed JSON, wrong content type or malformed path (`invalid_body`, `invalid_path`).
        #[response(status = 400)]
        BadRequest(ErrorBody),
        /// Values that break a rule (`validation_failed`, `invalid_body`, ...).
        #[response(status = 422)]
        Unprocessable(ErrorBody),
        /// A dependency is unavailable (`cache_unavailable`, ...).
        #[response(status = 503)]
        Unavailable(ErrorBody),
    }

    /// 401 without a valid bearer token.
    #[derive(utoipa::IntoResponses)]
    pub enum AuthErrors {
        /// No or invalid bearer token (`unauthorized`).
        #[response(status = 401)]
        Unauthorized(ErrorBody),
    }
}
