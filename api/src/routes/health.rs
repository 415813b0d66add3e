//! Operations on the public port: `GET /healthz` (the process is alive) and
//! `GET /readyz` (MySQL, Redis and RocketMQ answer; 503 with the failing
//! checks otherwise). Metrics are on the ops listener (`http.metrics_addr`).

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz)).routes(routes!(readyz))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Checks {
    pub mysql: bool,
    pub redis: bool,
    pub rocketmq: bool,
}

/// The error shape plus the result of each check.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ready`, or `not_ready` on 503.
    pub code: &'static str,
    pub message: String,
    pub checks: Checks,
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// MySQL, Redis and RocketMQ (the order topic's route) all answer.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses(
    (status = 200, description = "Ready", body = Readiness),
    (status = 503, description = "A dependency does not answer", body = Readiness)))]
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let mysql = async {
        let ping = sqlx::query("SELECT 1").execute(&state.db);
        matches!(tokio::time::timeout(CHECK_TIMEOUT, ping).await, Ok(Ok(_)))
    };
    let redis = async { matches!(tokio::time::timeout(CHECK_TIMEOUT, state.kv.ping()).await, Ok(Ok(()))) };
    let rocketmq =
        cityhub_platform::mq::topic_reachable(state.producer(), &state.settings.mq.order_topic, CHECK_TIMEOUT);
    let (mysql, redis, rocketmq) = tokio::join!(mysql, redis, rocketmq);
    let checks = Checks { mysql, redis, rocketmq };
    if mysql && redis && rocketmq {
        (StatusCode::OK, Json(Readiness { code: "ready", message: "all dependencies answer".into(), checks }))
    } else {
        let message = "a dependency does not answer; see checks".into();
        (StatusCode::SERVICE_UNAVAILABLE, Json(Readiness { code: "not_ready", message, checks }))
    }
}
