//! Route rate limits (`[limits]` in config): [`BUDGETS`] names the limit of
//! every route, one row a route, and one layer ([`enforce`]) counts each
//! request against its route's [`Rules`] before the handler runs: within
//! the instance's allowance and leases on the shared Redis windows (a tenth
//! of a limit each, see [`cityhub_platform::ratelimit::Leases`]), so a
//! client far below its limit costs no Redis call, and one near it a script
//! call per lease, not a round trip a request.
//! Over a limit: 429 `rate_limited`, `Retry-After`, and
//! `cityhub_rate_limited_total{route}`; nothing else happens. A test walks
//! `/openapi.json` and fails for a route without a row, and docs/API.md's
//! "Budgets" table gives each row's limit and worst-case work.
//!
//! The seckill route is limited inside its own script instead (the same
//! rules, no second round trip; see `cityhub_core::seckill`).
//!
//! Subjects: `user` counts a valid session's user (a request without one is
//! not counted by user; the handler answers 401), `ip` the client IP (see
//! [`crate::extract::client_ip`]), `global` every request. None of them is
//! a budget a stranger can spend for someone else: a phone's own budgets
//! (codes sent, guesses) are kept by the login rules
//! (`cityhub_core::auth::guard`), which only a well-formed request reaches.
//! If Redis cannot be reached the request is let through (logged): the
//! routes behind a limit need Redis themselves and answer 503.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cityhub_core::config::LimitSettings;
use cityhub_core::UserId;
use cityhub_platform::ratelimit::{Decision, Rules, Subject};

use crate::error::ApiError;
use crate::extract::{bearer, client_key, request_client};
use crate::state::AppState;

/// The limits routes share, one line of `[limits]` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarded {
    LoginCode,
    Login,
    Payment,
    Follow,
    Reads,
    Claims,
    Probes,
    Admin,
    Account,
    Social,
    Notes,
    Likes,
    Feed,
    Callback,
    SignIn,
}

impl Guarded {
    /// Its name in keys, metrics and docs/API.md (a closed set).
    pub fn name(self) -> &'static str {
        match self {
            Guarded::LoginCode => "login_code",
            Guarded::Login => "login",
            Guarded::Payment => "payment",
            Guarded::Follow => "follow",
            Guarded::Reads => "reads",
            Guarded::Claims => "claims",
            Guarded::Probes => "probes",
            Guarded::Admin => "admin",
            Guarded::Account => "account",
            Guarded::Social => "social",
            Guarded::Notes => "notes",
            Guarded::Likes => "likes",
            Guarded::Feed => "feed",
            Guarded::Callback => "callback",
            Guarded::SignIn => "signin",
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
            Guarded::Probes => &limits.probes,
            Guarded::Admin => &limits.admin,
            Guarded::Account => &limits.account,
            Guarded::Social => &limits.social,
            Guarded::Notes => &limits.notes,
            Guarded::Likes => &limits.likes,
            Guarded::Feed => &limits.feed,
            Guarded::Callback => &limits.callback,
            Guarded::SignIn => &limits.signin,
        };
        Some(limits.in_force(rules)).filter(|r| !r.is_empty())
    }
}

/// What limits one route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// A shared line of `[limits]`, counted by [`enforce`].
    Shared(Guarded),
    /// `limits.seckill`, counted inside the seckill script.
    InScript,
}

impl Budget {
    /// Its name in docs/API.md's "Budgets" table.
    pub fn name(self) -> &'static str {
        match self {
            Budget::Shared(g) => g.name(),
            Budget::InScript => "seckill",
        }
    }
}

use Budget::{InScript, Shared};
use Guarded::*;

/// Every route's limit: (method, route template, budget).
pub const BUDGETS: &[(&str, &str, Budget)] = &[
    ("GET", "/healthz", Shared(Probes)),
    ("GET", "/serving", Shared(Probes)),
    ("GET", "/readyz", Shared(Probes)),
    ("POST", "/auth/code", Shared(LoginCode)),
    ("POST", "/auth/login", Shared(Login)),
    ("POST", "/auth/logout", Shared(Account)),
    ("GET", "/users/me", Shared(Account)),
    ("GET", "/orders", Shared(Account)),
    ("GET", "/orders/{id}", Shared(Account)),
    ("GET", "/users/me/vouchers", Shared(Account)),
    ("GET", "/users/me/sign", Shared(Account)),
    ("POST", "/users/me/sign", Shared(SignIn)),
    ("POST", "/orders/{id}/pay", Shared(Payment)),
    ("POST", "/payments/callback", Shared(Callback)),
    ("GET", "/shops", Shared(Reads)),
    ("GET", "/shops/{id}", Shared(Reads)),
    ("GET", "/shops/nearby", Shared(Reads)),
    ("GET", "/shop-types", Shared(Reads)),
    ("GET", "/shops/{id}/vouchers", Shared(Reads)),
    ("GET", "/shops/{id}/notes", Shared(Reads)),
    ("GET", "/vouchers/{id}", Shared(Reads)),
    ("GET", "/notes/hot", Shared(Reads)),
    ("GET", "/notes/{id}", Shared(Reads)),
    ("POST", "/vouchers/{id}/claim", Shared(Claims)),
    ("POST", "/vouchers/{id}/seckill", InScript),
    ("POST", "/notes", Shared(Notes)),
    ("PUT", "/notes/{id}/like", Shared(Likes)),
    ("GET", "/feed", Shared(Feed)),
    ("PUT", "/users/{id}/follow", Shared(Follow)),
    ("DELETE", "/users/{id}/follow", Shared(Follow)),
    ("PUT", "/users/{id}/block", Shared(Follow)),
    ("DELETE", "/users/{id}/block", Shared(Follow)),
    ("GET", "/users/{id}/followers", Shared(Social)),
    ("GET", "/users/{id}/followings", Shared(Social)),
    ("GET", "/users/{id}/counts", Shared(Social)),
    ("GET", "/users/{id}/common-follows", Shared(Social)),
    ("GET", "/users/{id}/following-status", Shared(Social)),
    ("GET", "/users/me/friends", Shared(Social)),
    ("GET", "/users/me/blocks", Shared(Social)),
    ("GET", "/users/me/recommendations", Shared(Social)),
    ("GET", "/admin/", Shared(Admin)),
    ("GET", "/admin/orders", Shared(Admin)),
    ("POST", "/admin/orders/{id}/close", Shared(Admin)),
    ("GET", "/admin/overview", Shared(Admin)),
    ("GET", "/admin/parked", Shared(Admin)),
    ("POST", "/admin/parked/{id}/replay", Shared(Admin)),
    ("GET", "/admin/reconcile/{voucher_id}", Shared(Admin)),
    ("POST", "/admin/reconcile/{voucher_id}", Shared(Admin)),
    ("GET", "/admin/sales", Shared(Admin)),
    ("GET", "/admin/sales/{voucher_id}", Shared(Admin)),
    ("POST", "/admin/shops", Shared(Admin)),
    ("PUT", "/admin/shops/{id}", Shared(Admin)),
    ("GET", "/admin/shops/{id}/uv", Shared(Admin)),
    ("POST", "/admin/vouchers", Shared(Admin)),
    ("POST", "/admin/vouchers/ordinary", Shared(Admin)),
    ("PUT", "/admin/vouchers/{id}", Shared(Admin)),
];

/// The budget of the route `method path` (a template), if it has a row.
pub fn budget(method: &Method, path: &str) -> Option<Budget> {
    static BY_ROUTE: std::sync::LazyLock<std::collections::HashMap<(&str, &str), Budget>> =
        std::sync::LazyLock::new(|| BUDGETS.iter().map(|&(m, p, b)| ((m, p), b)).collect());
    BY_ROUTE.get(&(method.as_str(), path)).copied()
}

/// Whom a rule counts a request against: the value in its key.
#[derive(Debug, Hash)]
enum Who {
    All,
    /// A client network (see [`crate::extract::client_net`]).
    Client(std::net::IpAddr),
    /// A request without connect info (none in service).
    Unknown,
    User(UserId),
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::All => f.write_str("all"),
            Who::Client(ip) => f.write_str(&client_key(*ip)),
            Who::Unknown => f.write_str("unknown"),
            Who::User(id) => write!(f, "{id}"),
        }
    }
}

/// Middleware: counts a request against its route's shared limit (nothing
/// to look up while limits are off).
pub async fn enforce(req: Request, next: Next) -> Response {
    let Some(state) = req.extensions().get::<AppState>().filter(|s| s.settings.limits.enabled).cloned() else {
        return next.run(req).await;
    };
    let route = req.extensions().get::<MatchedPath>().and_then(|p| budget(req.method(), p.as_str()));
    let Some(Budget::Shared(route)) = route else {
        return next.run(req).await;
    };
    let Some(rules) = route.rules(&state.settings.limits) else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let (mut counted, mut whose) = (Vec::with_capacity(2), Vec::with_capacity(2));
    for rule in rules.iter() {
        let who = match rule.by {
            Subject::Global => Some(Who::All),
            Subject::Ip => Some(request_client(&parts, &state).map_or(Who::Unknown, Who::Client)),
            Subject::User => match bearer(&parts) {
                Some(token) => state.auth.authenticate(token).await.ok().flatten().map(|s| Who::User(s.user_id)),
                None => None,
            },
        };
        if let Some(who) = who {
            counted.push((state.leases.id((route.name(), rule.by, &who)), rule.limit));
            whose.push((rule.by, who));
        }
    }
    let key_of = |i: usize| {
        let (by, who): &(Subject, Who) = &whose[i];
        state.kv.keys.rate_limit(route.name(), by.as_str(), &who.to_string())
    };
    match state.leases.admit(&state.kv, &counted, key_of).await {
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
