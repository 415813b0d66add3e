//! Operations on the public port: `GET /healthz` (the process is alive),
//! `GET /serving` (the balancer's check: 503 `draining` from the moment
//! shutdown begins, and never because a dependency blinked, or every
//! instance would leave the pool together) and `GET /readyz` (MySQL, Redis
//! and RocketMQ answer; 503 with the failing checks otherwise). Metrics are
//! on the ops listener (`http.metrics_addr`).

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
    OpenApiRouter::new().routes(routes!(healthz)).routes(routes!(serving)).routes(routes!(readyz))
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

/// Whether the balancer should send requests here: 200 while serving, 503
/// `draining` once shutdown began (requests are still served for
/// `http.drain_ms`, then the listener closes).
#[utoipa::path(get, path = "/serving", tag = "operations", responses(
    (status = 200, description = "Serving", body = Health),
    (status = 503, description = "Draining (`draining`): take it out of the pool", body = crate::error::ErrorBody)))]
async fn serving(State(state): State<AppState>) -> Result<Json<Health>, crate::error::ApiError> {
    if state.is_draining() {
        return Err(crate::error::ApiError::Unavailable {
            code: "draining",
            message: "this instance is shutting down; the balancer should take it out".into(),
        });
    }
    Ok(Json(Health { status: "serving" }))
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
    let checks = check(&state).await;
    if checks.failing().is_empty() {
        (StatusCode::OK, Json(Readiness { code: "ready", message: "all dependencies answer".into(), checks }))
    } else {
        let message = "a dependency does not answer; see checks".into();
        (StatusCode::SERVICE_UNAVAILABLE, Json(Readiness { code: "not_ready", message, checks }))
    }
}

/// Asks MySQL, Redis and RocketMQ (the order topic's route) at once, each
/// for at most 2 s.
pub(crate) async fn check(state: &AppState) -> Checks {
    let mysql = async {
        let ping = sqlx::query("SELECT 1").execute(&state.db);
        matches!(tokio::time::timeout(CHECK_TIMEOUT, ping).await, Ok(Ok(_)))
    };
    let redis = async { matches!(tokio::time::timeout(CHECK_TIMEOUT, state.kv.ping()).await, Ok(Ok(()))) };
    let rocketmq =
        cityhub_platform::mq::topic_reachable(state.producer(), &state.settings.mq.order_topic, CHECK_TIMEOUT);
    let (mysql, redis, rocketmq) = tokio::join!(mysql, redis, rocketmq);
    Checks { mysql, redis, rocketmq }
}

impl Checks {
    fn each(&self) -> [(&'static str, bool); 3] {
        [("mysql", self.mysql), ("redis", self.redis), ("rocketmq", self.rocketmq)]
    }

    /// The dependencies that did not answer.
    pub fn failing(&self) -> Vec<String> {
        self.each().into_iter().filter(|(_, up)| !up).map(|(name, _)| name.to_owned()).collect()
    }

    /// Sets `cityhub_dependency_up` for each dependency.
    pub fn record(&self) {
        for (dependency, up) in self.each() {
            metrics::gauge!(cityhub_platform::metrics::DEPENDENCY_UP, "dependency" => dependency).set(if up {
                1.0
            } else {
                0.0
            });
        }
    }
}
