//! Request counts and latency by method, route template and status.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use cityhub_platform::metrics as m;

/// Middleware: records one request in `cityhub_http_requests_total` and
/// `cityhub_http_request_duration_seconds`. Unmatched paths share one label
/// so made-up URLs cannot blow up the label set.
pub async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_owned();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!(m::HTTP_REQUESTS, &labels).increment(1);
    metrics::histogram!(m::HTTP_DURATION, &labels).record(started.elapsed().as_secs_f64());
    response
}
