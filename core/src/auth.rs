//! Phone-code login and bearer-token sessions.
//!
//! A login code lives in Redis for `code_ttl_secs` and is consumed by the
//! first login attempt, right or wrong, so codes cannot be guessed one try at
//! a time. A session is JSON in Redis under its token; its TTL is renewed on
//! every use (sliding expiry). Users are created on first login.

use std::time::Duration;

use rand::Rng;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::config::AuthSettings;
use crate::kv::Kv;

/// A user's role; admin routes require [`Role::Admin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Shopper,
    Admin,
}

impl Role {
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
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("corrupt session record")]
    CorruptSession(#[from] serde_json::Error),
}

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
    /// Sessions seen in the last `session_cache_ms`, so a shopper's burst of
    /// requests costs one Redis lookup, not one per request.
    sessions: moka::future::Cache<String, Session>,
}

impl Auth {
    pub fn new(db: MySqlPool, kv: Kv, settings: &AuthSettings) -> Self {
        Self {
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

    /// Creates and stores a login code for `phone`. Delivery is the caller's
    /// business (development logs it; there is no SMS gateway).
    pub async fn send_code(&self, phone: &Phone) -> Result<String, AuthError> {
        let code = format!("{:06}", rand::rng().random_range(0..1_000_000));
        let _: () =
            self.kv.conn().set_ex(self.kv.keys.login_code(phone.as_str()), &code, self.code_ttl.as_secs()).await?;
        Ok(code)
    }

    /// Consumes the code and, if it matched, logs the user in (creating them
    /// on first login).
    pub async fn login(&self, phone: &Phone, code: &str) -> Result<Issued, AuthError> {
        let stored: Option<String> = self.kv.conn().get_del(self.kv.keys.login_code(phone.as_str())).await?;
        if stored.as_deref() != Some(code) {
            return Err(AuthError::InvalidCode);
        }
        let session = self.register(phone).await?;
        self.issue(session).await
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
                pipe.set_ex(self.kv.keys.session(&token), serde_json::to_string(&session)?, self.token_ttl.as_secs())
                    .ignore();
                issued.push(Issued { token, session, expires_in: self.token_ttl });
            }
            let _: () = pipe.query_async(&mut self.kv.conn()).await?;
        }
        Ok(issued)
    }

    /// Issues a new bearer token for `session`.
    pub async fn issue(&self, session: Session) -> Result<Issued, AuthError> {
        let token = new_token();
        let _: () = self
            .kv
            .conn()
            .set_ex(self.kv.keys.session(&token), serde_json::to_string(&session)?, self.token_ttl.as_secs())
            .await?;
        Ok(Issued { token, session, expires_in: self.token_ttl })
    }

    /// The session behind `token`, renewing its TTL; `None` if unknown or
    /// expired. A session found within the last `session_cache_ms` is served
    /// from memory (its TTL was renewed then).
    pub async fn authenticate(&self, token: &str) -> Result<Option<Session>, AuthError> {
        if token.is_empty() || token.len() > 128 {
            return Ok(None);
        }
        if let Some(session) = self.sessions.get(token).await {
            return Ok(Some(session));
        }
        let raw: Option<String> =
            self.kv.conn().get_ex(self.kv.keys.session(token), redis::Expiry::EX(self.token_ttl.as_secs())).await?;
        let session: Option<Session> = raw.map(|r| serde_json::from_str(&r)).transpose()?;
        if let Some(session) = session {
            self.sessions.insert(token.to_owned(), session).await;
        }
        Ok(session)
    }
}

/// A fresh bearer token: 24 random bytes, hex.
fn new_token() -> String {
    hex::encode(rand::random::<[u8; 24]>())
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
