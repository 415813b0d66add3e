//! The seckill path's walk over a voucher's stock buckets (the split and
//! the order of the walk are `vouchers::buckets`): bucket after bucket until
//! one decides. A bucket found empty marks the buyer passed and never sells
//! to them again, so one order per user holds across buckets with each
//! check inside one bucket's script; only the walk's last bucket answers
//! "sold out".

use std::time::Duration;

use super::scripts;
use super::scripts::Window;
use super::Outcome;
use crate::ids::{OrderId, Sale, UserId, VoucherId};
use crate::kv::Kv;
use crate::vouchers::buckets::walk;

/// Walks voucher `voucher_id`'s `n` buckets for `user_id` from their first
/// until one decides: the bucket that decided and its answer
/// (`seckill.lua`'s). `windows` (keyed in the first bucket) are counted
/// there only. A call that fails ends the walk with the bucket it failed
/// in, where the script may have run with only its reply lost.
pub async fn reserve(
    kv: &Kv,
    voucher_id: VoucherId,
    n: u16,
    user_id: UserId,
    order_id: OrderId,
    windows: &[Window],
) -> Result<(Sale, (Outcome, Duration)), (Sale, redis::RedisError)> {
    let last = n.max(1) - 1;
    for (step, bucket) in walk(user_id, n).enumerate() {
        let sale = Sale { voucher_id, bucket };
        let windows = if step == 0 { windows } else { &[] };
        let walk_on = step < usize::from(last);
        match scripts::reserve_in_walk(kv, sale, user_id, order_id, windows, walk_on).await {
            Ok(Some(decided)) => return Ok((sale, decided)),
            Ok(None) => {}
            Err(err) => return Err((sale, err)),
        }
    }
    unreachable!("the walk's last bucket decides")
}
