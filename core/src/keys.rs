//! Every business Redis key CityHub uses, in one place, as constructors on
//! the platform's [`Keys`] (bring [`CityKeys`] into scope). Each documents the
//! key's type and who writes it. The keys of one seckill sale bucket share
//! one hash tag, `{<voucher id>}` for bucket 0 and a tag picked for its slot
//! after that (see `tagged` and [`Sale`]), so the scripts that touch them
//! together also run on Redis Cluster, and a voucher's buckets spread over
//! its masters.

use cityhub_platform::kv::{conn, Keys};

use crate::ids::{NoteId, OrderId, Sale, ShopId, UserId, VoucherId};

pub trait CityKeys {
    /// Hash `stock`, `begin_ms`, `end_ms`, `pay_value`: the live seckill state,
    /// preloaded when the voucher is created. Written by `seckill.lua`.
    fn seckill_voucher(&self, sale: impl Into<Sale>) -> String;
    /// Hash user id -> reservation: `<id>` reserved, `<id>:c` confirmed by the
    /// worker, `<id>:r` released (see `seckill::scripts`).
    fn seckill_buyers(&self, sale: impl Into<Sale>) -> String;
    /// String (integer) with a TTL: an ordinary coupon's units left, a gate
    /// in front of MySQL's `ordinary_vouchers.stock` (the truth); loaded from
    /// it by the first claim that finds it missing (see `vouchers::claims`).
    fn coupon_stock(&self, voucher_id: VoucherId) -> String;
    /// Sorted set with a TTL: one subject's recent seckill attempts on a
    /// voucher (`subject` is `user`, `ip` or `global`), the window of
    /// `limits.seckill`, counted by `seckill.lua`.
    fn seckill_limit(&self, sale: impl Into<Sale>, subject: &str, value: &str) -> String;
    /// String with a TTL (`reconcile.republish_quiet_secs`): the reconciler
    /// re-published this order lately; it is not sent again meanwhile.
    fn seckill_republished(&self, sale: impl Into<Sale>, order_id: OrderId) -> String;
    /// Set of the stock-release event ids `stock_release.lua` applied, so a
    /// redelivered event gives nothing back twice.
    fn seckill_released(&self, sale: impl Into<Sale>) -> String;
    /// Set of the order ids whose reservation `seckill_revoke.lua` undid:
    /// their shoppers were told 503, so a late message of one is refused as
    /// revoked even after the buyer bought again.
    fn seckill_revoked(&self, sale: impl Into<Sale>) -> String;
    /// Hash with a TTL: buyers a rebuild stages before `seckill_rebuild.lua`
    /// moves them into place (`token` is the rebuild's own).
    fn seckill_staged(&self, sale: impl Into<Sale>, token: &str) -> String;
    /// String [`PendingOrder`](crate::seckill::PendingOrder) with a TTL: an
    /// accepted order the worker has not stored yet, so its owner can see it as `queued`.
    fn pending_order(&self, order_id: OrderId) -> String;
    /// GEO set of the shops of one type with a position (member: shop id),
    /// plus the member `-` that marks an index built from MySQL (see
    /// `shops::geo`). The type is the hash tag: a rebuild writes a copy
    /// beside it and renames it into place.
    fn shop_geo(&self, type_id: u64) -> String;
    /// String with a TTL: the lock of whoever rebuilds one type's GEO index.
    fn shop_geo_lock(&self, type_id: u64) -> String;
    /// HyperLogLog of the signed-in users who read a shop on one day (UTC),
    /// expiring `shops.uv_retention_days` after it.
    fn shop_visitors(&self, shop_id: ShopId, day: chrono::NaiveDate) -> String;
    /// Sorted set: one of a user's follow lists (`list` is `followings` or
    /// `followers`), member the other user's id, score the follow time in ms,
    /// plus the marker `-` at 0 that says it was built from MySQL (see
    /// `social::lists`). Written by `social_apply.lua`, rebuilt by readers.
    fn follow_list(&self, user_id: UserId, list: &str) -> String;
    /// Sorted set: who likes a note (member: user id, score: like time in
    /// ms), plus the marker `-` at 0 that says it was built from MySQL's
    /// `note_likes`. Written by `note_like.lua` under the note's row lock;
    /// rebuilt by readers when missing (see `notes`).
    fn note_likes(&self, note_id: NoteId) -> String;
    /// Sorted set: a user's feed inbox (member: note id, score: publish
    /// time in ms), the newest `notes.inbox_max`. Written by the feed
    /// consumer (see `notes::feed`).
    fn feed_inbox(&self, user_id: UserId) -> String;
    /// Sorted set: an author's own notes (member: note id, score: publish
    /// time in ms), the newest `notes.inbox_max`: what readers pull of an
    /// author who is not pushed.
    fn feed_authored(&self, user_id: UserId) -> String;
    /// Set: the authors whose notes are pulled by their readers instead of
    /// pushed (more than `notes.pull_above_followers` followers).
    fn feed_pulled(&self) -> String;
    /// String with a TTL: the lock of whoever rebuilds a follow list.
    fn follow_list_lock(&self, user_id: UserId, list: &str) -> String;
    /// Hash `followers`, `followings`: a user's counts, written by the follow
    /// consumer and the count correction, filled by readers when missing.
    fn follow_counts(&self, user_id: UserId) -> String;
    /// String (JSON) with a TTL: a user's computed recommendations.
    fn recommendations(&self, user_id: UserId) -> String;
    /// BITMAP: a user's sign-ins of one month (`month` is `YYYY-MM`), bit
    /// `day - 1` set for each day signed (see `signin`). No TTL: it is the
    /// only copy.
    fn sign_month(&self, user_id: UserId, month: &str) -> String;
    /// String: the login code sent to a phone, with a TTL. Every key of a
    /// phone's login carries the phone's hash tag (one script touches them).
    fn login_code(&self, phone: &str) -> String;
    /// Hash with the code's TTL: one code request's challenge (the code it
    /// is bound to, the guesses made).
    fn login_challenge(&self, phone: &str, challenge: &str) -> String;
    /// String with a TTL (the resend interval): a code went out lately.
    fn login_sms_recent(&self, phone: &str) -> String;
    /// Counter with a TTL (the day window): codes sent to the phone.
    fn login_sms_day(&self, phone: &str) -> String;
    /// Counter with a TTL (the day window): wrong guesses at the phone.
    fn login_wrong_day(&self, phone: &str) -> String;
    /// String: JSON session behind a bearer token, under the token's
    /// SHA-256 (hex), with a sliding TTL.
    fn session(&self, token_hash: &str) -> String;
    /// String with a TTL: the client (an IPv4 address or an IPv6 /64) is
    /// locked out of login until it expires.
    fn login_lock_client(&self, client: &str) -> String;
    /// Counter with a TTL (the window): strikes of `kind` from a client,
    /// across phones.
    fn login_strikes_client(&self, kind: Strike, client: &str) -> String;
}

/// Which login strikes are counted (each kind has keys of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    CodeRequest,
    WrongCode,
}

fn strike_name(kind: Strike) -> &'static str {
    match kind {
        Strike::CodeRequest => "codes",
        Strike::WrongCode => "wrong",
    }
}

impl CityKeys for Keys {
    fn seckill_voucher(&self, sale: impl Into<Sale>) -> String {
        self.key(format_args!("seckill:{}:voucher", tagged(sale.into())))
    }

    fn seckill_buyers(&self, sale: impl Into<Sale>) -> String {
        self.key(format_args!("seckill:{}:buyers", tagged(sale.into())))
    }

    fn coupon_stock(&self, voucher_id: VoucherId) -> String {
        self.key(format_args!("coupon:{{{voucher_id}}}:stock"))
    }

    fn seckill_limit(&self, sale: impl Into<Sale>, subject: &str, value: &str) -> String {
        self.key(format_args!("seckill:{}:limit:{subject}:{value}", tagged(sale.into())))
    }

    fn seckill_republished(&self, sale: impl Into<Sale>, order_id: OrderId) -> String {
        self.key(format_args!("seckill:{}:republished:{order_id}", tagged(sale.into())))
    }

    fn seckill_released(&self, sale: impl Into<Sale>) -> String {
        self.key(format_args!("seckill:{}:released", tagged(sale.into())))
    }

    fn seckill_revoked(&self, sale: impl Into<Sale>) -> String {
        self.key(format_args!("seckill:{}:revoked", tagged(sale.into())))
    }

    fn seckill_staged(&self, sale: impl Into<Sale>, token: &str) -> String {
        self.key(format_args!("seckill:{}:staged:{token}", tagged(sale.into())))
    }

    fn pending_order(&self, order_id: OrderId) -> String {
        self.key(format_args!("order:{order_id}:pending"))
    }

    fn shop_geo(&self, type_id: u64) -> String {
        self.key(format_args!("shops:geo:{{{type_id}}}"))
    }

    fn shop_geo_lock(&self, type_id: u64) -> String {
        self.key(format_args!("shops:geo:{{{type_id}}}:lock"))
    }

    fn shop_visitors(&self, shop_id: ShopId, day: chrono::NaiveDate) -> String {
        self.key(format_args!("shop:{{{shop_id}}}:uv:{}", day.format("%Y%m%d")))
    }

    fn follow_list(&self, user_id: UserId, list: &str) -> String {
        self.key(format_args!("social:{{{user_id}}}:{list}"))
    }

    fn note_likes(&self, note_id: NoteId) -> String {
        self.key(format_args!("note:{{{note_id}}}:likes"))
    }

    fn feed_inbox(&self, user_id: UserId) -> String {
        self.key(format_args!("feed:{{{user_id}}}:inbox"))
    }

    fn feed_authored(&self, user_id: UserId) -> String {
        self.key(format_args!("feed:{{{user_id}}}:notes"))
    }

    fn feed_pulled(&self) -> String {
        self.key(format_args!("feed:pulled"))
    }

    fn follow_list_lock(&self, user_id: UserId, list: &str) -> String {
        self.key(format_args!("social:{{{user_id}}}:{list}:lock"))
    }

    fn follow_counts(&self, user_id: UserId) -> String {
        self.key(format_args!("social:{{{user_id}}}:counts"))
    }

    fn sign_month(&self, user_id: UserId, month: &str) -> String {
        self.key(format_args!("sign:{{{user_id}}}:{month}"))
    }

    fn recommendations(&self, user_id: UserId) -> String {
        self.key(format_args!("social:{{{user_id}}}:recommendations"))
    }

    fn login_code(&self, phone: &str) -> String {
        self.key(format_args!("auth:{{{phone}}}:code"))
    }

    fn login_challenge(&self, phone: &str, challenge: &str) -> String {
        self.key(format_args!("auth:{{{phone}}}:challenge:{challenge}"))
    }

    fn login_sms_recent(&self, phone: &str) -> String {
        self.key(format_args!("auth:{{{phone}}}:sms:recent"))
    }

    fn login_sms_day(&self, phone: &str) -> String {
        self.key(format_args!("auth:{{{phone}}}:sms:day"))
    }

    fn login_wrong_day(&self, phone: &str) -> String {
        self.key(format_args!("auth:{{{phone}}}:wrong:day"))
    }

    fn session(&self, token_hash: &str) -> String {
        self.key(format_args!("auth:session:{token_hash}"))
    }

    fn login_lock_client(&self, client: &str) -> String {
        self.key(format_args!("auth:client:{{{client}}}:lock"))
    }

    fn login_strikes_client(&self, kind: Strike, client: &str) -> String {
        self.key(format_args!("auth:client:{{{client}}}:{}", strike_name(kind)))
    }
}

/// A sale bucket's name in its keys, hash tag first: `{<voucher>}` for
/// bucket 0; for bucket `b` a tag chosen for its slot, `b` 64ths of the slot
/// space from bucket 0's in bit-reversed order (1/2, 1/4, 3/4, 1/8, ...),
/// then the voucher and bucket. So the first `n` buckets of a voucher sit
/// about `16384 / n` slots apart and spread over every master of a cluster
/// whose masters hold equal runs of slots (3 masters: 2 buckets on 2, 3 or
/// more on all 3), however the ids fall.
fn tagged(sale: Sale) -> String {
    if sale.bucket == 0 {
        return format!("{{{}}}", sale.voucher_id);
    }
    let home = sale.voucher_id.to_string();
    let step = u16::from((sale.bucket as u8 % 64).reverse_bits() >> 2);
    let slot = (conn::slot(home.as_bytes()) + step * 256) % 16384;
    format!("{{{}}}:{home}:{}", conn::tag_of_slot(slot), sale.bucket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_one_voucher_share_a_hash_tag() {
        let k = Keys::new("t:");
        assert_eq!(k.seckill_voucher(VoucherId(42)), "t:seckill:{42}:voucher");
        assert_eq!(k.seckill_buyers(VoucherId(42)), "t:seckill:{42}:buyers");
    }

    #[test]
    fn the_buckets_of_a_voucher_sit_apart_in_the_slot_space() {
        let k = Keys::new("t:");
        let voucher_id = VoucherId(42);
        let slot = |bucket| conn::slot(k.seckill_buyers(Sale { voucher_id, bucket }).as_bytes());
        let first = slot(0);
        let apart = |bucket, sixty_fourths: u16| assert_eq!(slot(bucket), (first + sixty_fourths * 256) % 16384);
        apart(1, 32);
        apart(2, 16);
        apart(3, 48);
        apart(4, 8);
        for bucket in 0..64 {
            let sale = Sale { voucher_id, bucket };
            assert_eq!(conn::slot(k.seckill_voucher(sale).as_bytes()), slot(bucket), "one slot per bucket");
            assert_eq!(conn::slot(k.seckill_limit(sale, "ip", "1.2.3.4").as_bytes()), slot(bucket));
        }
        let b3 = k.seckill_buyers(Sale { voucher_id, bucket: 3 });
        assert!(b3.ends_with(":42:3:buyers"), "{b3}");
    }
}
