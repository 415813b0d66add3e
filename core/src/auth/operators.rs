//! Operator keys: the credential of operator tools (the console, `cityhub`
//! and its lab), which no phone login can obtain. A key is made by `cityhub
//! admin key create` (or by the CLI for its own run, expiring within the
//! hour) with the operator's database access, never through the API; it is
//! stored as its SHA-256 only, has an expiry, and can be revoked. Keys carry
//! the token MAC too (`op_` and a token), so a made-up key costs no lookup.
//! Each instance keeps a key it checked for `auth.session_cache_ms`: a
//! revocation takes effect everywhere within that long.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{new_token, signed, token_hash, Auth, AuthError};

/// What every operator key starts with.
pub const PREFIX: &str = "op_";

/// One key, as `cityhub admin key list` shows it (never the key itself).
#[derive(Debug, Clone)]
pub struct OperatorKey {
    pub id: u64,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub revoked: bool,
}

/// A fresh key: shown once, then only its hash is kept.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub id: u64,
    pub key: String,
    pub expires_at: DateTime<Utc>,
}

/// True when `bearer` is meant as an operator key (it may still be invalid).
pub fn is_operator_key(bearer: &str) -> bool {
    bearer.starts_with(PREFIX)
}

impl Auth {
    /// Makes an operator key named `name` valid for `ttl`.
    pub async fn create_operator_key(&self, name: &str, ttl: Duration) -> Result<NewKey, AuthError> {
        let key = format!("{PREFIX}{}", new_token(self.mac_key().await?));
        let expires_at = Utc::now() + ttl;
        let id = sqlx::query("INSERT INTO operator_keys (name, key_hash, expires_at) VALUES (?, ?, ?)")
            .bind(name)
            .bind(token_hash(&key))
            .bind(expires_at)
            .execute(&self.db)
            .await?
            .last_insert_id();
        tracing::info!(id, name, %expires_at, "operator key created");
        Ok(NewKey { id, key, expires_at })
    }

    /// Revokes key `id`; `false` if there is no such live key.
    pub async fn revoke_operator_key(&self, id: u64) -> Result<bool, AuthError> {
        let done = sqlx::query("UPDATE operator_keys SET revoked_at = NOW(3) WHERE id = ? AND revoked_at IS NULL")
            .bind(id)
            .execute(&self.db)
            .await?;
        tracing::info!(id, revoked = done.rows_affected() > 0, "operator key revoked");
        Ok(done.rows_affected() > 0)
    }

    /// Every key, newest first.
    pub async fn operator_keys(&self) -> Result<Vec<OperatorKey>, AuthError> {
        type Row = (u64, String, DateTime<Utc>, DateTime<Utc>, Option<DateTime<Utc>>);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, name, created_at, expires_at, revoked_at FROM operator_keys ORDER BY id DESC LIMIT 1000",
        )
        .fetch_all(&self.db)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, created_at, expires_at, revoked)| OperatorKey {
                id,
                name,
                created_at,
                expires_at,
                revoked: revoked.is_some(),
            })
            .collect())
    }

    /// True when `key` is a live operator key: its MAC first (no lookup for
    /// a made-up key), then this instance's memory, then MySQL.
    pub async fn operator(&self, key: &str) -> Result<bool, AuthError> {
        let Some(token) = key.strip_prefix(PREFIX) else { return Ok(false) };
        if !signed(self.mac_key().await?, token) {
            metrics::counter!(crate::metrics::FORGED_TOKENS).increment(1);
            return Ok(false);
        }
        let hash = token_hash(key);
        if let Some(live) = self.operators.get(&hash).await {
            return Ok(live);
        }
        let live: Option<u64> = sqlx::query_scalar(
            "SELECT id FROM operator_keys WHERE key_hash = ? AND revoked_at IS NULL AND expires_at > NOW(3)",
        )
        .bind(&hash)
        .fetch_optional(&self.db)
        .await?;
        self.operators.insert(hash, live.is_some()).await;
        Ok(live.is_some())
    }
}
