//! Login guesses that no stranger can turn against a phone's owner. Two
//! scripts:
//!
//! - `lua/login_phone.lua`, per phone. The phone has one code at a time,
//!   sent by SMS at most once per `auth.code_resend_secs` and
//!   `auth.codes_per_phone_day` times a day; every code request gets a
//!   challenge of its own bound to that code, and a guess counts only
//!   against the challenge it carries (`auth.code_tries` each). A stranger
//!   can therefore neither spend nor lock the owner's challenge, and the
//!   code on the owner's phone is always the one their own challenge takes.
//!   Past `auth.wrong_codes_per_phone_day` wrong guesses in a day, a guess
//!   at the phone needs a proof of work ([`proves`]): brute force stays
//!   bounded (that many free guesses a day, then `2^proof_bits` hashes a
//!   guess) while the owner, who knows the code, pays one proof.
//! - `lua/login_client.lua`, per client across phones: a client asking for
//!   codes or guessing across many phones locks itself out, and only itself.
//!
//! A client is an IPv4 address or an IPv6 /64 (the API's `client_key`).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use sha2::{Digest, Sha256};

use crate::kv::{CityKeys, Kv};

static PHONE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/login_phone.lua")));
static CLIENT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/login_client.lua")));

/// The scripts, to load at connect time.
pub fn scripts() -> [&'static Script; 2] {
    [&PHONE, &CLIENT]
}

pub use crate::keys::Strike;

/// The per-phone rules of `login_phone.lua`.
#[derive(Debug, Clone, Copy)]
pub struct PhoneRules {
    pub code_ttl: Duration,
    pub resend: Duration,
    pub codes_per_day: u32,
    pub code_tries: u32,
    pub wrong_per_day: u32,
    pub day: Duration,
}

/// The per-client rules of `login_client.lua`.
#[derive(Debug, Clone, Copy)]
pub struct ClientRules {
    pub code_requests: u32,
    pub wrong_codes: u32,
    pub window: Duration,
    pub lockout: Duration,
}

impl ClientRules {
    fn most(&self, kind: Strike) -> u32 {
        match kind {
            Strike::CodeRequest => self.code_requests,
            Strike::WrongCode => self.wrong_codes,
        }
    }
}

/// What a code request answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeStep {
    /// Send this code; the challenge lives `life`.
    Send { code: String, life: Duration, proof: bool },
    /// The code sent before stays valid for `life`: nothing to send.
    Kept { life: Duration, proof: bool },
    /// No code, and the day's codes are all sent: renews in this long.
    Spent(Duration),
}

/// What a guess answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuessStep {
    /// The code matched and is spent.
    Matched,
    /// Wrong; this many guesses are left on the challenge.
    Wrong(u32),
    /// The challenge is unknown, or its code was replaced or used.
    Gone,
    /// The challenge has no guesses left.
    Spent,
    /// The phone had too many wrong guesses today: a guess needs a proof.
    NeedsProof,
}

impl GuessStep {
    /// Its label in `cityhub_login_guesses_total` (a closed set).
    pub fn label(self) -> &'static str {
        match self {
            GuessStep::Matched => "matched",
            GuessStep::Wrong(_) => "wrong",
            GuessStep::Gone => "gone",
            GuessStep::Spent => "spent",
            GuessStep::NeedsProof => "needs_proof",
        }
    }
}

type Answer = (String, u64, String, u8);

/// `login_phone.lua` on `phone`'s keys and `challenge`'s, in `mode`.
fn phone_script(kv: &Kv, phone: &str, challenge: &str, mode: &str) -> redis::ScriptInvocation<'static> {
    let k = &kv.keys;
    let mut invocation = PHONE.prepare_invoke();
    invocation
        .key(k.login_code(phone))
        .key(k.login_challenge(phone, challenge))
        .key(k.login_sms_recent(phone))
        .key(k.login_sms_day(phone))
        .key(k.login_wrong_day(phone))
        .arg(mode);
    invocation
}

/// A code request for `phone`, answered with `challenge`; `fresh` is the
/// code stored if the phone has none.
pub async fn request(
    kv: &Kv,
    phone: &str,
    challenge: &str,
    fresh: &str,
    rules: &PhoneRules,
) -> redis::RedisResult<CodeStep> {
    let (status, ms, code, proof): Answer = phone_script(kv, phone, challenge, "code")
        .arg(fresh)
        .arg(rules.resend.as_millis() as u64)
        .arg(rules.codes_per_day)
        .arg(rules.day.as_millis() as u64)
        .arg(rules.code_ttl.as_millis() as u64)
        .arg(rules.wrong_per_day)
        .invoke_async(&mut kv.conn())
        .await?;
    let life = Duration::from_millis(ms.max(1));
    Ok(match status.as_str() {
        "sent" => CodeStep::Send { code, life, proof: proof == 1 },
        "kept" => CodeStep::Kept { life, proof: proof == 1 },
        _ => CodeStep::Spent(life),
    })
}

/// A guess at `phone`'s code through `challenge`.
pub async fn guess(
    kv: &Kv,
    phone: &str,
    challenge: &str,
    code: &str,
    proved: bool,
    rules: &PhoneRules,
) -> redis::RedisResult<GuessStep> {
    let (status, ms, _, _): Answer = phone_script(kv, phone, challenge, "login")
        .arg(code)
        .arg(rules.code_tries)
        .arg(rules.wrong_per_day)
        .arg(u8::from(proved))
        .arg(rules.day.as_millis() as u64)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok(match status.as_str() {
        "ok" => GuessStep::Matched,
        "wrong" => GuessStep::Wrong(ms as u32),
        "spent" => GuessStep::Spent,
        "proof" => GuessStep::NeedsProof,
        _ => GuessStep::Gone,
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
    rules: &ClientRules,
) -> redis::RedisResult<Option<Duration>> {
    let k = &kv.keys;
    let left: i64 = CLIENT
        .key(k.login_lock_client(client))
        .key(k.login_strikes_client(kind, client))
        .arg(u8::from(add))
        .arg(rules.most(kind))
        .arg(rules.window.as_millis() as u64)
        .arg(rules.lockout.as_millis() as u64)
        .invoke_async(&mut kv.conn())
        .await?;
    Ok((left > 0).then(|| Duration::from_millis(left as u64)))
}

/// The longest proof a guess may carry.
pub const PROOF_MAX_LEN: usize = 32;

/// True when `proof` is a proof of work for `challenge`: the SHA-256 of
/// `"<challenge>:<proof>"` starts with `bits` zero bits.
pub fn proves(challenge: &str, proof: &str, bits: u32) -> bool {
    proof.len() <= PROOF_MAX_LEN && leading_zero_bits(&Sha256::digest(format!("{challenge}:{proof}"))) >= bits
}

/// A proof of work for `challenge` (what a client computes; about
/// `2^bits` hashes).
pub fn solve(challenge: &str, bits: u32) -> String {
    (0u64..).map(|n| n.to_string()).find(|p| proves(challenge, p, bits)).expect("a proof exists")
}

fn leading_zero_bits(digest: &[u8]) -> u32 {
    let mut bits = 0;
    for byte in digest {
        bits += byte.leading_zeros();
        if *byte != 0 {
            break;
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_solved_proof_proves_its_challenge_only() {
        let proof = solve("c0ffee", 12);
        assert!(proves("c0ffee", &proof, 12));
        assert!(proves("c0ffee", "anything", 0));
        // Another challenge needs a proof of its own (this one fails with
        // probability 2^-12 per challenge; these two are checked).
        assert!(!proves("c0ffef", &proof, 12) || !proves("c0fff0", &proof, 12));
        assert!(!proves("c0ffee", &"1".repeat(PROOF_MAX_LEN + 1), 0), "an oversized proof is refused");
    }

    #[test]
    fn leading_zero_bits_count_across_bytes() {
        assert_eq!(leading_zero_bits(&[0, 0, 0x10, 0xff]), 19);
        assert_eq!(leading_zero_bits(&[0x80]), 0);
        assert_eq!(leading_zero_bits(&[0, 0]), 16);
    }
}
