//! The seckill rules: one call decides a shopper's request for a coupon.
//!
//! 1. Voucher metadata comes from the in-process cache (never MySQL).
//! 2. A fresh order id, only while this process holds its node lease
//!    (else 503: ids could collide).
//! 3. `seckill.lua` checks the sale window, stock and one-order-per-user and
//!    reserves a unit for the order id, atomically, in Redis. A voucher
//!    split into stock buckets is walked bucket by bucket ([`walk`]):
//!    one call for a buyer whose first bucket has stock, one more per empty
//!    bucket passed.
//! 4. The order message goes to RocketMQ through the batching publisher.
//! 5. If the broker refuses or times out, `seckill_revoke.lua` turns the
//!    reservation into a tombstone and gives the unit back, but only while it
//!    is still unconfirmed: if the worker already confirmed it (the batch
//!    reached the broker after all), the order stands and the shopper is told
//!    so. A missing entry (Redis lost it) is never answered 202.
//!
//! A 202 is answered only after the broker stored the message, and only
//! while the Redis copy the unit was reserved in is still current (confirmed
//! within `CONFIRMED_WITHIN`); a reservation whose copy was replaced before
//! its message was stored is settled once the sale is rebuilt: 202 if the
//! rebuild counted its order, else revoked and 503 (see
//! `Seckill::answer_stored`). If the reserve
//! call itself fails, the script may have run with only its reply lost, so
//! that exact order id is revoked (the revocation matches nothing else). A
//! revocation that cannot reach Redis is retried in the background.
//!
//! Steps 3 to 5 run in tracked tasks: a shopper who hangs up cannot leave a
//! reservation without its message, and [`Seckill::drain`] lets shutdown
//! wait for them.
//!
//! Open window: if the process dies between steps 3 and 4 (or every revocation
//! retry fails), Redis holds a reservation that no message carries. The
//! reconciler re-publishes it once it is older than its grace period (see
//! `crate::reconcile`).
//!
//! [`page`] is the read side: a voucher's page with its units left.
//!
//! A voucher whose Redis keys are gone, or were written under an older Redis
//! generation (Redis restarted, failed over or was restored: its copy may be
//! older than the sale), answers `sale_paused` (503) while MySQL says its
//! sale is on, never "unknown voucher": the reconciler rebuilds the keys
//! from MySQL once every order accepted before the pause is stored.

pub mod message;
pub mod outcome;
pub mod page;
pub mod scripts;
pub mod walk;

use std::sync::Arc;
use std::time::Duration;

use cityhub_platform::cache::CacheError;
use cityhub_platform::ids::{IdError, OrderIds};
use cityhub_platform::kv::generation::CONFIRMED_WITHIN;
use cityhub_platform::mq::publisher::{BatchPublisher, PublishError};
use cityhub_platform::ratelimit::{Limit, Rules, Subject};
use redis::AsyncCommands;
use tokio_util::task::TaskTracker;

pub use message::{OrderMessage, PendingOrder};
pub use outcome::{Class, Outcome};
use scripts::Revoke;

use crate::ids::{OrderId, Sale, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::vouchers::{buckets, VoucherDetails, Vouchers};

/// A request that won: the order id, now queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    pub order_id: OrderId,
}

/// Every way a seckill request can fail.
#[derive(Debug, thiserror::Error)]
pub enum SeckillError {
    /// The sale's rules said no (sold out, already bought, not started,
    /// ended, unknown voucher).
    #[error("{}", .0.message())]
    Refused(Outcome),
    /// Over the route's rate limit; a retry can pass after this long.
    #[error("{}", Outcome::RateLimited.message())]
    Limited(Duration),
    #[error("the order queue is unavailable")]
    QueueUnavailable(#[source] PublishError),
    #[error("order ids cannot be issued right now: {0}")]
    Ids(#[source] IdError),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    /// The voucher's details could not be read.
    #[error(transparent)]
    Cache(CacheError),
}

impl SeckillError {
    /// The outcome this failure is.
    pub fn outcome(&self) -> Outcome {
        match self {
            SeckillError::Refused(outcome) => *outcome,
            SeckillError::Limited(_) => Outcome::RateLimited,
            SeckillError::QueueUnavailable(_) => Outcome::QueueUnavailable,
            SeckillError::Ids(_) => Outcome::IdsUnavailable,
            SeckillError::Redis(_) | SeckillError::Cache(_) => Outcome::CacheUnavailable,
        }
    }
}

/// The seckill service; share it behind an `Arc`.
pub struct Seckill {
    /// Vouchers Redis recently called sold out (see `SeckillSettings`).
    sold_out: Option<moka::sync::Cache<VoucherId, ()>>,
    kv: Kv,
    vouchers: Vouchers,
    ids: Arc<OrderIds>,
    publisher: BatchPublisher,
    pending_ttl: Duration,
    /// The route's limits (`limits.seckill`), counted by the reserve script.
    limits: Rules,
    /// Every decision and background revocation in flight, for [`Seckill::drain`].
    tasks: TaskTracker,
}

impl Seckill {
    pub fn new(
        kv: Kv,
        vouchers: Vouchers,
        ids: Arc<OrderIds>,
        publisher: BatchPublisher,
        pending_ttl: Duration,
        sold_out_for: Duration,
        limits: Rules,
    ) -> Self {
        for outcome in Outcome::ALL {
            metrics::counter!(crate::metrics::SECKILL_REQUESTS, "outcome" => outcome.label()).increment(0);
        }
        let sold_out = (!sold_out_for.is_zero())
            .then(|| moka::sync::Cache::builder().max_capacity(100_000).time_to_live(sold_out_for).build());
        Self { sold_out, kv, vouchers, ids, publisher, pending_ttl, limits, tasks: TaskTracker::new() }
    }

    /// Tries to win voucher `voucher_id` for `user_id`, whose client is at
    /// `ip` (see the module doc), counting the outcome in
    /// `cityhub_seckill_requests_total`.
    pub async fn attempt(
        self: &Arc<Self>,
        user_id: UserId,
        voucher_id: VoucherId,
        ip: String,
        request_id: Option<String>,
    ) -> Result<Accepted, SeckillError> {
        let outcome = if self.sold_out.as_ref().is_some_and(|c| c.contains_key(&voucher_id)) {
            Err(SeckillError::Refused(Outcome::SoldOut))
        } else {
            // A shopper hanging up cannot stop it between the reservation
            // and the publish or the revocation.
            let this = Arc::clone(self);
            let decision = async move { this.decide(user_id, voucher_id, &ip, request_id).await };
            cityhub_platform::join(self.tasks.spawn(decision)).await
        };
        let label = outcome.as_ref().map_or_else(SeckillError::outcome, |_| Outcome::Accepted).label();
        metrics::counter!(crate::metrics::SECKILL_REQUESTS, "outcome" => label).increment(1);
        if let Err(SeckillError::Limited(_)) = outcome {
            metrics::counter!(crate::metrics::RATE_LIMITED, "route" => "seckill").increment(1);
        }
        outcome
    }

    /// Stops taking new work and waits (at most `timeout`) for in-flight
    /// decisions and revocations; true when all finished.
    pub async fn drain(&self, timeout: Duration) -> bool {
        self.tasks.close();
        tokio::time::timeout(timeout, self.tasks.wait()).await.is_ok()
    }

    async fn decide(
        self: &Arc<Self>,
        user_id: UserId,
        voucher_id: VoucherId,
        ip: &str,
        request_id: Option<String>,
    ) -> Result<Accepted, SeckillError> {
        let details = self.vouchers.details(voucher_id).await.map_err(SeckillError::Cache)?;
        let details = details.ok_or(SeckillError::Refused(Outcome::UnknownVoucher))?;
        let order_id = OrderId(self.ids.next_id().map_err(SeckillError::Ids)?);
        let walked = self.reserve(&details, user_id, order_id, ip).await?;
        let sale = walked.sale;
        match walked.outcome {
            Outcome::Accepted => {}
            Outcome::RateLimited => return Err(SeckillError::Limited(walked.retry_after)),
            Outcome::UnknownVoucher | Outcome::SalePaused => return Err(SeckillError::Refused(without_keys(&details))),
            refused => {
                // Sold out for every shopper only when no bucket held a unit.
                if let (Outcome::SoldOut, false, Some(c)) = (refused, walked.passed_stock, &self.sold_out) {
                    c.insert(voucher_id, ());
                }
                return Err(SeckillError::Refused(refused));
            }
        }
        // From here to the publish is the window the module doc describes.
        let message = OrderMessage {
            order_id,
            user_id,
            voucher_id,
            bucket: sale.bucket,
            pay_amount: details.pay_value,
            created_at_ms: order_id.issued_at_ms(),
            request_id,
        };
        let body = serde_json::to_vec(&message).expect("order message serializes");
        let pending_key = self.kv.keys.pending_order(order_id);
        let mut conn = self.kv.conn();
        let mark_pending = conn.set_ex::<_, _, ()>(
            &pending_key,
            PendingOrder { user_id, voucher_id, bucket: sale.bucket }.encode(),
            self.pending_ttl.as_secs(),
        );
        let (marked, published) = tokio::join!(mark_pending, self.publisher.publish(order_id.to_string(), body));
        if let Err(err) = marked {
            tracing::warn!(%order_id, error = %err, "cannot mark order as queued");
        }
        let Err(err) = published else {
            return self.answer_stored(sale, user_id, &walked.generation, order_id).await;
        };
        match self.revoke(sale, user_id, order_id).await {
            Some(Revoke::Confirmed) => {
                tracing::info!(%order_id, error = %err, "publish reported failure but the worker confirmed the order");
                Ok(Accepted { order_id })
            }
            outcome => {
                if outcome == Some(Revoke::Unknown) {
                    tracing::warn!(%order_id, "publish failed and Redis had no entry for the reservation");
                }
                let _: Result<(), _> = self.kv.conn().del(&pending_key).await;
                Err(SeckillError::QueueUnavailable(err))
            }
        }
    }

    /// The answer to a reservation whose message the broker stored: 202
    /// while the Redis copy it was reserved in is still current, as
    /// confirmed within [`CONFIRMED_WITHIN`]. A copy lost meanwhile (Redis
    /// restarted, failed over) is rebuilt from MySQL once every order
    /// answered 202 is stored, and the reconciler tells that moment by
    /// this bound, not by how long a send may take (see
    /// `cityhub_platform::kv::generation`); such a reservation is settled
    /// after the rebuild instead ([`Seckill::settle`]).
    async fn answer_stored(
        self: &Arc<Self>,
        sale: Sale,
        user_id: UserId,
        generation: &str,
        order_id: OrderId,
    ) -> Result<Accepted, SeckillError> {
        let key = self.kv.keys.seckill_voucher(sale);
        match self.kv.generation.confirmed_within(&key, generation, CONFIRMED_WITHIN).await {
            Ok(true) => Ok(Accepted { order_id }),
            Ok(false) => {
                tracing::info!(%order_id, "order stored after the Redis copy it was reserved in was replaced");
                self.settle(sale, user_id, order_id).await
            }
            Err(err) => {
                tracing::info!(%order_id, error = %err, "order stored, but its Redis copy cannot be confirmed");
                self.settle(sale, user_id, order_id).await
            }
        }
    }

    /// A stored reservation whose Redis copy was replaced, or could not be
    /// confirmed: once the sale's state is current again (rebuilt from
    /// MySQL, counting every order stored by then; at most [`SETTLE_WITHIN`]),
    /// the reservation is revoked there. If the rebuild or the worker had
    /// confirmed it, the order stands and is answered 202; otherwise the
    /// revocation makes a late copy parked, and the shopper is told the sale
    /// paused.
    async fn settle(
        self: &Arc<Self>,
        sale: Sale,
        user_id: UserId,
        order_id: OrderId,
    ) -> Result<Accepted, SeckillError> {
        let deadline = tokio::time::Instant::now() + SETTLE_WITHIN;
        while tokio::time::Instant::now() < deadline && !scripts::is_current(&self.kv, sale).await.unwrap_or(false) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        match self.revoke(sale, user_id, order_id).await {
            Some(Revoke::Confirmed) => Ok(Accepted { order_id }),
            _ => Err(SeckillError::Refused(Outcome::SalePaused)),
        }
    }

    /// Walks the voucher's buckets ([`walk::reserve`]), the route's
    /// limits counted in the buyer's first bucket. A call that fails is
    /// revoked where it failed (the script may have run and only its reply
    /// been lost).
    async fn reserve(
        self: &Arc<Self>,
        details: &VoucherDetails,
        user_id: UserId,
        order_id: OrderId,
        ip: &str,
    ) -> Result<walk::Walked, SeckillError> {
        let n = details.buckets();
        let home = Sale { voucher_id: details.id, bucket: buckets::home(user_id, n) };
        let windows = self.windows(home, n, user_id, ip);
        match walk::reserve(&self.kv, details.id, n, user_id, order_id, &windows).await {
            Ok(decided) => Ok(decided),
            Err((sale, err)) => {
                self.revoke(sale, user_id, order_id).await;
                Err(SeckillError::Redis(err))
            }
        }
    }

    /// The windows the reserve script counts this attempt in: one per rule
    /// of `limits.seckill`, keyed under the hash tag of `sale`, the buyer's
    /// first bucket. A shopper's own window is always in that bucket; an ip
    /// or global window is counted per bucket, so a voucher of `n` buckets
    /// gives each its `1/n` part of the most attempts (rounded up).
    fn windows(&self, sale: Sale, n: u16, user_id: UserId, ip: &str) -> Vec<scripts::Window> {
        let mut windows = Vec::new();
        for rule in self.limits.iter() {
            let Limit::Window { window_ms, max } = rule.limit else { continue };
            let (value, max) = match rule.by {
                Subject::User => (user_id.to_string(), max),
                Subject::Ip => (ip.to_owned(), max.div_ceil(u32::from(n))),
                Subject::Global => ("all".to_owned(), max.div_ceil(u32::from(n))),
            };
            windows.push((self.kv.keys.seckill_limit(sale, rule.by.as_str(), &value), window_ms, max));
        }
        windows
    }

    /// Releases exactly `order_id`, retrying a few times at once; if Redis
    /// still cannot be reached, keeps retrying in a tracked background task
    /// and answers `None`.
    async fn revoke(self: &Arc<Self>, sale: Sale, user_id: UserId, order_id: OrderId) -> Option<Revoke> {
        let mut delay = Duration::from_millis(50);
        for _ in 0..3 {
            match scripts::revoke(&self.kv, sale, user_id, order_id).await {
                Ok(outcome) => return Some(outcome),
                Err(err) => tracing::warn!(%order_id, error = %err, "cannot revoke a reservation yet"),
            }
            tokio::time::sleep(delay).await;
            delay *= 4;
        }
        let this = Arc::clone(self);
        self.tasks.spawn(async move {
            for _ in 0..REVOKE_RETRIES {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if let Ok(outcome) = scripts::revoke(&this.kv, sale, user_id, order_id).await {
                    tracing::info!(%order_id, ?outcome, "reservation revoked after retries");
                    return;
                }
            }
            tracing::error!(%order_id, "reservation not revoked after retries; it stays held until repaired");
        });
        None
    }
}

/// The longest a stored reservation whose Redis copy was replaced waits
/// for its sale to be rebuilt before it is settled (well inside the
/// request's timeout; a rebuild comes about a second after the loss).
const SETTLE_WITHIN: Duration = Duration::from_secs(5);

/// Background revocation attempts, one a second, before giving up (see the open window above).
const REVOKE_RETRIES: u32 = 30;

/// Why Redis has no current keys for a voucher MySQL knows: its sale has
/// not begun or has ended, or the sale is on and Redis lost the keys (or
/// holds an older copy): paused until the reconciler rebuilds them.
/// An ordinary coupon has no seckill keys: it is not sold here.
fn without_keys(details: &VoucherDetails) -> Outcome {
    let Some(sale) = details.sale else { return Outcome::UnknownVoucher };
    let now = cityhub_platform::now_ms() as i64;
    if now < sale.begin_ms {
        Outcome::NotStarted
    } else if now >= sale.end_ms {
        Outcome::Ended
    } else {
        Outcome::SalePaused
    }
}
