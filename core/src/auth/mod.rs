//! Phone-code login and bearer-token sessions.
//!
//! A login code lives in Redis for `code_ttl_secs` and is consumed by the
//! first login attempt, right or wrong. Guessing is bounded across codes:
//! code requests and wrong codes are counted per phone and per client IP
//! (`login_guard.lua`), and a phone or IP over its limit is locked out of
//! both for `lockout_secs`, so "request a code, guess, repeat" stops after a
//! handful of tries instead of running until it hits.
//!
//! A session is JSON in Redis under the SHA-256 of its token (never the token
//! itself); its TTL is renewed on every use (sliding expiry). Each instance
//! serves a session it read from memory for `session_cache_ms`; a logout or
//! a role change tells every instance to drop it at once (Redis pub/sub, the
//! `sessions` channel of `cityhub_platform::cache`), and the cache's TTL
//! bounds a lost message. Users are created on first login; admins are made
//! by `cityhub admin grant`, never through the API.

use std::time::Duration;

use rand::Rng;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::MySqlPool;

pub mod guard;

pub use guard::{Strike, StrikeLimits};

use crate::config::AuthSettings;
use crate::kv::{CityKeys, Kv};

/// A user's role; admin routes require [`Role::Admin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Shopper,
    Admin,
}

impl Role {
    /// The `users.role` column value.
    pub fn as_column(self) -> &'static str {
        match self {
            Role::Shopper => "shopper",
            Role::Admin => "admin",
        }
    }

    /// The `users.role` column; anything unknown is treated as a shopper.
    fn from_column(raw: &str) -> Self {
        if raw == "admin" {
            Role::Admin
        } else {
            Role::Shopper
        }
    }
}

/// Who is calling, as stored behind a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    pub user_id: u64,
    pub role: Role,
}

/// A phone number: an optional `+` and 6 to 15 digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone(String);

impl Phone {
    pub fn parse(raw: &str) -> Option<Self> {
        let digits = raw.strip_prefix('+').unwrap_or(raw);
        let ok = (6..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A six-digit login code.
pub fn is_login_code(raw: &str) -> bool {
    raw.len() == 6 && raw.bytes().all(|b| b.is_ascii_digit())
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the code is wrong or expired")]
    InvalidCode,
    #[error("too many login attempts; locked out for another {} s", .0.as_secs().max(1))]
    LockedOut(Duration),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("corrupt session record")]
    CorruptSession(#[from] serde_json::Error),
    #[error("no user has this phone")]
    UnknownUser,
}

/// The name under which session invalidations travel between instances.
pub const SESSIONS: &str = "sessions";

/// A freshly issued token.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub session: Session,
    pub expires_in: Duration,
}

#[derive(Clone)]
pub struct Auth {
    db: MySqlPool,
    kv: Kv,
    token_ttl: Duration,
    code_ttl: Duration,
    code_requests: StrikeLimits,
    wrong_codes: StrikeLimits,
    /// Sessions seen in the last `session_cache_ms`, by token hash, so a
    /// shopper's burst of requests costs one Redis lookup, not one per request.
    sessions: moka::future::Cache<String, Session>,
}

impl Auth {
    pub fn new(db: MySqlPool, kv: Kv, settings: &AuthSettings) -> Self {
        let limits = |per_phone, per_ip| StrikeLimits {
            per_phone,
            per_ip,
            window: Duration::from_secs(settings.strike_window_secs),
            lockout: Duration::from_secs(settings.lockout_secs),
        };
        Self {
            code_requests: limits(settings.code_requests_per_phone, settings.code_requests_per_ip),
            wrong_codes: limits(settings.wrong_codes_per_phone, settings.wrong_codes_per_ip),
            db,
            kv,
            token_ttl: Duration::from_secs(settings.token_ttl_secs),
            code_ttl: Duration::from_secs(settings.code_ttl_secs),
            sessions: moka::future::Cache::builder()
                .max_capacity(1_000_000)
                .time_to_live(Duration::from_millis(settings.session_cache_ms))
                .build(),
        }
    }

    pub fn code_ttl(&self) -> Duration {
        self.code_ttl
    }

    /// Creates and stores a login code for `phone`, asked from `ip`, unless
    /// the phone or the IP is locked out (this request counts towards that).
    /// Delivery is the caller's business (development logs it; there is no
    /// SMS gateway).
    pub async fn send_code(&self, phone: &Phone, ip: &str) -> Result<String, AuthError> {
        self.strike(phone, ip, Strike::CodeRequest, true).await?;
        let code = format!("{:06}", rand::rng().random_range(0..1_000_000));
        let _: () =
            self.kv.conn().set_ex(self.kv.keys.login_code(phone.as_str()), &code, self.code_ttl.as_secs()).await?;
        Ok(code)
    }

    /// Unless the phone or `ip` is locked out, consumes the code and, if it
    /// matched, logs the user in (creating them on first login); a wrong code
    /// counts a strike against both.
    pub async fn login(&self, phone: &Phone, code: &str, ip: &str) -> Result<Issued, AuthError> {
        self.strike(phone, ip, Strike::WrongCode, false).await?;
        let stored: Option<String> = self.kv.conn().get_del(self.kv.keys.login_code(phone.as_str())).await?;
        if stored.as_deref() != Some(code) {
            self.strike(phone, ip, Strike::WrongCode, true).await?;
            return Err(AuthError::InvalidCode);
        }
        let session = self.register(phone).await?;
        self.issue(session).await
    }

    /// Checks the lockouts of `phone` and `ip`, counting one `kind` strike when `add`.
    async fn strike(&self, phone: &Phone, ip: &str, kind: Strike, add: bool) -> Result<(), AuthError> {
        let limits = match kind {
            Strike::CodeRequest => &self.code_requests,
            Strike::WrongCode => &self.wrong_codes,
        };
        match guard::login_guard(&self.kv, phone.as_str(), ip, kind, add, limits).await? {
            Some(left) => Err(AuthError::LockedOut(left)),
            None => Ok(()),
        }
    }

    /// Finds or creates the user with this phone.
    pub async fn register(&self, phone: &Phone) -> Result<Session, AuthError> {
        let sessions = self.register_many(std::slice::from_ref(phone)).await?;
        Ok(sessions[0])
    }

    /// Finds or creates a user for every phone (in chunks of 1000); the
    /// result follows `phones`' order.
    pub async fn register_many(&self, phones: &[Phone]) -> Result<Vec<Session>, AuthError> {
        let mut sessions = Vec::with_capacity(phones.len());
        for chunk in phones.chunks(1000) {
            let mut insert = sqlx::QueryBuilder::<sqlx::MySql>::new("INSERT IGNORE INTO users (phone, nick_name) ");
            insert.push_values(chunk, |mut row, phone| {
                let digits = phone.as_str();
                row.push_bind(digits).push_bind(format!("user_{}", &digits[digits.len().saturating_sub(4)..]));
            });
            insert.build().execute(&self.db).await?;
            let mut select =
                sqlx::QueryBuilder::<sqlx::MySql>::new("SELECT phone, id, role FROM users WHERE phone IN (");
            let mut list = select.separated(", ");
            for phone in chunk {
                list.push_bind(phone.as_str());
            }
            select.push(")");
            let rows: Vec<(String, u64, String)> = select.build_query_as().fetch_all(&self.db).await?;
            let by_phone: std::collections::HashMap<String, Session> = rows
                .into_iter()
                .map(|(phone, user_id, role)| (phone, Session { user_id, role: Role::from_column(&role) }))
                .collect();
            sessions.extend(chunk.iter().map(|phone| by_phone[phone.as_str()]));
        }
        Ok(sessions)
    }

    /// Finds or creates a user for every phone and issues each a token, in
    /// bulk (for load tests and demos); the result follows `phones`' order.
    pub async fn issue_many(&self, phones: &[Phone]) -> Result<Vec<Issued>, AuthError> {
        let mut issued = Vec::with_capacity(phones.len());
        for chunk in self.register_many(phones).await?.chunks(1000) {
            let mut pipe = redis::pipe();
            for &session in chunk {
                let token = new_token();
                self.queue_session(&mut pipe, &token_hash(&token), &session)?;
                issued.push(Issued { token, session, expires_in: self.token_ttl });
            }
            let _: () = pipe.query_async(&mut self.kv.conn()).await?;
        }
        Ok(issued)
    }

    /// Issues a new bearer token for `session`.
    pub async fn issue(&self, session: Session) -> Result<Issued, AuthError> {
        let token = new_token();
        let mut pipe = redis::pipe();
        self.queue_session(&mut pipe, &token_hash(&token), &session)?;
        let _: () = pipe.query_async(&mut self.kv.conn()).await?;
        Ok(Issued { token, session, expires_in: self.token_ttl })
    }

    /// Queues storing a session and listing it among its user's sessions.
    fn queue_session(&self, pipe: &mut redis::Pipeline, hash: &str, session: &Session) -> Result<(), AuthError> {
        let ttl = self.token_ttl.as_secs();
        let listed = self.kv.keys.user_sessions(session.user_id);
        pipe.set_ex(self.kv.keys.session(hash), serde_json::to_string(session)?, ttl).ignore();
        pipe.sadd(&listed, hash).ignore().expire(&listed, ttl as i64).ignore();
        Ok(())
    }

    /// An administrator's token for operator tools (the CLI): finds or
    /// creates the user with `phone`, makes them an admin, issues a token.
    pub async fn operator(&self, phone: &Phone) -> Result<Issued, AuthError> {
        self.register(phone).await?;
        let session = self.set_role(phone, Role::Admin).await?;
        self.issue(session).await
    }

    /// Ends the session behind `token` everywhere; `false` if there was none.
    pub async fn logout(&self, token: &str) -> Result<bool, AuthError> {
        let hash = token_hash(token);
        let raw: Option<String> = self.kv.conn().get_del(self.kv.keys.session(&hash)).await?;
        let Some(raw) = raw else { return Ok(false) };
        let session: Session = serde_json::from_str(&raw)?;
        let _: () = self.kv.conn().srem(self.kv.keys.user_sessions(session.user_id), &hash).await?;
        self.forget_everywhere(&hash).await?;
        Ok(true)
    }

    /// Gives the user with `phone` `role`, on their live sessions too (at
    /// once on every instance); the operator's command, not an API route.
    pub async fn set_role(&self, phone: &Phone, role: Role) -> Result<Session, AuthError> {
        let done = sqlx::query("UPDATE users SET role = ? WHERE phone = ?")
            .bind(role.as_column())
            .bind(phone.as_str())
            .execute(&self.db)
            .await?;
        let user_id: Option<u64> = sqlx::query_scalar("SELECT id FROM users WHERE phone = ?")
            .bind(phone.as_str())
            .fetch_optional(&self.db)
            .await?;
        let user_id = user_id.ok_or(AuthError::UnknownUser)?;
        let session = Session { user_id, role };
        let listed = self.kv.keys.user_sessions(user_id);
        let hashes: Vec<String> = self.kv.conn().smembers(&listed).await?;
        for hash in hashes {
            // KEEPTTL with XX: rewrite a live session in place, never revive an expired one.
            let rewritten: Option<String> = redis::cmd("SET")
                .arg(self.kv.keys.session(&hash))
                .arg(serde_json::to_string(&session)?)
                .arg("XX")
                .arg("KEEPTTL")
                .query_async(&mut self.kv.conn())
                .await?;
            if rewritten.is_none() {
                let _: () = self.kv.conn().srem(&listed, &hash).await?;
            }
            self.forget_everywhere(&hash).await?;
        }
        tracing::info!(user_id, role = role.as_column(), changed = done.rows_affected() > 0, "role set");
        Ok(session)
    }

    /// Drops a session from this instance's memory and tells every other to.
    async fn forget_everywhere(&self, hash: &str) -> Result<(), AuthError> {
        self.sessions.invalidate(hash).await;
        cityhub_platform::cache::publish_invalidation(&self.kv, SESSIONS, hash).await?;
        Ok(())
    }

    /// Drops a session (by token hash) from this instance's memory, or every
    /// session (`None`, after missed invalidations).
    pub async fn forget(&self, hash: Option<String>) {
        match hash {
            Some(hash) => self.sessions.invalidate(&hash).await,
            None => self.sessions.invalidate_all(),
        }
    }

    /// The session behind `token`, renewing its TTL; `None` if unknown or
    /// expired. A session found within the last `session_cache_ms` is served
    /// from memory (its TTL was renewed then).
    pub async fn authenticate(&self, token: &str) -> Result<Option<Session>, AuthError> {
        if token.is_empty() || token.len() > 128 {
            return Ok(None);
        }
        let hash = token_hash(token);
        if let Some(session) = self.sessions.get(&hash).await {
            return Ok(Some(session));
        }
        let raw: Option<String> =
            self.kv.conn().get_ex(self.kv.keys.session(&hash), redis::Expiry::EX(self.token_ttl.as_secs())).await?;
        let session: Option<Session> = raw.map(|r| serde_json::from_str(&r)).transpose()?;
        if let Some(session) = session {
            self.sessions.insert(hash, session).await;
        }
        Ok(session)
    }
}

/// A fresh bearer token: 24 random bytes, hex.
fn new_token() -> String {
    hex::encode(rand::random::<[u8; 24]>())
}

/// What Redis and the caches hold for a token: its SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones_are_digits_with_an_optional_plus() {
        assert!(Phone::parse("13800138000").is_some());
        assert!(Phone::parse("+4915112345678").is_some());
        for bad in ["", "12345", "1380013800a", "+", "1234567890123456", "138 0013 8000"] {
            assert!(Phone::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn login_codes_are_six_digits() {
        assert!(is_login_code("012345"));
        assert!(!is_login_code("12345"));
        assert!(!is_login_code("12345x"));
    }
}
