//! One module per resource, each with its own `router()`.

mod auth;
mod health;
mod orders;
mod vouchers;

use axum::Router;

use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(auth::router())
        .merge(vouchers::router())
        .merge(orders::router())
        .merge(health::router())
}
