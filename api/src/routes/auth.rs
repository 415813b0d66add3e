//! `POST /auth/code`, `POST /auth/login`, `POST /auth/logout`, `GET /users/me`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use cityhub_core::auth::{is_login_code, Phone, Role};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::{Validate, ValidationError};

use crate::error::doc::{AuthErrors, InputErrors};
use crate::error::ApiError;
use crate::extract::{ClientIp, CurrentUser, Token, ValidJson};
use crate::limits::{limited, Guarded};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(OpenApiRouter::new().routes(routes!(send_code)).route_layer(limited(Guarded::LoginCode)))
        .merge(OpenApiRouter::new().routes(routes!(login)).route_layer(limited(Guarded::Login)))
        .routes(routes!(logout))
        .routes(routes!(me))
}

fn valid_phone(raw: &str) -> Result<(), ValidationError> {
    Phone::parse(raw)
        .map(|_| ())
        .ok_or_else(|| ValidationError::new("phone").with_message("must be an optional + and 6 to 15 digits".into()))
}

fn valid_code(raw: &str) -> Result<(), ValidationError> {
    is_login_code(raw).then_some(()).ok_or_else(|| ValidationError::new("code").with_message("must be 6 digits".into()))
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeRequest {
    /// An optional `+` and 6 to 15 digits.
    #[validate(custom(function = "valid_phone"))]
    #[schema(example = "13800138000", pattern = r"^\+?[0-9]{6,15}$")]
    pub phone: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CodeSent {
    pub sent: bool,
    /// Seconds the code stays valid.
    pub expires_in: u64,
}

/// Creates a login code. There is no SMS gateway: with `auth.log_codes` on
/// (development) the code is written to the server log.
#[utoipa::path(post, path = "/auth/code", tag = "auth", request_body = CodeRequest,
    responses((status = 200, description = "Code created", body = CodeSent), InputErrors,
        (status = 429, description = "Over `limits.login_code` (`rate_limited`), or too many codes or wrong tries for this phone or IP (`login_locked`); see `Retry-After`", body = crate::error::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn send_code(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    ValidJson(req): ValidJson<CodeRequest>,
) -> Result<Json<CodeSent>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let code = state.auth.send_code(&phone, &ip).await?;
    if state.settings.auth.log_codes {
        tracing::info!(phone = %phone.as_str(), %code, "login code (development: no SMS is sent)");
    }
    Ok(Json(CodeSent { sent: true, expires_in: state.auth.code_ttl().as_secs() }))
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[validate(custom(function = "valid_phone"))]
    #[schema(example = "13800138000", pattern = r"^\+?[0-9]{6,15}$")]
    pub phone: String,
    /// The six digits from `POST /auth/code`.
    #[validate(custom(function = "valid_code"))]
    #[schema(example = "123456", pattern = "^[0-9]{6}$")]
    pub code: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LoginResponse {
    /// Send as `Authorization: Bearer <token>`.
    pub token: String,
    pub user_id: String,
    #[schema(value_type = String, example = "shopper")]
    pub role: Role,
    /// Seconds; renewed on every use.
    pub expires_in: u64,
}

/// Exchanges phone + code for a bearer token. The code is used up either
/// way; wrong codes count towards a lockout of the phone and the IP.
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = LoginRequest,
    responses((status = 200, description = "Logged in", body = LoginResponse), InputErrors,
        (status = 429, description = "Over `limits.login` (`rate_limited`), or too many wrong codes for this phone or IP (`login_locked`); see `Retry-After`", body = crate::error::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    ValidJson(req): ValidJson<LoginRequest>,
) -> Result<Json<LoginResponse>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let issued = state.auth.login(&phone, &req.code, &ip).await?;
    Ok(Json(LoginResponse {
        token: issued.token,
        user_id: issued.session.user_id.to_string(),
        role: issued.session.role,
        expires_in: issued.expires_in.as_secs(),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub user_id: String,
    #[schema(value_type = String, example = "shopper")]
    pub role: Role,
}

/// Ends the caller's session: the token stops working on every API
/// instance as soon as the invalidation reaches it (at most
/// `auth.session_cache_ms` if the message is lost).
#[utoipa::path(post, path = "/auth/logout", tag = "auth", security(("bearer" = [])),
    responses((status = 204, description = "Logged out"), AuthErrors,
        (status = 503, description = "Dependency unavailable", body = crate::error::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn logout(Token(token): Token, State(state): State<AppState>) -> Result<StatusCode, ApiError> {
    match state.auth.logout(&token).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::Unauthorized),
    }
}

/// The caller.
#[utoipa::path(get, path = "/users/me", tag = "auth", security(("bearer" = [])),
    responses((status = 200, description = "The logged-in user", body = Me), AuthErrors,
        (status = 503, description = "Dependency unavailable", body = crate::error::ErrorBody)))]
async fn me(CurrentUser(session): CurrentUser) -> Json<Me> {
    Json(Me { user_id: session.user_id.to_string(), role: session.role })
}
