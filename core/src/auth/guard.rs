//! Login lockouts that cannot be turned against a user. Two scripts count
//! strikes (code requests, wrong codes):
//!
//! - `lua/login_phone.lua`, per phone: strikes count against the pair
//!   (phone, client), which locks after `*_per_phone_client`; the phone as a
//!   whole locks only when `auth.phone_lock_clients` distinct clients were
//!   locked out of it within the window. It also keeps the code: a request
//!   while a code is valid sends the same code again, a wrong code counts
//!   only when a code exists, and each client has `auth.code_tries` tries at
//!   a code, so another client's guesses never spend the owner's.
//! - `lua/login_client.lua`, per client across phones: a client guessing at
//!   many phones (or at phones without codes) locks itself out.
//!
//! A client is an IPv4 address or an IPv6 /64 (the API's `client_key`).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::kv::{CityKeys, Kv};

static PHONE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/login_phone.lua")));
static CLIENT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/login_client.lua")));

/// The scripts, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&PHONE, &CLIENT]
}

pub use crate::keys::Strike;

/// Limits for one kind of strike.
#[derive(Debug, Clone, Copy)]
pub struct StrikeLimits {
    /// Strikes of one client against one phone.
    pub per_phone_client: u32,
    /// Strikes of one client across phones.
    pub per_client: u32,
}

/// The limits shared by both kinds.
#[derive(Debug, Clone, Copy)]
pub struct Lockouts {
    /// Distinct clients with strikes against a phone that lock the phone.
    pub phone_lock_clients: u32,
    pub window: Duration,
    pub lockout: Duration,
    /// Wrong tries a code allows before it is spent.
    pub code_tries: u32,
    pub code_ttl: Duration,
}

/// What a step against a phone answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhoneStep {
    /// The pair or the phone is locked for this long.
    Locked(Duration),
    /// No lock (a look at the locks).
    Open,
    /// The code to send: the valid one, or the new one now stored.
    Sent(String),
    /// The code matched and is spent.
    Matched,
    /// A code exists and this was not it.
    Wrong,
    /// The phone has no code.
    NoCode,
}

/// One of `login_phone.lua`'s steps.
pub enum Step<'a> {
    Check,
    Store { code: &'a str },
    Login { code: &'a str },
}

/// Runs `login_phone.lua` for `phone` from `client`.
pub async fn phone_step(
    kv: &Kv,
    phone: &str,
    client: &str,
    step: Step<'_>,
    limits: &StrikeLimits,
    lockouts: &Lockouts,
) -> redis::RedisResult<PhoneStep> {
    let k = &kv.keys;
    let (mode, code, kind) = match step {
        Step::Check => ("check", "", Strike::WrongCode),
        Step::Store { code } => ("code", code, Strike::CodeRequest),
        Step::Login { code } => ("login", code, Strike::WrongCode),
    };
    let (status, ms, code): (String, u64, String) = PHONE
        .key(k.login_code(phone))
        .key(k.login_code_tries(phone, client))
        .key(k.login_lock_pair(phone, client))
        .key(k.login_lock_phone(phone))
        .key(k.login_strikes_pair(kind, phone, client))
        .key(k.login_strike_clients(kind, phone))
        .arg(mode)
        .arg(code)
        .arg(client)
        .arg(limits.per_phone_client)
        .arg(lockouts.phone_lock_clients)
        .arg(lockouts.window.as_millis() as u64)
        .arg(lockouts.lockout.as_millis() as u64)
        .arg(lockouts.code_tries)
        .arg(lockouts.code_ttl.as_millis() as u64)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok(match status.as_str() {
        "locked" => PhoneStep::Locked(Duration::from_millis(ms.max(1))),
        "sent" => PhoneStep::Sent(code),
        "ok" => PhoneStep::Matched,
        "wrong" => PhoneStep::Wrong,
        "none" => PhoneStep::NoCode,
        _ => PhoneStep::Open,
    })
}

/// Runs `login_client.lua`: with `add`, counts one `kind` strike for
/// `client` (locking it out if it goes over); either way, returns the
/// remaining lockout if the client is locked.
pub async fn client_step(
    kv: &Kv,
    client: &str,
    kind: Strike,
    add: bool,
    limits: &StrikeLimits,
    lockouts: &Lockouts,
) -> redis::RedisResult<Option<Duration>> {
    let k = &kv.keys;
    let left: i64 = CLIENT
        .key(k.login_lock_client(client))
        .key(k.login_strikes_client(kind, client))
        .arg(u8::from(add))
        .arg(limits.per_client)
        .arg(lockouts.window.as_millis() as u64)
        .arg(lockouts.lockout.as_millis() as u64)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok((left > 0).then(|| Duration::from_millis(left as u64)))
}
