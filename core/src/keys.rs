//! Every business Redis key CityHub uses, in one place, as constructors on
//! the platform's [`Keys`] (bring [`CityKeys`] into scope). Each documents the
//! key's type and who writes it. The keys of one seckill voucher share the
//! hash tag `{<voucher id>}` so the scripts that touch them together also run
//! on Redis Cluster.

use cityhub_platform::kv::Keys;

use crate::auth::Strike;

pub trait CityKeys {
    /// Hash `stock`, `begin_ms`, `end_ms`, `pay_value`: the live seckill state,
    /// preloaded when the voucher is created. Written by `seckill.lua`.
    fn seckill_voucher(&self, voucher_id: u64) -> String;
    /// Hash user id -> reservation: `<id>` reserved, `<id>:c` confirmed by the
    /// worker, `<id>:r` released (see `seckill::scripts`).
    fn seckill_buyers(&self, voucher_id: u64) -> String;
    /// Sorted set with a TTL: one subject's recent seckill attempts on a
    /// voucher (`subject` is `user`, `ip` or `global`), the window of
    /// `limits.seckill`, counted by `seckill.lua`.
    fn seckill_limit(&self, voucher_id: u64, subject: &str, value: &str) -> String;
    /// Set of the stock-release event ids `stock_release.lua` applied, so a
    /// redelivered event gives nothing back twice.
    fn seckill_released(&self, voucher_id: u64) -> String;
    /// String [`PendingOrder`](crate::orders::PendingOrder) with a TTL: an
    /// accepted order the worker has not stored yet, so its owner can see it as `queued`.
    fn pending_order(&self, order_id: u64) -> String;
    /// GEO set of the shops of one type with a position (member: shop id),
    /// plus the member `-` that marks an index built from MySQL (see `shops::geo`).
    fn shop_geo(&self, type_id: u64) -> String;
    /// String with a TTL: the lock of whoever rebuilds one type's GEO index.
    fn shop_geo_lock(&self, type_id: u64) -> String;
    /// HyperLogLog of the signed-in users who read a shop on one day (UTC),
    /// expiring `shops.uv_retention_days` after it.
    fn shop_visitors(&self, shop_id: u64, day: chrono::NaiveDate) -> String;
    /// Sorted set: one of a user's follow lists (`list` is `followings` or
    /// `followers`), member the other user's id, score the follow time in ms,
    /// plus the marker `-` at 0 that says it was built from MySQL (see
    /// `social::lists`). Written by `social_apply.lua`, rebuilt by readers.
    fn follow_list(&self, user_id: u64, list: &str) -> String;
    /// String with a TTL: the lock of whoever rebuilds a follow list.
    fn follow_list_lock(&self, user_id: u64, list: &str) -> String;
    /// Hash `followers`, `followings`: a user's counts, written by the follow
    /// consumer and the count correction, filled by readers when missing.
    fn follow_counts(&self, user_id: u64) -> String;
    /// String (JSON) with a TTL: a user's computed recommendations.
    fn recommendations(&self, user_id: u64) -> String;
    /// String: the login code sent to a phone, with a TTL.
    fn login_code(&self, phone: &str) -> String;
    /// String: JSON session behind a bearer token, under the token's
    /// SHA-256 (hex), with a sliding TTL.
    fn session(&self, token_hash: &str) -> String;
    /// Set of a user's session token hashes (role changes rewrite them).
    fn user_sessions(&self, user_id: u64) -> String;
    /// String with a TTL: the phone is locked out of login until it expires.
    fn login_lock_phone(&self, phone: &str) -> String;
    /// String with a TTL: the client IP is locked out of login until it expires.
    fn login_lock_ip(&self, ip: &str) -> String;
    /// Counter with a TTL (the window): strikes of `kind` against a phone.
    fn login_strikes_phone(&self, kind: Strike, phone: &str) -> String;
    /// Counter with a TTL (the window): strikes of `kind` from a client IP.
    fn login_strikes_ip(&self, kind: Strike, ip: &str) -> String;
}

fn strike_name(kind: Strike) -> &'static str {
    match kind {
        Strike::CodeRequest => "codes",
        Strike::WrongCode => "wrong",
    }
}

impl CityKeys for Keys {
    fn seckill_voucher(&self, voucher_id: u64) -> String {
        self.key(format_args!("seckill:{{{voucher_id}}}:voucher"))
    }

    fn seckill_buyers(&self, voucher_id: u64) -> String {
        self.key(format_args!("seckill:{{{voucher_id}}}:buyers"))
    }

    fn seckill_limit(&self, voucher_id: u64, subject: &str, value: &str) -> String {
        self.key(format_args!("seckill:{{{voucher_id}}}:limit:{subject}:{value}"))
    }

    fn seckill_released(&self, voucher_id: u64) -> String {
        self.key(format_args!("seckill:{{{voucher_id}}}:released"))
    }

    fn pending_order(&self, order_id: u64) -> String {
        self.key(format_args!("order:{order_id}:pending"))
    }

    fn shop_geo(&self, type_id: u64) -> String {
        self.key(format_args!("shops:geo:{type_id}"))
    }

    fn shop_geo_lock(&self, type_id: u64) -> String {
        self.key(format_args!("shops:geo:{type_id}:lock"))
    }

    fn shop_visitors(&self, shop_id: u64, day: chrono::NaiveDate) -> String {
        self.key(format_args!("shop:{{{shop_id}}}:uv:{}", day.format("%Y%m%d")))
    }

    fn follow_list(&self, user_id: u64, list: &str) -> String {
        self.key(format_args!("social:{{{user_id}}}:{list}"))
    }

    fn follow_list_lock(&self, user_id: u64, list: &str) -> String {
        self.key(format_args!("social:{{{user_id}}}:{list}:lock"))
    }

    fn follow_counts(&self, user_id: u64) -> String {
        self.key(format_args!("social:{{{user_id}}}:counts"))
    }

    fn recommendations(&self, user_id: u64) -> String {
        self.key(format_args!("social:{{{user_id}}}:recommendations"))
    }

    fn login_code(&self, phone: &str) -> String {
        self.key(format_args!("auth:code:{phone}"))
    }

    fn session(&self, token_hash: &str) -> String {
        self.key(format_args!("auth:session:{token_hash}"))
    }

    fn user_sessions(&self, user_id: u64) -> String {
        self.key(format_args!("auth:user:{user_id}:sessions"))
    }

    fn login_lock_phone(&self, phone: &str) -> String {
        self.key(format_args!("auth:lock:phone:{phone}"))
    }

    fn login_lock_ip(&self, ip: &str) -> String {
        self.key(format_args!("auth:lock:ip:{ip}"))
    }

    fn login_strikes_phone(&self, kind: Strike, phone: &str) -> String {
        self.key(format_args!("auth:{}:phone:{phone}", strike_name(kind)))
    }

    fn login_strikes_ip(&self, kind: Strike, ip: &str) -> String {
        self.key(format_args!("auth:{}:ip:{ip}", strike_name(kind)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_one_voucher_share_a_hash_tag() {
        let k = Keys::new("t:");
        assert_eq!(k.seckill_voucher(42), "t:seckill:{42}:voucher");
        assert_eq!(k.seckill_buyers(42), "t:seckill:{42}:buyers");
    }
}
