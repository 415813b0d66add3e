//! The listener: HTTP/1 connections served within bounds no client can
//! stretch (`[http]` in config). A connection that sends no whole request
//! head within `header_timeout_ms` is closed, whether it sits idle between
//! requests or trickles its head (slow or half-open clients); a head over
//! `max_header_bytes` gets 431; at most `max_connections` are open at once
//! (more wait in the kernel's backlog, costing this process nothing). What
//! a request may cost once read is bounded by [`bounded`], a layer of the
//! router: a place among `http.max_in_flight` and `http.request_timeout_ms`
//! of work (bodies are capped by the router's body limit).
//!
//! Shutdown is graceful: once `shutdown` resolves no connection is accepted,
//! idle ones close, and requests in flight finish.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use cityhub_platform::config::HttpSettings;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// Serves `app` on `listener` until `shutdown`, then drains.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    http: &HttpSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(http.max_connections));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(http.header_timeout_ms).max_buf_size(http.max_header_bytes);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, or the peer gave up: wait a
                    // little rather than spin, then accept again.
                    tracing::debug!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(remote));
            let app = app.clone();
            async move {
                Ok::<_, Infallible>(app.oneshot(req.map(axum::body::Body::new)).await.unwrap_or_else(|e| match e {}))
            }
        });
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::trace!(error = %err, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// What one request may cost an instance: a place among `http.max_in_flight`
/// and `http.request_timeout_ms` of work.
#[derive(Clone)]
pub(crate) struct Bounds {
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    timeout: std::time::Duration,
}

impl Bounds {
    pub(crate) fn new(http: &cityhub_platform::config::HttpSettings) -> Self {
        Self {
            in_flight: std::sync::Arc::new(tokio::sync::Semaphore::new(http.max_in_flight)),
            timeout: http.request_timeout_ms,
        }
    }
}

/// Middleware: 503 `overloaded` past the in-flight cap (at once, without
/// queueing), 503 `request_timeout` past the time bound. The health checks
/// are not counted: a balancer must not take every instance out of its pool
/// because all are busy. The seckill route is not cut short: it bounds
/// itself (one script call, then a send bounded by `mq.send_timeout_ms`),
/// and a 202 cut off after its reservation would be an order its shopper
/// was never told about.
pub(crate) async fn bounded(
    axum::extract::State(bounds): axum::extract::State<Bounds>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if matches!(req.uri().path(), "/healthz" | "/readyz") {
        return next.run(req).await;
    }
    let Ok(_place) = bounds.in_flight.try_acquire() else {
        return crate::ApiError::Unavailable {
            code: "overloaded",
            message: "too many requests in flight; retry".into(),
        }
        .into_response();
    };
    let seckill =
        req.extensions().get::<axum::extract::MatchedPath>().is_some_and(|p| p.as_str() == crate::routes::SECKILL);
    if seckill {
        return next.run(req).await;
    }
    match tokio::time::timeout(bounds.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            crate::ApiError::Unavailable { code: "request_timeout", message: "the request took too long; retry".into() }
                .into_response()
        }
    }
}
