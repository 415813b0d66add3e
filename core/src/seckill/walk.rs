//! The seckill path's walk over a voucher's stock buckets (the split and
//! the order of the walk are `vouchers::buckets`): bucket after bucket until
//! one decides. A bucket found empty marks the buyer passed and never sells
//! to them again, so one order per user holds across buckets with each
//! check inside one bucket's script; only the walk's last bucket answers
//! "sold out".

use std::sync::Arc;
use std::time::Duration;

use super::scripts::{self, Step, Window};
use super::Outcome;
use crate::ids::{OrderId, Sale, UserId, VoucherId};
use crate::kv::Kv;
use crate::vouchers::buckets::walk;

/// Where a walk ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walked {
    /// The bucket that decided.
    pub sale: Sale,
    pub outcome: Outcome,
    /// When limited, how long until a retry could pass.
    pub retry_after: Duration,
    /// A bucket the buyer had passed holds units again: a "sold out" is
    /// this buyer's, not the voucher's.
    pub passed_stock: bool,
    /// The Redis generation the deciding call ran under.
    pub generation: Arc<str>,
}

/// Walks voucher `voucher_id`'s `n` buckets for `user_id` from their first
/// until one decides (`seckill.lua`'s answer). `windows` (keyed in the
/// first bucket) are counted there only. A call that fails ends the walk
/// with the bucket it failed in, where the script may have run with only
/// its reply lost. A last bucket that answers "walk on" (the buyer passed
/// it: the voucher's bucket count changed under a stale copy of its
/// details) is sold out for this buyer.
pub async fn reserve(
    kv: &Kv,
    voucher_id: VoucherId,
    n: u16,
    user_id: UserId,
    order_id: OrderId,
    windows: &[Window],
) -> Result<Walked, (Sale, redis::RedisError)> {
    let last = usize::from(n.max(1) - 1);
    let mut passed_stock = false;
    for (step, bucket) in walk(user_id, n).enumerate() {
        let sale = Sale { voucher_id, bucket };
        let windows = if step == 0 { windows } else { &[] };
        let answer = scripts::reserve_in_walk(kv, sale, user_id, order_id, windows, step < last).await;
        let (step_answer, generation) = answer.map_err(|err| (sale, err))?;
        let (outcome, retry_after) = match step_answer {
            Step::Decided(outcome, wait) => (outcome, wait),
            Step::WalkOn { holds_stock } => {
                passed_stock |= holds_stock;
                if step < last {
                    continue;
                }
                (Outcome::SoldOut, Duration::ZERO)
            }
        };
        return Ok(Walked { sale, outcome, retry_after, passed_stock, generation });
    }
    unreachable!("a walk visits at least one bucket")
}
