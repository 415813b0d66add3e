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
        .layer(axum::middleware::from_fn_with_state(serve::Bounds::new(&state.settings.http), serve::bounded))
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

/// Serves `state` on `listener` until `shutdown` resolves; then drains:
/// `GET /serving` answers 503 `draining` while requests are still served
/// for `http.drain_ms` (the balancer takes the instance out of its pool),
/// then no connection is accepted and requests in flight finish.
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
    let draining = state.clone();
    let drained = async move {
        shutdown.await;
        draining.start_draining();
        let drain = draining.settings.http.drain_ms;
        tracing::info!(drain_ms = drain.as_millis() as u64, "draining: still serving until the balancer lets go");
        tokio::time::sleep(drain).await;
    };
    serve::serve(listener, router(state), &http, drained).await
}
