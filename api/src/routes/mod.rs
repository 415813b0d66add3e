//! One module per resource, each with its own `router()`. Every route is
//! registered through `utoipa_axum::routes!`, so the OpenAPI document and
//! the router come from the same declarations.

mod admin;
mod auth;
mod console;
pub(crate) mod health;
mod notes;
mod orders;
mod payments;
mod shops;
mod signin;
mod social;
mod vouchers;

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;

use crate::error::ErrorBody;
use crate::state::AppState;

/// The seckill route's template (it bounds its own time; see `crate::bounded`).
pub(crate) const SECKILL: &str = "/vouchers/{id}/seckill";

#[derive(OpenApi)]
#[openapi(
    info(title = "CityHub API", description = "Flash-sale coupons: login, shops, vouchers, seckill, orders, payments."),
    components(schemas(ErrorBody)),
    modifiers(&BearerAuth),
    tags(
        (name = "auth", description = "Phone-code login"),
        (name = "vouchers", description = "Seckill vouchers"),
        (name = "shops", description = "Shops, nearby search and shop types"),
        (name = "social", description = "Follows, blocks, lists, friends and recommendations"),
        (name = "sign-in", description = "Daily sign-in and streaks"),
        (name = "orders", description = "The caller's orders"),
        (name = "payments", description = "Paying orders and the provider's callback"),
        (name = "admin", description = "The sale console and its figures, closing orders, parked messages, reconciling sales"),
        (name = "operations", description = "Health, readiness, metrics"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every documented route, with the document they make.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(auth::router())
        .merge(vouchers::router())
        .merge(shops::router())
        .merge(social::router())
        .merge(notes::router())
        .merge(signin::router())
        .merge(orders::router())
        .merge(payments::router())
        .merge(admin::router())
        .merge(console::router())
        .merge(health::router())
}
