//! Extractors that turn a request into validated inputs or a rejection in the
//! API's JSON error shape: [`ValidJson`], [`PathId`], [`CurrentUser`] and
//! [`Admin`].

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use cityhub_core::auth::{Role, Session};
use serde::de::DeserializeOwned;
use validator::Validate;

use crate::error::ApiError;
use crate::state::AppState;

/// A JSON body that parsed and passed its `validator` rules.
/// Malformed JSON or a wrong content type is 400; wrong types or rule
/// violations are 422.
pub struct ValidJson<T>(pub T);

impl<S, T> FromRequest<S> for ValidJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) =
            axum::Json::<T>::from_request(req, state).await.map_err(|rejection| match rejection {
                JsonRejection::JsonDataError(e) => ApiError::unprocessable("invalid_body", e.body_text()),
                other => ApiError::bad_request("invalid_body", other.body_text()),
            })?;
        value.validate()?;
        Ok(Self(value))
    }
}

/// A positive 64-bit id from the route's single path parameter; anything else is 400.
pub struct PathId(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request("invalid_path", e.body_text()))?;
        match raw.parse::<u64>() {
            Ok(id) if id > 0 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(Self(id)),
            _ => Err(ApiError::bad_request("invalid_path", format!("{raw:?} is not a valid id"))),
        }
    }
}

fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The logged-in user, from `Authorization: Bearer <token>`; 401 otherwise.
pub struct CurrentUser(pub Session);

impl<S> FromRequestParts<S> for CurrentUser
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(ApiError::Unauthorized)?;
        let state = AppState::from_ref(state);
        let session = state.auth.authenticate(token).await?.ok_or(ApiError::Unauthorized)?;
        Ok(Self(session))
    }
}

/// An administrator: the configured admin token, or a session whose user has
/// the admin role. No token is 401; a shopper's token is 403.
pub struct Admin;

impl<S> FromRequestParts<S> for Admin
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(ApiError::Unauthorized)?;
        let state = AppState::from_ref(state);
        if constant_time_eq(token.as_bytes(), state.settings.auth.admin_token.expose().as_bytes()) {
            return Ok(Self);
        }
        match state.auth.authenticate(token).await? {
            Some(session) if session.role == Role::Admin => Ok(Self),
            Some(_) => Err(ApiError::Forbidden),
            None => Err(ApiError::Unauthorized),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
