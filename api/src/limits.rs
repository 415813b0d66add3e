//! Route rate limits (`[limits]` in config): a route picks its limit with one
//! line, `.route_layer(limited(Guarded::Login))`, and the layer counts each
//! request against that route's [`Rules`] in Redis (one script call) before
//! the handler runs. Over a limit: 429 `rate_limited`, `Retry-After`, and
//! `cityhub_rate_limited_total{route}`; nothing else happens.
//!
//! The seckill route is limited inside its own script instead (the same
//! rules, no second round trip; see `cityhub_core::seckill`), so it is not here.
//!
//! Subjects: `user` counts a valid session's user (a request without one is
//! not counted by user; the handler answers 401), `ip` the client IP (see
//! [`crate::extract::client_ip`]), `global` every request. None of them is
//! a budget a stranger can spend for someone else: a phone's own budgets
//! (codes sent, guesses) are kept by the login rules
//! (`cityhub_core::auth::guard`), which only a well-formed request reaches.
//! If Redis cannot be reached the request is let through (logged): the
//! routes behind a limit need Redis themselves and answer 503.

use std::future::Future;
use std::pin::Pin;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cityhub_core::config::LimitSettings;
use cityhub_platform::ratelimit::{self, Decision, Rules, Subject};

use crate::error::ApiError;
use crate::extract::{bearer, request_client_ip};
use crate::state::AppState;

/// The routes with a limit of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarded {
    /// `POST /auth/code`.
    LoginCode,
    /// `POST /auth/login`.
    Login,
    /// `POST /orders/{id}/pay`.
    Payment,
    /// `PUT`/`DELETE /users/{id}/follow` and `/users/{id}/block`.
    Follow,
    /// The public shop and voucher reads.
    Reads,
    /// `POST /vouchers/{id}/claim`.
    Claims,
}

impl Guarded {
    /// The route's name in keys and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Guarded::LoginCode => "login_code",
            Guarded::Login => "login",
            Guarded::Payment => "payment",
            Guarded::Follow => "follow",
            Guarded::Reads => "reads",
            Guarded::Claims => "claims",
        }
    }

    /// Its rules (none when limits are off).
    pub fn rules(self, limits: &LimitSettings) -> Option<&Rules> {
        let rules = match self {
            Guarded::LoginCode => &limits.login_code,
            Guarded::Login => &limits.login,
            Guarded::Payment => &limits.payment,
            Guarded::Follow => &limits.follow,
            Guarded::Reads => &limits.reads,
            Guarded::Claims => &limits.claims,
        };
        Some(limits.in_force(rules)).filter(|r| !r.is_empty())
    }
}

type Enforce = fn(State<Guarded>, Request, Next) -> Pin<Box<dyn Future<Output = Response> + Send>>;

/// The layer that limits `route`.
pub fn limited(route: Guarded) -> axum::middleware::FromFnLayer<Enforce, Guarded, (State<Guarded>, Request)> {
    let enforce: Enforce = |s, r, n| Box::pin(enforce(s, r, n));
    axum::middleware::from_fn_with_state(route, enforce)
}

async fn enforce(State(route): State<Guarded>, req: Request, next: Next) -> Response {
    let Some(state) = req.extensions().get::<AppState>().cloned() else {
        return next.run(req).await;
    };
    let Some(rules) = route.rules(&state.settings.limits) else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let mut counted = Vec::new();
    for rule in rules.iter() {
        let value = match rule.by {
            Subject::Global => Some("all".to_owned()),
            Subject::Ip => Some(request_client_ip(&parts, &state)),
            Subject::User => match bearer(&parts) {
                Some(token) => state.auth.authenticate(token).await.ok().flatten().map(|s| s.user_id.to_string()),
                None => None,
            },
        };
        if let Some(value) = value {
            counted.push((state.kv.keys.rate_limit(route.name(), rule.by.as_str(), &value), rule.limit));
        }
    }
    match ratelimit::check(&state.kv, &counted).await {
        Ok(Decision::Pass) => next.run(Request::from_parts(parts, body)).await,
        Ok(Decision::Refuse { retry_after }) => {
            metrics::counter!(cityhub_core::metrics::RATE_LIMITED, "route" => route.name()).increment(1);
            ApiError::TooManyRequests {
                code: "rate_limited",
                message: "too many requests; retry later".into(),
                retry_after,
            }
            .into_response()
        }
        Err(err) => {
            tracing::warn!(route = route.name(), error = %err, "rate limit not checked: Redis unavailable");
            next.run(Request::from_parts(parts, body)).await
        }
    }
}
