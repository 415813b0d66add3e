//! `POST /auth/code`, `POST /auth/login`, `POST /auth/logout`, `GET /users/me`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use cityhub_core::auth::guard::PROOF_MAX_LEN;
use cityhub_core::auth::{is_login_code, Phone};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::{Validate, ValidationError};

use crate::error::doc::{AuthErrors, InputErrors};
use crate::error::ApiError;
use crate::extract::{ClientIp, CurrentUser, Token, ValidJson};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(send_code)).routes(routes!(login)).routes(routes!(logout)).routes(routes!(me))
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
    /// Send with the code to `POST /auth/login`: this request's own
    /// challenge. Guesses through it count against it alone (`auth.code_tries`).
    #[schema(example = "5f0c1e2d3b4a69788796a5b4c3d2e1f0")]
    pub challenge: String,
    /// True when this request sent a code to the phone; false when the
    /// code sent lately (at most `auth.code_resend_secs` ago) stays valid:
    /// the challenge takes that one.
    pub sent: bool,
    /// Seconds the challenge (and its code) stays valid.
    pub expires_in: u64,
    /// 0, or the zero bits a proof of work needs: past
    /// `auth.wrong_codes_per_phone_day` wrong guesses at this phone, a
    /// login carries `proof` such that SHA-256 of `"<challenge>:<proof>"`
    /// starts with this many zero bits.
    pub proof_bits: u32,
}

/// Asks for a login code: answers a challenge of the caller's own, and
/// sends the phone's code (at most once per `auth.code_resend_secs` and
/// `auth.codes_per_phone_day` a day; the day's last code stays valid until
/// the day renews). There is no SMS gateway: with `auth.log_codes` on
/// (development) the code is written to the server log.
#[utoipa::path(post, path = "/auth/code", tag = "auth", request_body = CodeRequest,
    responses((status = 200, description = "A challenge (and a code sent when due)", body = CodeSent), InputErrors,
        (status = 429, description = "Over `limits.login_code` (`rate_limited`), this client asked or guessed too often across phones (`login_locked`), or the phone's codes for the day are spent and the last has been used (`codes_spent`); see `Retry-After`", body = crate::error::ErrorBody),
        (status = 503, description = "Dependency unavailable", body = crate::error::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn send_code(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    ValidJson(req): ValidJson<CodeRequest>,
) -> Result<Json<CodeSent>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let challenge = state.auth.send_code(&phone, &ip).await?;
    if let (Some(code), true) = (&challenge.sms, state.settings.auth.log_codes) {
        tracing::info!(phone = %phone.as_str(), %code, "login code (development: no SMS is sent)");
    }
    Ok(Json(CodeSent {
        sent: challenge.sms.is_some(),
        challenge: challenge.id,
        expires_in: challenge.expires_in.as_secs().max(1),
        proof_bits: challenge.proof_bits,
    }))
}

fn valid_challenge(raw: &str) -> Result<(), ValidationError> {
    let ok = raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ok.then_some(()).ok_or_else(|| ValidationError::new("challenge").with_message("must be 32 hex digits".into()))
}

fn valid_proof(raw: &str) -> Result<(), ValidationError> {
    let ok = !raw.is_empty() && raw.len() <= PROOF_MAX_LEN && raw.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then_some(())
        .ok_or_else(|| ValidationError::new("proof").with_message("must be 1 to 32 letters or digits".into()))
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[validate(custom(function = "valid_phone"))]
    #[schema(example = "13800138000", pattern = r"^\+?[0-9]{6,15}$")]
    pub phone: String,
    /// The six digits sent to the phone.
    #[validate(custom(function = "valid_code"))]
    #[schema(example = "123456", pattern = "^[0-9]{6}$")]
    pub code: String,
    /// The challenge `POST /auth/code` answered.
    #[validate(custom(function = "valid_challenge"))]
    #[schema(example = "5f0c1e2d3b4a69788796a5b4c3d2e1f0", pattern = "^[0-9a-f]{32}$")]
    pub challenge: String,
    /// A proof of work, when the challenge asked for one (`proof_bits` > 0).
    #[validate(custom(function = "valid_proof"))]
    #[schema(example = "184467")]
    pub proof: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LoginResponse {
    /// Send as `Authorization: Bearer <token>`.
    pub token: String,
    pub user_id: String,
    /// Seconds; renewed on every use.
    pub expires_in: u64,
}

/// Exchanges phone, code and challenge for a bearer token. A wrong code
/// counts against the challenge (`invalid_code`, then `challenge_gone` once
/// it has no guesses left), the phone's day and the client.
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = LoginRequest,
    responses((status = 200, description = "Logged in", body = LoginResponse), InputErrors,
        (status = 403, description = "The phone had too many wrong guesses today and this guess carries no valid proof of work (`proof_required`)", body = crate::error::ErrorBody),
        (status = 429, description = "Over `limits.login` (`rate_limited`), or this client guessed wrong too often across phones (`login_locked`); see `Retry-After`", body = crate::error::ErrorBody),
        (status = 503, description = "Dependency unavailable", body = crate::error::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    ValidJson(req): ValidJson<LoginRequest>,
) -> Result<Json<LoginResponse>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let issued = state.auth.login(&phone, &req.code, &req.challenge, req.proof.as_deref(), &ip).await?;
    Ok(Json(LoginResponse {
        token: issued.token,
        user_id: issued.session.user_id.to_string(),
        expires_in: issued.expires_in.as_secs(),
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub user_id: String,
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
    Json(Me { user_id: session.user_id.to_string() })
}
