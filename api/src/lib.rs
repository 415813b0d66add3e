//! CityHub's HTTP API: login, admin voucher creation, the seckill endpoint and
//! order reads. Handlers are thin: they parse and validate input, call the
//! rules in `cityhub_core`, and map the outcome to JSON.
//!
//! Every route is documented: the OpenAPI document is served at
//! `/openapi.json` (Swagger UI at `/docs`) and is built from the same
//! declarations as the router.
#![forbid(unsafe_code)]

pub mod error;
pub mod extract;
mod http_metrics;
pub mod limits;
pub mod routes;
mod serve;
pub mod state;

use std::future::Future;

use axum::http::{HeaderName, Request};
use axum::Router;
use tokio::net::TcpListener;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_swagger_ui::SwaggerUi;

pub use error::ApiError;
pub use state::AppState;

/// The header that carries a request's id, in and out.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A client's request id is kept only if it is 1 to 64 characters of
/// `[A-Za-z0-9._-]`; anything else is replaced by a generated one, so a
/// client cannot bloat order messages (and the batches carrying them) or logs.
pub fn acceptable_request_id(raw: &[u8]) -> bool {
    (1..=64).contains(&raw.len()) && raw.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn drop_unacceptable_request_id<B>(mut req: Request<B>) -> Request<B> {
    if req.headers().get(REQUEST_ID).is_some_and(|v| !acceptable_request_id(v.as_bytes())) {
        req.headers_mut().remove(REQUEST_ID);
    }
    req
}

/// The largest request body any route reads (every body of this API is a
/// small JSON object); a larger one is refused before it is parsed.
pub const BODY_LIMIT: usize = 16 * 1024;

/// What one request may cost an instance: a place among `http.max_in_flight`
/// and `http.request_timeout_ms` of work.
#[derive(Clone)]
struct Bounds {
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    timeout: std::time::Duration,
}

impl Bounds {
    fn new(http: &cityhub_platform::config::HttpSettings) -> Self {
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
async fn bounded(
    axum::extract::State(bounds): axum::extract::State<Bounds>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if matches!(req.uri().path(), "/healthz" | "/readyz") {
        return next.run(req).await;
    }
    let Ok(_place) = bounds.in_flight.try_acquire() else {
        return ApiError::Unavailable { code: "overloaded", message: "too many requests in flight; retry".into() }
            .into_response();
    };
    let path = req.extensions().get::<axum::extract::MatchedPath>().map(|p| p.as_str().to_owned());
    if path.as_deref() == Some(routes::SECKILL) {
        return next.run(req).await;
    }
    match tokio::time::timeout(bounds.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::Unavailable { code: "request_timeout", message: "the request took too long; retry".into() }
            .into_response(),
    }
}

/// The OpenAPI document of every route.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes::router().split_for_parts().1
}

/// The whole router with its middleware.
pub fn router(state: AppState) -> Router {
    let (api, doc) = routes::router().split_for_parts();
    api.merge(SwaggerUi::new("/docs").url("/openapi.json", doc))
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(axum::middleware::from_fn(limits::enforce))
        .layer(axum::middleware::from_fn_with_state(Bounds::new(&state.settings.http), bounded))
        .layer(axum::middleware::from_fn(http_metrics::track))
        .layer(axum::Extension(state.clone()))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
        .layer(
            tower::ServiceBuilder::new()
                .map_request(drop_unacceptable_request_id)
                .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
                .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                    let id = req.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
                    tracing::info_span!("http", method = %req.method(), path = %req.uri().path(), request_id = %id)
                }))
                .layer(PropagateRequestIdLayer::new(REQUEST_ID)),
        )
}

/// Serves `state` on `listener` until `shutdown` resolves, then drains
/// in-flight requests.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "cityhub-api listening");
    // The simulated provider calls this API back unless told otherwise.
    state.payments.provider().default_target(format!("http://{addr}/payments/callback"));
    state.announce();
    let http = state.settings.http.clone();
    serve::serve(listener, router(state), &http, shutdown).await
}
