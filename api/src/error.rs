//! The one error type of the API and its JSON body
//! `{"code": "...", "message": "..."}`. `code` is stable for clients;
//! `message` is for humans. 5xx responses log the cause chain and return an
//! opaque message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use cityhub_core::auth::AuthError;
use cityhub_core::console::ConsoleError;
use cityhub_core::notes::NoteError;
use cityhub_core::orders::OrderError;
use cityhub_core::payments::{Mismatch, PayError};
use cityhub_core::reconcile::ReconcileError;
use cityhub_core::seckill::page::PageError;
use cityhub_core::seckill::{Class, SeckillError};
use cityhub_core::shops::ShopError;
use cityhub_core::signin::SignError;
use cityhub_core::social::SocialError;
use cityhub_core::vouchers::claims::ClaimError;
use cityhub_core::vouchers::VoucherError;
use cityhub_platform::cache::CacheError;
use cityhub_platform::outbox::OutboxError;
use cityhub_platform::parking::ReplayError;
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
    /// 401 with its own code (e.g. a callback's bad signature).
    #[error("{message}")]
    Unauthenticated { code: &'static str, message: String },
    /// 403: valid credentials without the right.
    #[error("not allowed")]
    Forbidden,
    /// 403 with its own code (e.g. the other user blocked the caller).
    #[error("{message}")]
    Refused { code: &'static str, message: String },
    /// 404: no such resource (or not yours).
    #[error("{message}")]
    NotFound { code: &'static str, message: String },
    /// 409: the request conflicts with the current state.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 422: well-formed but invalid values.
    #[error("{message}")]
    Unprocessable { code: &'static str, message: String },
    /// 429: too many requests; `retry_after` goes out as `Retry-After`.
    #[error("{message}")]
    TooManyRequests { code: &'static str, message: String, retry_after: std::time::Duration },
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
            Self::Unauthenticated { code, .. } => (StatusCode::UNAUTHORIZED, code),
            Self::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            Self::Refused { code, .. } => (StatusCode::FORBIDDEN, code),
            Self::NotFound { code, .. } => (StatusCode::NOT_FOUND, code),
            Self::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            Self::Unprocessable { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
            Self::TooManyRequests { code, .. } => (StatusCode::TOO_MANY_REQUESTS, code),
            Self::Unavailable { code, .. } => (StatusCode::SERVICE_UNAVAILABLE, code),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let retry_after = match &self {
            Self::TooManyRequests { retry_after, .. } => Some(retry_after.as_secs_f64().ceil().max(1.0) as u64),
            _ => None,
        };
        let message = match &self {
            Self::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                "internal error".to_owned()
            }
            other => other.to_string(),
        };
        let mut response = (status, Json(ErrorBody { code, message })).into_response();
        if let Some(secs) = retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

impl From<SeckillError> for ApiError {
    fn from(err: SeckillError) -> Self {
        let outcome = err.outcome();
        let (code, message) = (outcome.code(), outcome.message().to_owned());
        match (outcome.class(), err) {
            (Class::Conflict, _) => Self::Conflict { code, message },
            (Class::NotFound, _) => Self::NotFound { code, message },
            (_, SeckillError::Limited(retry_after)) => Self::TooManyRequests { code, message, retry_after },
            (_, SeckillError::Redis(e)) => unavailable(Dependency::Redis, &e),
            (_, SeckillError::Cache(e)) => e.into(),
            (_, err) => {
                tracing::warn!(error = %err, "nothing reserved");
                Self::Unavailable { code, message }
            }
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(err: AuthError) -> Self {
        match err {
            AuthError::InvalidCode(_) => Self::unprocessable("invalid_code", err.to_string()),
            AuthError::ChallengeGone => Self::unprocessable("challenge_gone", err.to_string()),
            AuthError::ProofRequired(_) => Self::Refused { code: "proof_required", message: err.to_string() },
            AuthError::LockedOut(left) => {
                Self::TooManyRequests { code: "login_locked", message: err.to_string(), retry_after: left }
            }
            AuthError::CodesSpent(left) => {
                Self::TooManyRequests { code: "codes_spent", message: err.to_string(), retry_after: left }
            }
            AuthError::Redis(e) => unavailable(Dependency::Redis, &e),
            AuthError::Db(e) => database(e),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<VoucherError> for ApiError {
    fn from(err: VoucherError) -> Self {
        match err {
            VoucherError::Invalid { .. } => Self::unprocessable("validation_failed", format!("invalid fields: {err}")),
            VoucherError::UnknownShop(_) => Self::unprocessable("shop_not_found", err.to_string()),
            VoucherError::NotFound(_) => Self::not_found("voucher_not_found", "no such voucher"),
            VoucherError::Redis(e) => unavailable(Dependency::Redis, &e),
            VoucherError::Db(e) => database(e),
        }
    }
}

impl From<NoteError> for ApiError {
    fn from(err: NoteError) -> Self {
        match err {
            NoteError::Invalid { .. } => Self::unprocessable("validation_failed", format!("invalid fields: {err}")),
            NoteError::UnknownShop(_) => Self::unprocessable("shop_not_found", err.to_string()),
            NoteError::NotFound => Self::not_found("note_not_found", "no such note"),
            NoteError::Cache(e) => e.into(),
            NoteError::Db(e) | NoteError::Outbox(OutboxError::Db(e)) => database(e),
            NoteError::Redis(e) => unavailable(Dependency::Redis, &e),
            NoteError::Social(e) => e.into(),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<ClaimError> for ApiError {
    fn from(err: ClaimError) -> Self {
        match err {
            ClaimError::UnknownVoucher => Self::not_found("voucher_not_found", "no such voucher"),
            ClaimError::NotClaimable => Self::conflict("not_claimable", err.to_string()),
            ClaimError::SoldOut => Self::conflict("sold_out", err.to_string()),
            ClaimError::Cache(e) => e.into(),
            ClaimError::Db(e) => database(e),
            ClaimError::Redis(e) => unavailable(Dependency::Redis, &e),
        }
    }
}

impl From<OrderError> for ApiError {
    fn from(err: OrderError) -> Self {
        match err {
            OrderError::Redis(e) => unavailable(Dependency::Redis, &e),
            OrderError::Db(e) | OrderError::Outbox(OutboxError::Db(e)) => database(e),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<PayError> for ApiError {
    fn from(err: PayError) -> Self {
        match err {
            PayError::NotFound => Self::not_found("order_not_found", "no such order"),
            PayError::NotPayable(_) => Self::conflict("order_not_payable", err.to_string()),
            PayError::NotStoredYet => Self::conflict("order_not_stored_yet", err.to_string()),
            PayError::BadSignature => Self::Unauthenticated { code: "bad_signature", message: err.to_string() },
            PayError::InvalidCallback(_) => Self::unprocessable("invalid_callback", err.to_string()),
            PayError::Mismatch(Mismatch::Stale) => {
                Self::Unauthenticated { code: "stale_callback", message: err.to_string() }
            }
            PayError::Mismatch(_) => Self::conflict("payment_mismatch", err.to_string()),
            PayError::RefundRefused(_) => Self::Unavailable {
                code: "refund_pending",
                message: "the refund is under way and the provider has not confirmed it; try again later".into(),
            },
            PayError::Order(e) => e.into(),
            PayError::Db(e) => database(e),
            PayError::Redis(e) => unavailable(Dependency::Redis, &e),
            PayError::Cache(e) => e.into(),
        }
    }
}

impl From<ReconcileError> for ApiError {
    fn from(err: ReconcileError) -> Self {
        match err {
            ReconcileError::NotFound => Self::not_found("voucher_not_found", "no such seckill voucher"),
            ReconcileError::Db(e) => database(e),
            ReconcileError::Redis(e) => unavailable(Dependency::Redis, &e),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<ConsoleError> for ApiError {
    fn from(err: ConsoleError) -> Self {
        match err {
            ConsoleError::Db(e) => database(e),
            ConsoleError::Redis(e) => unavailable(Dependency::Redis, &e),
            ConsoleError::Orders(e) => e.into(),
        }
    }
}

impl From<ReplayError> for ApiError {
    fn from(err: ReplayError) -> Self {
        match err {
            ReplayError::Unknown(_) => Self::not_found("parked_not_found", err.to_string()),
            ReplayError::AlreadyReplayed(_) => Self::conflict("already_replayed", err.to_string()),
            ReplayError::Db(e) => database(e),
            ReplayError::Broker(e) => {
                tracing::error!(error = %e, "replay not published");
                Self::Unavailable {
                    code: "broker_unavailable",
                    message: "the broker did not take it; try again".into(),
                }
            }
        }
    }
}

impl From<ShopError> for ApiError {
    fn from(err: ShopError) -> Self {
        match err {
            ShopError::NotFound(_) => Self::not_found("shop_not_found", "no such shop"),
            ShopError::UnknownType(_) => Self::unprocessable("shop_type_not_found", err.to_string()),
            ShopError::Invalid { .. } => Self::unprocessable("validation_failed", format!("invalid fields: {err}")),
            ShopError::Busy => CacheError::Busy.into(),
            ShopError::Cache(e) => e.into(),
            ShopError::Db(e) => database(e),
            ShopError::Redis(e) => unavailable(Dependency::Redis, &e),
        }
    }
}

impl From<CacheError> for ApiError {
    fn from(err: CacheError) -> Self {
        match err {
            CacheError::Redis(e) => unavailable(Dependency::Redis, &e),
            CacheError::Load(e) => match e.downcast_ref::<sqlx::Error>() {
                Some(db) if cityhub_platform::db::is_transient(db) => unavailable(Dependency::MySql, db),
                _ => Self::Internal(anyhow::anyhow!("cache load failed: {e}")),
            },
            CacheError::Busy => {
                Self::Unavailable { code: "cache_busy", message: "the data is being refreshed; try again".into() }
            }
        }
    }
}

impl From<SocialError> for ApiError {
    fn from(err: SocialError) -> Self {
        let message = err.to_string();
        match err {
            SocialError::Myself => Self::unprocessable("self_relation", message),
            SocialError::UnknownUser => Self::not_found("user_not_found", message),
            SocialError::BlockedByThem => Self::Refused { code: "blocked_by_user", message },
            SocialError::BlockedByMe => Self::conflict("user_blocked", message),
            SocialError::Rebuilding => Self::Unavailable { code: "list_rebuilding", message },
            SocialError::Db(e) | SocialError::Outbox(OutboxError::Db(e)) => database(e),
            SocialError::Redis(e) => unavailable(Dependency::Redis, &e),
            SocialError::Outbox(e) => Self::Internal(e.into()),
        }
    }
}

impl From<PageError> for ApiError {
    fn from(err: PageError) -> Self {
        match err {
            PageError::Cache(e) => e.into(),
            PageError::Redis(e) => unavailable(Dependency::Redis, &e),
        }
    }
}

impl From<SignError> for ApiError {
    fn from(err: SignError) -> Self {
        match err {
            SignError::FutureMonth(_) => {
                Self::unprocessable("validation_failed", format!("invalid fields: month: {err}"))
            }
            SignError::Redis(e) => unavailable(Dependency::Redis, &e),
        }
    }
}

/// A service the API depends on.
#[derive(Debug, Clone, Copy)]
enum Dependency {
    MySql,
    Redis,
}

/// The one mapping of a dependency outage: 503 with the dependency's own code.
fn unavailable(dependency: Dependency, cause: &dyn std::fmt::Display) -> ApiError {
    let (code, message) = match dependency {
        Dependency::MySql => ("database_unavailable", "the database is unavailable; try again"),
        Dependency::Redis => ("cache_unavailable", "the cache is unavailable; try again"),
    };
    tracing::error!(error = %cause, ?dependency, "dependency unavailable");
    ApiError::Unavailable { code, message: message.into() }
}

/// A MySQL error: an outage (lost connection, pool timeout, lock timeout) is
/// 503; anything else is a bug, 500.
fn database(err: sqlx::Error) -> ApiError {
    if cityhub_platform::db::is_transient(&err) {
        unavailable(Dependency::MySql, &err)
    } else {
        ApiError::Internal(err.into())
    }
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

    /// The errors every social write may answer besides 401.
    #[derive(utoipa::IntoResponses)]
    pub enum WriteErrors {
        /// Malformed id (`invalid_path`).
        #[response(status = 400)]
        BadRequest(ErrorBody),
        /// No such user (`user_not_found`).
        #[response(status = 404)]
        NotFound(ErrorBody),
        /// The caller's own id (`self_relation`).
        #[response(status = 422)]
        Myself(ErrorBody),
        /// Over `limits.follow` (`rate_limited`).
        #[response(status = 429)]
        Limited(ErrorBody),
        /// A dependency is unavailable.
        #[response(status = 503)]
        Unavailable(ErrorBody),
    }

    /// The errors a read of another user's lists may answer besides 401.
    #[derive(utoipa::IntoResponses)]
    pub enum ReadErrors {
        /// Malformed id or query (`invalid_path`, `invalid_query`).
        #[response(status = 400)]
        BadRequest(ErrorBody),
        /// No such user (`user_not_found`).
        #[response(status = 404)]
        NotFound(ErrorBody),
        /// A query value outside its range (`validation_failed`).
        #[response(status = 422)]
        Invalid(ErrorBody),
        /// A dependency is unavailable (`list_rebuilding`: another reader is rebuilding the list).
        #[response(status = 503)]
        Unavailable(ErrorBody),
    }
}
