//! Phone-code login and bearer-token sessions.
//!
//! Login is a code sent to the phone and a challenge given to whoever asked
//! (see [`guard`]): every code request gets a challenge of its own, bound to
//! the phone's one current code, and a guess counts only against the
//! challenge it carries. So no stranger, from any number of addresses, can
//! spend or lock the challenge of the phone's owner, and the code on the
//! owner's phone (sent at most once a minute, a bounded number of times a
//! day) is always one their own challenge takes. Brute force is bounded per
//! challenge and, past a day's wrong guesses at a phone, by a proof of work
//! per guess; a client guessing across phones locks only itself out.
//!
//! A bearer token carries a MAC (HMAC-SHA-256 under a key kept in MySQL's
//! `auth_secrets`, read once per process): a token the platform never
//! issued is refused in process, before any Redis or MySQL lookup.
//!
//! A session is a row of MySQL's `sessions`, keyed by the SHA-256 of its
//! token (never the token itself): MySQL is the truth, so a Redis restart,
//! flush or failover logs no one out. Redis keeps a copy (JSON under the same
//! hash, TTL renewed on every read: sliding expiry) stamped with the Redis
//! generation it was written under and the row's expiry; a copy of another
//! generation (Redis came back older: it may hold a session logged out
//! since) is not trusted and the row is read again. The row's expiry slides
//! too, at most once per half token TTL. Each instance serves a session it
//! read from memory for `session_cache_ms`; a logout tells every instance
//! to drop it at once (Redis pub/sub, the `sessions` channel of
//! `cityhub_platform::cache`), and the cache's TTL bounds a lost message.
//! Users are created on first login, and a session is a shopper's, always:
//! operators act with operator keys ([`operators`]), which no login obtains.

use std::sync::LazyLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use rand::Rng;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::MySqlPool;

pub mod guard;
pub mod known;
pub mod operators;

pub use guard::{ClientRules, CodeStep, GuessStep, PhoneRules, Strike};
pub use known::KnownUsers;

use crate::config::AuthSettings;
use crate::ids::UserId;
use crate::kv::{CityKeys, Kv};

/// Who is calling, as stored behind a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    pub user_id: UserId,
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
    #[error("the code is wrong; {0} guesses left on this challenge")]
    InvalidCode(u32),
    #[error("the challenge is unknown, used up or expired; ask for a new code")]
    ChallengeGone,
    #[error("too many wrong guesses at this phone today: a guess needs a proof of work of {0} bits")]
    ProofRequired(u32),
    #[error("no more codes for this phone today; the last one sent is no longer valid (retry in {} s)", .0.as_secs().max(1))]
    CodesSpent(Duration),
    #[error("too many login attempts from this client; locked out for another {} s", .0.as_secs().max(1))]
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

/// `session_read.lua`: a session's copy, read only on a verified server.
static READ: LazyLock<redis::Script> =
    LazyLock::new(|| cityhub_platform::kv::generation::fenced(include_str!("../../../lua/session_read.lua")));

/// Scripts to load at connect time.
pub fn scripts() -> [&'static redis::Script; 1] {
    [&*READ]
}

/// The Redis copy of a session.
#[derive(Debug, Serialize, Deserialize)]
struct Cached {
    user_id: UserId,
    /// The Redis generation it was written under.
    #[serde(rename = "gen")]
    generation: String,
    /// The MySQL row's expiry, ms since the epoch.
    until_ms: i64,
}

/// What a code request answers: the challenge to log in with.
#[derive(Debug, Clone)]
pub struct Challenge {
    /// The challenge id (32 hex digits), the requester's alone.
    pub id: String,
    /// The code to deliver to the phone, when this request sends one.
    pub sms: Option<String>,
    /// How long the challenge (and its code) stays valid.
    pub expires_in: Duration,
    /// Zero bits a proof of work needs (0: none needed).
    pub proof_bits: u32,
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
    phone_rules: PhoneRules,
    client_rules: ClientRules,
    proof_bits: u32,
    /// Every user id, so reads of made-up ids cost no MySQL.
    known: KnownUsers,
    /// The token MAC key, read from MySQL once.
    mac_key: std::sync::Arc<tokio::sync::OnceCell<Vec<u8>>>,
    /// Operator keys checked in the last `session_cache_ms`, by hash: live or not.
    operators: moka::future::Cache<String, bool>,
    /// Sessions seen in the last `session_cache_ms`, by token hash, so a
    /// shopper's burst of requests costs one Redis lookup, not one per request.
    sessions: moka::future::Cache<String, Session>,
    /// Phones whose guesses needed a proof of work lately (their day of
    /// wrong guesses is spent), so a flood of guesses without one is refused
    /// in process instead of with two scripts each; see [`PROOF_MEMO`].
    needs_proof: moka::sync::Cache<String, ()>,
}

/// How long a phone is remembered as needing a proof: a guess without one
/// is refused in process for this long after Redis last said so. The day
/// window renewing meanwhile costs its owner one proof, nothing more.
pub const PROOF_MEMO: Duration = Duration::from_secs(60);

/// Phones remembered as needing a proof at most (the least used go first).
const PROOF_MEMO_PHONES: u64 = 100_000;

impl Auth {
    pub fn new(db: MySqlPool, kv: Kv, settings: &AuthSettings) -> Self {
        Self {
            phone_rules: PhoneRules {
                code_ttl: settings.code_ttl_secs,
                resend: settings.code_resend_secs,
                codes_per_day: settings.codes_per_phone_day,
                code_tries: settings.code_tries,
                wrong_per_day: settings.wrong_codes_per_phone_day,
                day: settings.day_secs,
            },
            client_rules: ClientRules {
                code_requests: settings.code_requests_per_client,
                wrong_codes: settings.wrong_codes_per_client,
                window: settings.strike_window_secs,
                lockout: settings.lockout_secs,
            },
            proof_bits: settings.proof_bits,
            known: KnownUsers::new(db.clone(), kv.clone(), settings.user_bloom_bits, settings.user_bloom_hashes),
            mac_key: Default::default(),
            db,
            kv,
            token_ttl: settings.token_ttl_secs,
            sessions: moka::future::Cache::builder()
                .max_capacity(1_000_000)
                .time_to_live(settings.session_cache_ms)
                .build(),
            operators: moka::future::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(settings.session_cache_ms)
                .build(),
            needs_proof: moka::sync::Cache::builder().max_capacity(PROOF_MEMO_PHONES).time_to_live(PROOF_MEMO).build(),
        }
    }

    /// A code request for `phone` from `client`: a fresh challenge bound to
    /// the phone's code, and the code to send by SMS when one is due (none
    /// when the code sent lately stays valid). Refused only when the client
    /// itself is locked out, or when the phone has no code left today.
    /// Delivery is the caller's business (development logs it; there is no
    /// SMS gateway).
    pub async fn send_code(&self, phone: &Phone, client: &str) -> Result<Challenge, AuthError> {
        let rules = &self.client_rules;
        if let Some(left) = guard::client_step(&self.kv, client, Strike::CodeRequest, true, rules).await? {
            return Err(AuthError::LockedOut(left));
        }
        let id = hex::encode(rand::random::<[u8; 16]>());
        let fresh = format!("{:06}", rand::rng().random_range(0..1_000_000));
        let (sms, life, proof) = match guard::request(&self.kv, phone.as_str(), &id, &fresh, &self.phone_rules).await? {
            CodeStep::Send { code, life, proof } => (Some(code), life, proof),
            CodeStep::Kept { life, proof } => (None, life, proof),
            CodeStep::Spent(renews) => return Err(AuthError::CodesSpent(renews)),
        };
        if sms.is_some() {
            metrics::counter!(crate::metrics::LOGIN_CODES_SENT).increment(1);
        }
        if proof {
            self.needs_proof.insert(phone.as_str().to_owned(), ());
        }
        Ok(Challenge { id, sms, expires_in: life, proof_bits: if proof { self.proof_bits } else { 0 } })
    }

    /// Unless the client is locked out, checks `code` through `challenge`
    /// and, if it matched, logs the user in (creating them on first login).
    /// A wrong guess counts against the challenge, the phone's day and the
    /// client; `proof` is needed only past the phone's day of wrong guesses.
    pub async fn login(
        &self,
        phone: &Phone,
        code: &str,
        challenge: &str,
        proof: Option<&str>,
        client: &str,
    ) -> Result<Issued, AuthError> {
        let proved = proof.is_some_and(|p| guard::proves(challenge, p, self.proof_bits));
        if !proved && self.needs_proof.contains_key(phone.as_str()) {
            let step = GuessStep::NeedsProof;
            metrics::counter!(crate::metrics::LOGIN_GUESSES, "result" => step.label()).increment(1);
            return Err(AuthError::ProofRequired(self.proof_bits));
        }
        let rules = &self.client_rules;
        if let Some(left) = guard::client_step(&self.kv, client, Strike::WrongCode, false, rules).await? {
            return Err(AuthError::LockedOut(left));
        }
        let step = guard::guess(&self.kv, phone.as_str(), challenge, code, proved, &self.phone_rules).await?;
        metrics::counter!(crate::metrics::LOGIN_GUESSES, "result" => step.label()).increment(1);
        if step == GuessStep::NeedsProof {
            self.needs_proof.insert(phone.as_str().to_owned(), ());
        }
        match step {
            GuessStep::Matched => {}
            GuessStep::Wrong(left) => {
                let strike = guard::client_step(&self.kv, client, Strike::WrongCode, true, rules).await?;
                return Err(strike.map_or(AuthError::InvalidCode(left), AuthError::LockedOut));
            }
            GuessStep::Gone | GuessStep::Spent => return Err(AuthError::ChallengeGone),
            GuessStep::NeedsProof => return Err(AuthError::ProofRequired(self.proof_bits)),
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
            let mut select = sqlx::QueryBuilder::<sqlx::MySql>::new("SELECT phone, id FROM users WHERE phone IN (");
            let mut list = select.separated(", ");
            for phone in chunk {
                list.push_bind(phone.as_str());
            }
            select.push(")");
            let rows: Vec<(String, UserId)> = select.build_query_as().fetch_all(&self.db).await?;
            let by_phone: std::collections::HashMap<String, Session> =
                rows.into_iter().map(|(phone, user_id)| (phone, Session { user_id })).collect();
            let ids: Vec<UserId> = by_phone.values().map(|s| s.user_id).collect();
            self.known.add(&ids).await?;
            sessions.extend(chunk.iter().map(|phone| by_phone[phone.as_str()]));
        }
        Ok(sessions)
    }

    /// Finds or creates a user for every phone and issues each a token, in
    /// bulk (for load tests and demos); the result follows `phones`' order.
    pub async fn issue_many(&self, phones: &[Phone]) -> Result<Vec<Issued>, AuthError> {
        let mut issued = Vec::with_capacity(phones.len());
        for chunk in self.register_many(phones).await?.chunks(1000) {
            let key = self.mac_key().await?;
            let fresh: Vec<(String, Session)> = chunk.iter().map(|&s| (new_token(key), s)).collect();
            self.store(&fresh).await?;
            issued.extend(fresh.into_iter().map(|(token, session)| Issued {
                token,
                session,
                expires_in: self.token_ttl,
            }));
        }
        Ok(issued)
    }

    /// Issues a new bearer token for `session`.
    pub async fn issue(&self, session: Session) -> Result<Issued, AuthError> {
        let token = new_token(self.mac_key().await?);
        self.store(&[(token.clone(), session)]).await?;
        Ok(Issued { token, session, expires_in: self.token_ttl })
    }

    /// The key of token MACs: made once by the first process to ask (a
    /// random key stored in `auth_secrets`), then read by every process and
    /// kept in memory. The API reads it at start-up ([`Auth::prepare`]), so
    /// a MySQL outage later does not stop it from checking tokens.
    async fn mac_key(&self) -> Result<&[u8], AuthError> {
        let key = self
            .mac_key
            .get_or_try_init(|| async {
                let read = || sqlx::query_scalar("SELECT secret FROM auth_secrets WHERE name = 'token_mac'");
                if let Some(key) = read().fetch_optional(&self.db).await? {
                    return Ok::<Vec<u8>, AuthError>(key);
                }
                sqlx::query("INSERT IGNORE INTO auth_secrets (name, secret) VALUES ('token_mac', ?)")
                    .bind(rand::random::<[u8; 32]>().to_vec())
                    .execute(&self.db)
                    .await?;
                Ok(read().fetch_one(&self.db).await?)
            })
            .await?;
        Ok(key)
    }

    /// The users' Bloom filter.
    pub fn known(&self) -> &KnownUsers {
        &self.known
    }

    /// Reads what checking tokens needs (the MAC key), before serving.
    pub async fn prepare(&self) -> Result<(), AuthError> {
        self.mac_key().await.map(drop)
    }

    /// The expiry of a session used now.
    fn until(&self) -> DateTime<Utc> {
        Utc::now() + self.token_ttl
    }

    /// Stores new sessions in MySQL (the truth), then copies them to Redis
    /// (best effort: a session missing there is read from MySQL).
    async fn store(&self, sessions: &[(String, Session)]) -> Result<(), AuthError> {
        let until = self.until();
        let mut insert =
            sqlx::QueryBuilder::<sqlx::MySql>::new("INSERT INTO sessions (token_hash, user_id, expires_at) ");
        insert.push_values(sessions, |mut row, (token, session)| {
            row.push_bind(token_hash(token)).push_bind(session.user_id).push_bind(until);
        });
        insert.build().execute(&self.db).await?;
        let copies: Vec<(String, Session)> = sessions.iter().map(|(t, s)| (token_hash(t), *s)).collect();
        if let Err(err) = self.cache(&copies, until).await {
            tracing::warn!(error = %err, "sessions not copied to Redis; they are read from MySQL");
        }
        Ok(())
    }

    /// Writes Redis copies of sessions (by token hash) valid until `until`,
    /// then reads their rows again and drops every copy whose row is gone
    /// meanwhile: a logout that ran between our read and our write could not
    /// see (and drop) a copy not yet written. So a slide racing a logout
    /// cannot bring the logged-out token back. Answers the hashes whose rows
    /// exist.
    async fn cache(
        &self,
        sessions: &[(String, Session)],
        until: DateTime<Utc>,
    ) -> Result<std::collections::HashSet<String>, AuthError> {
        let mut writes = Vec::with_capacity(sessions.len());
        for (hash, session) in sessions {
            let key = self.kv.keys.session(hash);
            let copy = Cached {
                user_id: session.user_id,
                generation: self.kv.generation.current(&key).await?.to_string(),
                until_ms: until.timestamp_millis(),
            };
            writes.push(redis::Cmd::set_ex(key, serde_json::to_string(&copy)?, self.token_ttl.as_secs()));
        }
        self.kv.conn().query_each(writes).await?;
        let mut live = std::collections::HashSet::with_capacity(sessions.len());
        for chunk in sessions.chunks(1000) {
            let mut select =
                sqlx::QueryBuilder::<sqlx::MySql>::new("SELECT token_hash FROM sessions WHERE token_hash IN (");
            let mut list = select.separated(", ");
            for (hash, _) in chunk {
                list.push_bind(hash);
            }
            select.push(")");
            let rows: Vec<(String,)> = select.build_query_as().fetch_all(&self.db).await?;
            live.extend(rows.into_iter().map(|(hash,)| hash));
        }
        for (hash, _) in sessions.iter().filter(|(hash, _)| !live.contains(hash)) {
            let _: () = self.kv.conn().del(self.kv.keys.session(hash)).await?;
            self.forget_everywhere(hash).await?;
        }
        Ok(live)
    }

    /// Ends the session behind `token` everywhere; `false` if there was
    /// none. The row goes first (the truth), then the Redis copy and every
    /// instance's memory; a failure on the way answers an error, and a retry
    /// finishes the job.
    pub async fn logout(&self, token: &str) -> Result<bool, AuthError> {
        if !signed(self.mac_key().await?, token) {
            return Ok(false);
        }
        let hash = token_hash(token);
        let deleted = sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
            .bind(&hash)
            .execute(&self.db)
            .await?
            .rows_affected();
        let copies: u64 = self.kv.conn().del(self.kv.keys.session(&hash)).await?;
        self.forget_everywhere(&hash).await?;
        Ok(deleted + copies > 0)
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

    /// The session behind `token`, renewing its expiry; `None` if unknown
    /// or expired. Memory first (a session read within `session_cache_ms`),
    /// then the Redis copy if it was written under Redis's current
    /// generation, then MySQL (also whenever Redis cannot answer).
    pub async fn authenticate(&self, token: &str) -> Result<Option<Session>, AuthError> {
        // Memory first: a session there was issued (a made-up token never
        // is), so the MAC is checked only on the way to Redis and MySQL.
        let hash = token_hash(token);
        if let Some(session) = self.sessions.get(&hash).await {
            return Ok(Some(session));
        }
        if !signed(self.mac_key().await?, token) {
            metrics::counter!(crate::metrics::FORGED_TOKENS).increment(1);
            return Ok(None);
        }
        let session = match self.cached_session(&hash).await {
            Ok(Some(session)) => Some(session),
            Ok(None) => self.stored_session(&hash).await?,
            Err(err) => {
                tracing::debug!(error = %err, "session copy unreadable; reading MySQL");
                self.stored_session(&hash).await?
            }
        };
        if let Some(session) = session {
            self.sessions.insert(hash, session).await;
        }
        Ok(session)
    }

    /// A trusted Redis copy, its row's expiry slid when half of it is gone.
    async fn cached_session(&self, hash: &str) -> Result<Option<Session>, AuthError> {
        let keys = [self.kv.keys.session(hash)];
        let generation = self.kv.generation.current(&keys[0]).await?;
        let (_, raw): (i64, Option<String>) =
            self.kv.eval_fenced(&READ, &keys, &[self.token_ttl.as_secs().to_string()]).await?;
        let Some(copy) = raw.map(|r| serde_json::from_str::<Cached>(&r)).transpose()? else {
            return Ok(None);
        };
        let left = copy.until_ms - Utc::now().timestamp_millis();
        if copy.generation != *generation || left <= 0 {
            return Ok(None);
        }
        let session = Session { user_id: copy.user_id };
        if left < (self.token_ttl / 2).as_millis() as i64 {
            return self.slide(hash, session).await;
        }
        Ok(Some(session))
    }

    /// The row of a live session; its copy refreshed.
    async fn stored_session(&self, hash: &str) -> Result<Option<Session>, AuthError> {
        let row: Option<(UserId, DateTime<Utc>)> = sqlx::query_as(
            "SELECT user_id, expires_at FROM sessions WHERE token_hash = ? AND expires_at > CURRENT_TIMESTAMP(3)",
        )
        .bind(hash)
        .fetch_optional(&self.db)
        .await?;
        let Some((user_id, until)) = row else { return Ok(None) };
        let session = Session { user_id };
        if (until - Utc::now()).to_std().unwrap_or_default() < self.token_ttl / 2 {
            return self.slide(hash, session).await;
        }
        Ok(self.recache(hash, session, until).await)
    }

    /// Copies `session` to Redis (best effort) and answers it; `None` when
    /// its row is gone meanwhile (a logout raced this read).
    async fn recache(&self, hash: &str, session: Session, until: DateTime<Utc>) -> Option<Session> {
        match self.cache(&[(hash.to_owned(), session)], until).await {
            Ok(live) => live.contains(hash).then_some(session),
            Err(err) => {
                tracing::debug!(error = %err, "session not copied to Redis");
                Some(session)
            }
        }
    }

    /// Moves a session's expiry a token TTL from now, in MySQL then in its
    /// copy; `None` if the row is gone (logged out meanwhile).
    async fn slide(&self, hash: &str, session: Session) -> Result<Option<Session>, AuthError> {
        let until = self.until();
        let moved = sqlx::query(
            "UPDATE sessions SET expires_at = ? WHERE token_hash = ? AND expires_at > CURRENT_TIMESTAMP(3)",
        )
        .bind(until)
        .bind(hash)
        .execute(&self.db)
        .await?
        .rows_affected();
        if moved == 0 {
            let _: redis::RedisResult<()> = self.kv.conn().del(self.kv.keys.session(hash)).await;
            return Ok(None);
        }
        Ok(self.recache(hash, session, until).await)
    }
}

/// Random bytes of a token, and bytes of its MAC.
const TOKEN_BODY: usize = 24;
const TOKEN_MAC: usize = 16;

/// A fresh bearer token: 24 random bytes and the first 16 bytes of their
/// HMAC-SHA-256 under `key`, hex (80 characters).
fn new_token(key: &[u8]) -> String {
    let body: [u8; TOKEN_BODY] = rand::random();
    let mac = token_mac(key, &body).finalize().into_bytes();
    format!("{}{}", hex::encode(body), hex::encode(&mac[..TOKEN_MAC]))
}

fn token_mac(key: &[u8], body: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(body);
    mac
}

/// True when `token` carries a valid MAC under `key` (checked in constant
/// time): a token this platform issued, whether or not its session lives.
fn signed(key: &[u8], token: &str) -> bool {
    if token.len() != 2 * (TOKEN_BODY + TOKEN_MAC) {
        return false;
    }
    let (Ok(body), Ok(tag)) = (hex::decode(&token[..2 * TOKEN_BODY]), hex::decode(&token[2 * TOKEN_BODY..])) else {
        return false;
    };
    token_mac(key, &body).verify_truncated_left(&tag).is_ok()
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
    fn only_a_token_made_under_the_key_is_signed() {
        let token = new_token(b"key one");
        assert_eq!(token.len(), 80);
        assert!(signed(b"key one", &token));
        assert!(!signed(b"key two", &token), "another key");
        let mut flipped = token.clone().into_bytes();
        flipped[3] = if flipped[3] == b'0' { b'1' } else { b'0' };
        assert!(!signed(b"key one", std::str::from_utf8(&flipped).unwrap()), "a changed body");
        for bad in ["", "abc", &token[..79], &format!("{token}0"), &"z".repeat(80)] {
            assert!(!signed(b"key one", bad), "{bad:?}");
        }
    }

    #[test]
    fn login_codes_are_six_digits() {
        assert!(is_login_code("012345"));
        assert!(!is_login_code("12345"));
        assert!(!is_login_code("12345x"));
    }
}
