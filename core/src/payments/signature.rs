//! Signed callbacks: the provider signs the raw body with HMAC-SHA256 under
//! the shared secret and sends `sha256=<hex>` in [`HEADER`]; the receiver
//! recomputes it over the exact bytes it got and compares in constant time.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header carrying a callback's signature.
pub const HEADER: &str = "x-cityhub-signature";

fn mac(secret: &[u8], body: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(body);
    mac
}

/// `sha256=<hex>` of `body` under `secret`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    format!("sha256={}", hex::encode(mac(secret, body).finalize().into_bytes()))
}

/// True when `header` is the signature of exactly `body` under `secret`
/// (constant-time comparison; a missing or malformed header is false).
pub fn verify(secret: &[u8], body: &[u8], header: Option<&[u8]>) -> bool {
    let Some(given) = header.and_then(|h| h.strip_prefix(b"sha256=")).and_then(|h| hex::decode(h).ok()) else {
        return false;
    };
    mac(secret, body).verify_slice(&given).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_for_its_body_and_secret_only() {
        let (secret, body) = (b"0123456789", br#"{"txn_id":"t1"}"#);
        let sig = sign(secret, body);
        assert!(verify(secret, body, Some(sig.as_bytes())));
        assert!(!verify(secret, br#"{"txn_id":"t2"}"#, Some(sig.as_bytes())));
        assert!(!verify(b"another-secret", body, Some(sig.as_bytes())));
        assert!(!verify(secret, body, None));
        assert!(!verify(secret, body, Some(sig.trim_start_matches("sha256=").as_bytes())));
        assert!(!verify(secret, body, Some(b"sha256=zz")));
    }
}
