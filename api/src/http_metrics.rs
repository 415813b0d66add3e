//! Request counts and latency by method, route template and status.
//!
//! Every label comes from a closed set, whatever a client sends: the
//! method is one of the standard ones or `other`, the route is the matched
//! template or `unmatched`, the status a number the server chose. So no
//! request can add a series (the label set is bounded by the router).

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use cityhub_platform::metrics as m;

/// Middleware: records one request in `cityhub_http_requests_total` and
/// `cityhub_http_request_duration_seconds`.
pub async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(req.method());
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_owned();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let labels = [("method", method.to_owned()), ("route", route), ("status", status)];
    metrics::counter!(m::HTTP_REQUESTS, &labels).increment(1);
    metrics::histogram!(m::HTTP_DURATION, &labels).record(started.elapsed().as_secs_f64());
    response
}

/// The method's label: a standard method's name, else `other`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::from_bytes(b"PURGE").unwrap()), "other");
        assert_eq!(method_label(&Method::from_bytes("X".repeat(1000).as_bytes()).unwrap()), "other");
    }
}
