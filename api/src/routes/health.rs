//! `GET /healthz` (the process is alive) and `GET /readyz` (MySQL, Redis and
//! RocketMQ answer; 503 with the failing checks otherwise).

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

#[derive(Debug, Serialize)]
pub struct Health {
    pub status: &'static str,
}

async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

#[derive(Debug, Serialize)]
pub struct Checks {
    pub mysql: bool,
    pub redis: bool,
    pub rocketmq: bool,
}

#[derive(Debug, Serialize)]
pub struct Readiness {
    /// `ready`, or `not_ready` on 503.
    pub code: &'static str,
    pub message: String,
    pub checks: Checks,
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let mysql = async {
        matches!(
            tokio::time::timeout(CHECK_TIMEOUT, sqlx::query("SELECT 1").execute(&state.db)).await,
            Ok(Ok(_))
        )
    };
    let redis = async {
        matches!(
            tokio::time::timeout(CHECK_TIMEOUT, state.kv.ping()).await,
            Ok(Ok(()))
        )
    };
    let rocketmq = cityhub_core::mq::topic_reachable(
        state.producer(),
        &state.settings.mq.order_topic,
        CHECK_TIMEOUT,
    );
    let (mysql, redis, rocketmq) = tokio::join!(mysql, redis, rocketmq);
    let checks = Checks {
        mysql,
        redis,
        rocketmq,
    };
    if mysql && redis && rocketmq {
        (
            StatusCode::OK,
            Json(Readiness {
                code: "ready",
                message: "all dependencies answer".into(),
                checks,
            }),
        )
    } else {
        let message = "a dependency does not answer; see checks".into();
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Readiness {
                code: "not_ready",
                message,
                checks,
            }),
        )
    }
}
