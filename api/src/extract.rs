//! Extractors that turn a request into validated inputs or a rejection in the
//! API's JSON error shape: [`ValidJson`], [`ValidQuery`], [`PathId`],
//! [`CurrentUser`], [`MaybeUser`], [`Admin`] and [`ClientIp`]; and
//! [`cursor`], the one reading of a page cursor.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use cityhub_core::auth::operators::is_operator_key;
use cityhub_core::auth::Session;
use serde::de::DeserializeOwned;
use validator::Validate;

use crate::error::ApiError;
use crate::state::AppState;

/// A JSON body that parsed and passed its `validator` rules.
/// Malformed JSON or a wrong content type is 400; wrong types or rule
/// violations are 422.
pub struct ValidJson<T>(pub T);

impl<S, T> FromRequest<S> for ValidJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) =
            axum::Json::<T>::from_request(req, state).await.map_err(|rejection| match rejection {
                JsonRejection::JsonDataError(e) => ApiError::unprocessable("invalid_body", e.body_text()),
                other => ApiError::bad_request("invalid_body", other.body_text()),
            })?;
        value.validate()?;
        Ok(Self(value))
    }
}

/// A query string that parsed and passed its `validator` rules: unknown or
/// malformed parameters are 400, rule violations 422.
pub struct ValidQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ValidQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) = axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
        value.validate()?;
        Ok(Self(value))
    }
}

/// A page cursor: the last id of the previous page, as decimal digits.
pub fn cursor<Id: From<u64>>(raw: Option<&str>) -> Result<Option<Id>, ApiError> {
    match raw {
        None => Ok(None),
        Some(raw) => match raw.parse::<u64>() {
            Ok(id) if id > 0 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(Id::from(id))),
            _ => Err(ApiError::bad_request("invalid_query", format!("cursor {raw:?} is not an id"))),
        },
    }
}

/// A positive 64-bit id from the route's single path parameter, typed as
/// the route says (`PathId<OrderId>`); anything else is 400.
pub struct PathId<Id>(pub Id);

impl<S: Send + Sync, Id: From<u64>> FromRequestParts<S> for PathId<Id> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request("invalid_path", e.body_text()))?;
        match raw.parse::<u64>() {
            Ok(id) if id > 0 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(Self(Id::from(id))),
            _ => Err(ApiError::bad_request("invalid_path", format!("{raw:?} is not a valid id"))),
        }
    }
}

/// The client, as limits and lockouts count it (see [`client_key`];
/// `unknown` when the server was not started with connect info, as in
/// router-level tests).
pub struct ClientIp(pub String);

impl<S> FromRequestParts<S> for ClientIp
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(request_client_ip(parts, &AppState::from_ref(state))))
    }
}

/// The client key of a request (see [`client_ip`] and [`client_key`]);
/// `unknown` without connect info.
pub fn request_client_ip(parts: &Parts, state: &AppState) -> String {
    request_client(parts, state).map_or_else(|| "unknown".to_owned(), client_key)
}

/// The client of a request as [`client_net`] counts it; `None` without
/// connect info.
pub fn request_client(parts: &Parts, state: &AppState) -> Option<std::net::IpAddr> {
    let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?;
    let forwarded = parts.headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    Some(client_net(client_ip(peer.0.ip(), forwarded, &state.trusted_proxies)))
}

/// What counts as one client: an IPv4 address, or an IPv6 address's /64
/// (one host or home network is given a whole /64, so counting single IPv6
/// addresses would let a client rotate past every limit), its last 64 bits
/// zero. An IPv4-mapped IPv6 address counts as its IPv4 address.
pub fn client_net(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V4(_) => ip,
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.into(),
            None => std::net::Ipv6Addr::from_bits(v6.to_bits() & !u128::from(u64::MAX)).into(),
        },
    }
}

/// [`client_net`] as text: `203.0.113.7`, or `2001:db8:1:2::/64`.
pub fn client_key(ip: std::net::IpAddr) -> String {
    match client_net(ip) {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(net) => format!("{net}/64"),
    }
}

/// The client: the socket's peer, unless the peer is a trusted proxy; then
/// the nearest address of `X-Forwarded-For` that is not a trusted proxy,
/// read from the right (each proxy appends the address it saw, so only the
/// entries our proxies added can be believed). A malformed entry stops the
/// walk at the last address believed.
pub fn client_ip<'a>(
    peer: std::net::IpAddr,
    forwarded: impl Iterator<Item = &'a str>,
    trusted: &[std::net::IpAddr],
) -> std::net::IpAddr {
    let hops: Vec<&str> = forwarded.flat_map(|v| v.split(',')).map(str::trim).collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        if !trusted.contains(&client) {
            break;
        }
        match hop.parse() {
            Ok(ip) => client = ip,
            Err(_) => break,
        }
    }
    client
}

/// The token of `Authorization: Bearer <token>`, if the header is one.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The logged-in user, from `Authorization: Bearer <token>`; 401 otherwise.
pub struct CurrentUser(pub Session);

impl<S> FromRequestParts<S> for CurrentUser
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(ApiError::Unauthorized)?;
        session(&AppState::from_ref(state), parts, token).await.map(Self)
    }
}

/// The bearer token itself (to log out with); 401 when there is none.
pub struct Token(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Token {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        bearer(parts).map(|t| Self(t.to_owned())).ok_or(ApiError::Unauthorized)
    }
}

/// The logged-in user if the request carries a token; a token that is not
/// valid is still 401 (the client should know), none at all is anonymous.
pub struct MaybeUser(pub Option<Session>);

impl<S> FromRequestParts<S> for MaybeUser
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if parts.headers.get(AUTHORIZATION).is_none() {
            return Ok(Self(None));
        }
        let token = bearer(parts).ok_or(ApiError::Unauthorized)?;
        session(&AppState::from_ref(state), parts, token).await.map(|s| Self(Some(s)))
    }
}

/// The session behind `token`; 401 when there is none (see [`checked`]).
async fn session(state: &AppState, parts: &Parts, token: &str) -> Result<Session, ApiError> {
    refuse_failing_client(state, parts)?;
    let found = state.auth.authenticate(token).await?;
    checked(state, parts, found)
}

/// A client whose credentials failed too often this second
/// (`limits.unauthorized_per_sec`) gets 429 before any lookup.
fn refuse_failing_client(state: &AppState, parts: &Parts) -> Result<(), ApiError> {
    let Some(failures) = &state.failed_auth else { return Ok(()) };
    match failures.refused(request_client(parts, state)) {
        None => Ok(()),
        Some(retry_after) => {
            metrics::counter!(cityhub_core::metrics::RATE_LIMITED, "route" => "unauthorized").increment(1);
            Err(ApiError::TooManyRequests {
                code: "rate_limited",
                message: "too many requests with invalid credentials; retry later".into(),
                retry_after,
            })
        }
    }
}

/// `found`, or 401 counted against the client.
fn checked<T>(state: &AppState, parts: &Parts, found: Option<T>) -> Result<T, ApiError> {
    found.ok_or_else(|| {
        if let Some(failures) = &state.failed_auth {
            failures.hit(request_client(parts, state));
        }
        ApiError::Unauthorized
    })
}

/// An operator: an operator key (`cityhub admin key create`), the only
/// credential of the admin routes; no phone login obtains one. No valid
/// credential is 401; a shopper's session is 403.
pub struct Admin;

impl<S> FromRequestParts<S> for Admin
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(ApiError::Unauthorized)?;
        let state = AppState::from_ref(state);
        if is_operator_key(token) {
            refuse_failing_client(&state, parts)?;
            return checked(&state, parts, state.auth.operator(token).await?.then_some(Self));
        }
        session(&state, parts, token).await?;
        Err(ApiError::Forbidden)
    }
}

#[cfg(test)]
mod tests {
    use super::{client_ip, client_key};

    #[test]
    fn an_ipv6_client_is_its_64_and_an_ipv4_client_its_address() {
        let key = |s: &str| client_key(s.parse().unwrap());
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:2:ffff:ffff:ffff:ffff"), key("2001:db8:1:2::7"));
        assert_ne!(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
        assert_eq!(key("198.51.100.9"), "198.51.100.9");
        assert_eq!(key("::ffff:198.51.100.9"), "198.51.100.9");
    }

    #[test]
    fn forwarded_addresses_count_only_behind_trusted_proxies() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let proxy = [ip("10.0.0.1")];
        // Straight from the client: the header is whatever the client wrote.
        assert_eq!(client_ip(ip("198.51.100.9"), ["1.2.3.4"].into_iter(), &proxy), ip("198.51.100.9"));
        // Through our proxy: the address it appended.
        assert_eq!(client_ip(ip("10.0.0.1"), ["1.2.3.4, 203.0.113.7"].into_iter(), &proxy), ip("203.0.113.7"));
        // Through two of ours: past both.
        let two = [ip("10.0.0.1"), ip("10.0.0.2")];
        assert_eq!(client_ip(ip("10.0.0.1"), ["203.0.113.7", "10.0.0.2"].into_iter(), &two), ip("203.0.113.7"));
        // Nothing forwarded, or garbage: the proxy itself.
        assert_eq!(client_ip(ip("10.0.0.1"), std::iter::empty(), &proxy), ip("10.0.0.1"));
        assert_eq!(client_ip(ip("10.0.0.1"), ["not-an-ip"].into_iter(), &proxy), ip("10.0.0.1"));
        // No trusted proxy configured: never the header.
        assert_eq!(client_ip(ip("10.0.0.1"), ["203.0.113.7"].into_iter(), &[]), ip("10.0.0.1"));
    }
}
