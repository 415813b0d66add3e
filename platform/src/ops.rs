//! The ops listener each binary serves apart from its public port (default
//! on loopback): `GET /metrics` (Prometheus text format, with the MySQL pool
//! and heap gauges sampled at each scrape) and `GET /healthz`: 200 `{"status":"ok"}`,
//! or 503 `{"status":"failing","jobs_down":[..]}` while a background job of
//! the process is down (see [`Health`]). The one `/metrics` handler of the
//! project.

use std::future::Future;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::MySqlPool;
use tokio::net::TcpListener;

use crate::jobs::Health;

#[derive(Clone)]
struct Ops {
    metrics: PrometheusHandle,
    db: MySqlPool,
    health: Health,
}

/// Serves the ops routes on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    metrics: PrometheusHandle,
    db: MySqlPool,
    health: Health,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new().route("/metrics", get(render)).route("/healthz", get(healthz)).with_state(Ops {
        metrics,
        db,
        health,
    });
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn render(State(ops): State<Ops>) -> impl IntoResponse {
    crate::db::record_pool(&ops.db);
    crate::alloc::record();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::metrics::render(&ops.metrics))
}

async fn healthz(State(ops): State<Ops>) -> impl IntoResponse {
    let down = ops.health.down();
    if down.is_empty() {
        (StatusCode::OK, Json(serde_json::json!({ "status": "ok" })))
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Json(serde_json::json!({ "status": "failing", "jobs_down": down })))
    }
}
