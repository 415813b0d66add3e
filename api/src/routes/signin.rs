//! Daily sign-in: `POST /users/me/sign` signs today (UTC) for the caller;
//! `GET /users/me/sign?month=YYYY-MM` reads a month's signed days and its
//! streak (see `cityhub_core::signin`). Both need a session.

use axum::extract::State;
use axum::Json;
use chrono::{NaiveDate, Utc};
use cityhub_core::signin::{Month, MonthSigns};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use validator::Validate;

use crate::error::doc::AuthErrors;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{CurrentUser, ValidQuery};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sign, signs))
}

/// Today's sign-in.
#[derive(Debug, Serialize, ToSchema)]
pub struct Signed {
    /// Today, UTC.
    #[schema(value_type = String, format = Date)]
    pub date: NaiveDate,
    /// False when today was signed already (nothing changed).
    pub changed: bool,
}

/// Signs today (UTC) for the caller; signing again the same day changes nothing.
#[utoipa::path(post, path = "/users/me/sign", tag = "sign-in", security(("bearer" = [])),
    responses(
        (status = 200, description = "Today is signed", body = Signed),
        AuthErrors,
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn sign(CurrentUser(me): CurrentUser, State(state): State<AppState>) -> Result<Json<Signed>, ApiError> {
    let today = Utc::now().date_naive();
    let changed = state.signins.sign(me.user_id, today).await?;
    Ok(Json(Signed { date: today, changed }))
}

/// `?month=YYYY-MM`; this month (UTC) when omitted.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MonthQuery {
    /// A month from 2000-01 to this one.
    #[param(pattern = "^[0-9]{4}-[0-9]{2}$")]
    pub month: Option<String>,
}

/// A month's sign-ins.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonthSignIns {
    /// `YYYY-MM`.
    pub month: String,
    /// The days of the month signed, ascending.
    pub days: Vec<u32>,
    /// Consecutive signed days within the month, ending today (or yesterday
    /// while today is not signed) for this month, on its last day for an
    /// earlier one.
    pub streak: u32,
}

impl From<MonthSigns> for MonthSignIns {
    fn from(m: MonthSigns) -> Self {
        Self { month: m.month.to_string(), days: m.days, streak: m.streak }
    }
}

/// The caller's signed days of a month and the streak, from one Redis read.
#[utoipa::path(get, path = "/users/me/sign", tag = "sign-in", security(("bearer" = [])), params(MonthQuery),
    responses(
        (status = 200, description = "The month's sign-ins", body = MonthSignIns),
        (status = 400, description = "Malformed query (`invalid_query`)", body = ErrorBody),
        AuthErrors,
        (status = 422, description = "Not a month from 2000-01 to this one (`validation_failed`)", body = ErrorBody),
        (status = 503, description = "A dependency is unavailable", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(user_id = %me.user_id))]
async fn signs(
    CurrentUser(me): CurrentUser,
    ValidQuery(q): ValidQuery<MonthQuery>,
    State(state): State<AppState>,
) -> Result<Json<MonthSignIns>, ApiError> {
    let today = Utc::now().date_naive();
    let month = match q.month.as_deref() {
        None => Month::of(today),
        Some(raw) => Month::parse(raw).ok_or_else(|| {
            ApiError::unprocessable("validation_failed", "invalid fields: month: YYYY-MM from 2000-01")
        })?,
    };
    Ok(Json(state.signins.month(me.user_id, month, today).await?.into()))
}
