//! `POST /auth/code`, `POST /auth/login`, `GET /users/me`.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use cityhub_core::auth::{is_login_code, Phone, Role};
use serde::{Deserialize, Serialize};
use validator::{Validate, ValidationError};

use crate::error::ApiError;
use crate::extract::{CurrentUser, ValidJson};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/code", post(send_code))
        .route("/auth/login", post(login))
        .route("/users/me", get(me))
}

fn valid_phone(raw: &str) -> Result<(), ValidationError> {
    Phone::parse(raw).map(|_| ()).ok_or_else(|| {
        ValidationError::new("phone")
            .with_message("must be an optional + and 6 to 15 digits".into())
    })
}

fn valid_code(raw: &str) -> Result<(), ValidationError> {
    is_login_code(raw)
        .then_some(())
        .ok_or_else(|| ValidationError::new("code").with_message("must be 6 digits".into()))
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct CodeRequest {
    #[validate(custom(function = "valid_phone"))]
    pub phone: String,
}

#[derive(Debug, Serialize)]
pub struct CodeSent {
    pub sent: bool,
    pub expires_in: u64,
}

/// Creates a login code. There is no SMS gateway: the code is written to the
/// server log.
#[tracing::instrument(skip_all, err)]
async fn send_code(
    State(state): State<AppState>,
    ValidJson(req): ValidJson<CodeRequest>,
) -> Result<Json<CodeSent>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let code = state.auth.send_code(&phone).await?;
    tracing::info!(phone = %phone.as_str(), %code, "login code (development: no SMS is sent)");
    Ok(Json(CodeSent {
        sent: true,
        expires_in: state.auth.code_ttl().as_secs(),
    }))
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[validate(custom(function = "valid_phone"))]
    pub phone: String,
    #[validate(custom(function = "valid_code"))]
    pub code: String,
}

#[derive(Debug, Serialize)]
pub struct LoginResponse {
    pub token: String,
    pub user_id: String,
    pub role: Role,
    pub expires_in: u64,
}

/// Exchanges phone + code for a bearer token. The code is used up either way.
#[tracing::instrument(skip_all, err)]
async fn login(
    State(state): State<AppState>,
    ValidJson(req): ValidJson<LoginRequest>,
) -> Result<Json<LoginResponse>, ApiError> {
    let phone = Phone::parse(&req.phone).expect("validated");
    let issued = state.auth.login(&phone, &req.code).await?;
    Ok(Json(LoginResponse {
        token: issued.token,
        user_id: issued.session.user_id.to_string(),
        role: issued.session.role,
        expires_in: issued.expires_in.as_secs(),
    }))
}

#[derive(Debug, Serialize)]
pub struct Me {
    pub user_id: String,
    pub role: Role,
}

async fn me(CurrentUser(session): CurrentUser) -> Json<Me> {
    Json(Me {
        user_id: session.user_id.to_string(),
        role: session.role,
    })
}
