//! Claiming ordinary coupons: a shopper takes one unit at a time, as often
//! as `limits.claims` (a per-user sliding window, checked by the route)
//! lets them, while units last.
//!
//! MySQL holds the truth: a claim is a `voucher_claims` row written in the
//! same transaction as the conditional `UPDATE` that takes its unit from
//! `ordinary_vouchers.stock` (`stock > 0`), so a coupon is never claimed
//! beyond its stock, whatever Redis says. Redis holds a counter in front
//! of it (`coupon_stock.lua`): once it reaches 0, claims are refused without
//! a MySQL call. A claim that took a Redis unit and then failed in MySQL
//! gives it back; a missing counter is loaded from MySQL by the next claim.
//! A process that dies between the two leaves the counter one low; the
//! counter expires [`COUNTER_TTL`] after its load and is loaded again from
//! MySQL, so such a unit is claimable again within that time. A reload
//! while claims are in flight can only come out high, which MySQL's
//! conditional `UPDATE` absorbs: never a claim too many.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use redis::Script;
use serde::Serialize;

use super::{VoucherKind, Vouchers};
use crate::ids::{ClaimId, UserId, VoucherId};
use crate::kv::CityKeys;

static STOCK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../../../lua/coupon_stock.lua")));

/// How long a loaded counter lives before the next claim reloads it from
/// MySQL: the longest a unit a dead process took stays unclaimable.
pub const COUNTER_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// The script this module runs, to load at connect time.
pub fn script() -> &'static Script {
    &STOCK
}

/// A unit a shopper claimed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    pub id: ClaimId,
    pub voucher_id: VoucherId,
    pub title: String,
    /// Cents.
    pub pay_value: u64,
    /// Cents.
    pub actual_value: u64,
    pub claimed_at: DateTime<Utc>,
}

/// Why a claim was refused.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("no such voucher")]
    UnknownVoucher,
    #[error("a seckill voucher is bought through its sale, not claimed")]
    NotClaimable,
    #[error("no units left")]
    SoldOut,
    #[error(transparent)]
    Cache(#[from] cityhub_platform::cache::CacheError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

impl Vouchers {
    /// `user` claims one unit of ordinary coupon `id` (see the module doc).
    /// Runs in its own task, so a caller that goes away cannot stop it
    /// between taking the Redis unit and the commit (or the give-back).
    pub async fn claim(&self, user: UserId, id: VoucherId) -> Result<Claim, ClaimError> {
        let details = self.details(id).await?.ok_or(ClaimError::UnknownVoucher)?;
        if details.kind != VoucherKind::Ordinary {
            return Err(ClaimError::NotClaimable);
        }
        let this = self.clone();
        cityhub_platform::run_to_completion(async move {
            this.take_unit(id).await?;
            let stored = this.store_claim(user, id).await;
            if !matches!(stored, Ok(_) | Err(ClaimError::SoldOut)) {
                this.give_back(id).await;
            }
            stored
        })
        .await
    }

    /// Takes a unit from the Redis counter, loading it from MySQL if missing.
    async fn take_unit(&self, id: VoucherId) -> Result<(), ClaimError> {
        let key = self.kv.keys.coupon_stock(id);
        for _ in 0..2 {
            match STOCK.key(&key).arg("take").invoke_async::<i64>(&mut self.kv.conn()).await? {
                1 => return Ok(()),
                0 => return Err(ClaimError::SoldOut),
                _ => {
                    let left: Option<i64> =
                        sqlx::query_scalar("SELECT stock FROM ordinary_vouchers WHERE voucher_id = ?")
                            .bind(id)
                            .fetch_optional(&self.db)
                            .await?;
                    let left = left.ok_or(ClaimError::UnknownVoucher)?;
                    let ttl_ms = COUNTER_TTL.as_millis() as u64;
                    let load = redis::cmd("SET").arg(&key).arg(left).arg("NX").arg("PX").arg(ttl_ms).clone();
                    let _: () = load.query_async(&mut self.kv.conn()).await?;
                }
            }
        }
        Err(ClaimError::SoldOut)
    }

    /// The claim's row and its unit, in one transaction. MySQL out of units
    /// (the counter ran ahead of it) sets the counter to 0: MySQL's stock
    /// only falls, so no later claim can succeed.
    async fn store_claim(&self, user: UserId, id: VoucherId) -> Result<Claim, ClaimError> {
        let mut tx = self.db.begin().await?;
        let taken = sqlx::query("UPDATE ordinary_vouchers SET stock = stock - 1 WHERE voucher_id = ? AND stock > 0")
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if taken == 0 {
            drop(tx);
            let _: Result<(), _> = redis::cmd("SET")
                .arg(self.kv.keys.coupon_stock(id))
                .arg(0)
                .arg("XX")
                .arg("KEEPTTL")
                .query_async(&mut self.kv.conn())
                .await;
            return Err(ClaimError::SoldOut);
        }
        let claim_id = sqlx::query("INSERT INTO voucher_claims (voucher_id, user_id) VALUES (?, ?)")
            .bind(id)
            .bind(user)
            .execute(&mut *tx)
            .await?
            .last_insert_id();
        let claim = sqlx::query_as::<_, ClaimRow>(claims_where!("c.id = ?")).bind(claim_id).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        Ok(claim.into())
    }

    /// Puts back a unit a failed claim took; logged if Redis is away too.
    async fn give_back(&self, id: VoucherId) {
        let given = STOCK.key(self.kv.keys.coupon_stock(id)).arg("give").invoke_async::<i64>(&mut self.kv.conn()).await;
        if let Err(err) = given {
            tracing::warn!(voucher_id = %id, error = %err, "a failed claim's unit not given back: the counter stays one low");
        }
    }

    /// `user`'s claimed units, newest first: up to `limit` with an id below
    /// `before` (all when `None`).
    pub async fn claims_of(&self, user: UserId, before: Option<ClaimId>, limit: u32) -> Result<Vec<Claim>, ClaimError> {
        let rows =
            sqlx::query_as::<_, ClaimRow>(claims_where!("c.user_id = ? AND c.id < ? ORDER BY c.id DESC LIMIT ?"))
                .bind(user)
                .bind(before.map_or(u64::MAX, ClaimId::get))
                .bind(limit)
                .fetch_all(&self.db)
                .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
}

type ClaimRow = (ClaimId, VoucherId, String, u64, u64, DateTime<Utc>);

impl From<ClaimRow> for Claim {
    fn from((id, voucher_id, title, pay_value, actual_value, claimed_at): ClaimRow) -> Self {
        Self { id, voucher_id, title, pay_value, actual_value, claimed_at }
    }
}

/// The columns of a [`Claim`], `c` the claim and `v` its voucher.
macro_rules! claims_where {
    ($filter:literal) => {
        concat!(
            "SELECT c.id, c.voucher_id, v.title, v.pay_value, v.actual_value, c.claimed_at \
             FROM voucher_claims c JOIN vouchers v ON v.id = c.voucher_id WHERE ",
            $filter
        )
    };
}
use claims_where;
