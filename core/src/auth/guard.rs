//! Login lockouts: `lua/login_guard.lua` counts strikes (code requests and
//! wrong codes) per phone and per client IP, across codes, and locks out
//! whichever goes over its limit for the lockout time.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::kv::{CityKeys, Kv};

static LOGIN_GUARD: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/login_guard.lua")));

/// The script, to load at connect time.
pub fn script() -> &'static Script {
    &LOGIN_GUARD
}

/// Which login strikes `login_guard.lua` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    CodeRequest,
    WrongCode,
}

/// Limits for one kind of strike.
#[derive(Debug, Clone, Copy)]
pub struct StrikeLimits {
    pub per_phone: u32,
    pub per_ip: u32,
    pub window: Duration,
    pub lockout: Duration,
}

/// Runs `login_guard.lua`: with `add`, counts one `kind` strike for the phone
/// and the IP (locking out whichever goes over its limit); either way,
/// returns the remaining lockout if the phone or the IP is locked.
pub async fn login_guard(
    kv: &Kv,
    phone: &str,
    ip: &str,
    kind: Strike,
    add: bool,
    limits: &StrikeLimits,
) -> redis::RedisResult<Option<Duration>> {
    let k = &kv.keys;
    let left: i64 = LOGIN_GUARD
        .key(k.login_lock_phone(phone))
        .key(k.login_lock_ip(ip))
        .key(k.login_strikes_phone(kind, phone))
        .key(k.login_strikes_ip(kind, ip))
        .arg(u8::from(add))
        .arg(limits.per_phone)
        .arg(limits.per_ip)
        .arg(limits.window.as_millis() as u64)
        .arg(limits.lockout.as_millis() as u64)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok((left > 0).then(|| Duration::from_millis(left as u64)))
}
