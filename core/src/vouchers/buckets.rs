//! A hot voucher's stock split into buckets: the one place that decides
//! which bucket holds what and in which order a buyer visits them.
//!
//! Each bucket is a whole sale of its own in Redis (stock, buyers, released
//! and revoked sets under its hash tag, see [`Sale`]), written here when the
//! voucher is created ([`preload`]), so every seckill script runs on one
//! bucket unchanged and a cluster spreads the buckets
//! over its masters. Units never move between buckets: a bucket's stock plus
//! its live buyers is its [`share`] of the initial stock, whatever happens,
//! and the reconciler checks and rebuilds each bucket on its own.
//!
//! A buyer walks the buckets in one fixed order, starting at their
//! [`home`] (the walk itself is `seckill::walk`). A bucket that has no unit left marks the buyer passed (`p`) and
//! the walk goes on; a bucket never sells to a buyer it marked passed. So a
//! buyer's one live order is in the first bucket of their walk they did not
//! pass, and one-order-per-user holds across buckets with every check in one
//! bucket's script. "Sold out" is answered only by the walk's last bucket,
//! once every bucket was found empty. The cost: a unit released into a
//! bucket after some buyers passed it is sold only to buyers who have not.

use crate::ids::{Sale, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};

/// The most buckets a voucher can have.
pub const MAX: u16 = 64;

/// Bucket `bucket`'s part of `initial` units split over `buckets`: the
/// first `initial % buckets` buckets hold one unit more.
pub fn share(initial: i64, buckets: u16, bucket: u16) -> i64 {
    let n = i64::from(buckets.max(1));
    initial / n + i64::from(i64::from(bucket) < initial % n)
}

/// The bucket `user`'s walk starts at.
pub fn home(user: UserId, buckets: u16) -> u16 {
    (user.get() % u64::from(buckets.max(1))) as u16
}

/// The buckets in the order `user` visits them.
pub fn walk(user: UserId, buckets: u16) -> impl Iterator<Item = u16> {
    let (n, start) = (buckets.max(1), home(user, buckets));
    (0..n).map(move |i| (start + i) % n)
}

/// Whether `user`, holding an order in bucket `bought_in`, walked past
/// `bucket` on the way (so `bucket` marked them passed).
pub fn passed(user: UserId, buckets: u16, bought_in: u16, bucket: u16) -> bool {
    let at = |b: u16| walk(user, buckets).position(|x| x == b);
    matches!((at(bucket), at(bought_in)), (Some(p), Some(q)) if p < q)
}

/// A new sale's state in bucket `sale`: `stock` units, the sale window
/// (Unix ms) and the price, written at once (buyers, releases and
/// revocations of an earlier life of the keys dropped) under the slot's
/// verified generation. The one place outside the seckill scripts that
/// writes a bucket's hash.
pub async fn preload(
    kv: &Kv,
    sale: Sale,
    stock: i64,
    (begin_ms, end_ms): (i64, i64),
    pay_value: u64,
) -> redis::RedisResult<()> {
    let generation = kv.generation.current(&kv.keys.seckill_voucher(sale)).await?;
    redis::pipe()
        .atomic()
        .del(kv.keys.seckill_buyers(sale))
        .del(kv.keys.seckill_released(sale))
        .del(kv.keys.seckill_revoked(sale))
        .hset_multiple(
            kv.keys.seckill_voucher(sale),
            &[
                ("stock", stock.to_string()),
                ("begin_ms", begin_ms.to_string()),
                ("end_ms", end_ms.to_string()),
                ("pay_value", pay_value.to_string()),
                ("gen", generation.to_string()),
            ],
        )
        .query_async(&mut kv.conn())
        .await
}

/// Every bucket of voucher `voucher_id`.
pub fn sales(voucher_id: VoucherId, buckets: u16) -> impl Iterator<Item = Sale> {
    (0..buckets.max(1)).map(move |bucket| Sale { voucher_id, bucket })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_stock_and_differ_by_at_most_one() {
        for (initial, n) in [(0, 1), (1, 4), (10, 4), (100, 16), (7, 16), (1_000_003, 64)] {
            let shares: Vec<i64> = (0..n).map(|b| share(initial, n, b)).collect();
            assert_eq!(shares.iter().sum::<i64>(), initial, "{initial} over {n}");
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn a_walk_visits_every_bucket_once_from_home_and_passes_those_before_the_order() {
        let user = UserId(10);
        let order: Vec<u16> = walk(user, 4).collect();
        assert_eq!(order, [2, 3, 0, 1]);
        assert!(passed(user, 4, 0, 2) && passed(user, 4, 0, 3));
        assert!(!passed(user, 4, 0, 0) && !passed(user, 4, 0, 1) && !passed(user, 4, 2, 3));
        assert_eq!(walk(user, 1).collect::<Vec<_>>(), [0]);
        assert!(!passed(user, 1, 0, 0));
    }
}
