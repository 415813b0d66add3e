//! A voucher as a shopper's page shows it: its details from the shared
//! two-level cache (no MySQL call on a hit, none at all on an L1 hit), then
//! what the sale says now, from Redis in one round trip: the units left and
//! whether the viewer holds one. Stock is read on every view, never cached:
//! it changes every millisecond of a sale.
//!
//! An ordinary coupon shows its Redis counter's units left (`None` until
//! its first claim loads it) and no `held`: a shopper may hold many units,
//! listed by `GET /users/me/vouchers`.
//!
//! A voucher split into stock buckets shows the sum of its buckets' units
//! and whether any bucket holds the viewer's unit: two reads per bucket,
//! sent together (one round trip per node).
//!
//! The read is a display, not a decision: while a voucher's sale is paused
//! (Redis lost or replaced its keys) it shows what Redis holds, and only the
//! seckill script decides a purchase.

use std::sync::Arc;

use cityhub_platform::cache::CacheError;

use super::scripts::BuyerEntry;
use crate::ids::{ShopId, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::vouchers::buckets;
use crate::vouchers::{VoucherDetails, VoucherKind, Vouchers};

/// One voucher's page.
#[derive(Debug, Clone)]
pub struct VoucherPage {
    pub details: Arc<VoucherDetails>,
    /// Units left as Redis says now; `None` while the sale has no keys.
    pub stock_left: Option<i64>,
    /// Whether the viewer holds a unit of a seckill voucher (reserved or
    /// confirmed); `None` for an anonymous viewer and an ordinary coupon.
    pub held: Option<bool>,
}

/// Why a page cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// The page of voucher `id` for `viewer`; `None` for an unknown voucher.
pub async fn page(
    vouchers: &Vouchers,
    kv: &Kv,
    id: VoucherId,
    viewer: Option<UserId>,
) -> Result<Option<VoucherPage>, PageError> {
    let Some(details) = vouchers.details(id).await? else { return Ok(None) };
    Ok(now(kv, vec![details], viewer).await?.pop())
}

/// The pages of shop `shop`'s vouchers, oldest first: the list and the
/// vouchers' details from the cache (the L1 misses in one Redis round trip),
/// then every voucher's units left (and the viewer's entries) in one more.
pub async fn of_shop(
    vouchers: &Vouchers,
    kv: &Kv,
    shop: ShopId,
    viewer: Option<UserId>,
) -> Result<Vec<VoucherPage>, PageError> {
    let ids = vouchers.of_shop(shop).await?;
    // A voucher listed but gone since is left out.
    let details = vouchers.details_many(&ids).await?.into_iter().flatten().collect();
    Ok(now(kv, details, viewer).await?)
}

/// What the sale says now of each voucher of `details`, in one round trip.
async fn now(
    kv: &Kv,
    details: Vec<Arc<VoucherDetails>>,
    viewer: Option<UserId>,
) -> redis::RedisResult<Vec<VoucherPage>> {
    if details.is_empty() {
        return Ok(Vec::new());
    }
    // Per voucher bucket: its units left, then for a seckill voucher with a
    // viewer the viewer's entry.
    let asks_entry = |d: &VoucherDetails| d.kind == VoucherKind::Seckill && viewer.is_some();
    let mut reads = Vec::new();
    for d in &details {
        if d.kind == VoucherKind::Ordinary {
            reads.push(redis::Cmd::get(kv.keys.coupon_stock(d.id)));
            continue;
        }
        for sale in buckets::sales(d.id, d.buckets()) {
            reads.push(redis::Cmd::hget(kv.keys.seckill_voucher(sale), "stock"));
            if let (true, Some(user)) = (asks_entry(d), viewer) {
                reads.push(redis::Cmd::hget(kv.keys.seckill_buyers(sale), user));
            }
        }
    }
    // Vouchers live in slots of their own: one round trip per node.
    let values = kv.conn().query_each(reads).await?;
    let mut values = values.iter();
    let mut pages = Vec::with_capacity(details.len());
    let short = || redis::RedisError::from((redis::ErrorKind::Parse, "short pipeline answer"));
    for details in details {
        let n = details.buckets();
        let (mut stock_left, mut held) = (None::<i64>, asks_entry(&details).then_some(false));
        for _ in 0..n {
            let units: Option<i64> = redis::from_redis_value_ref(values.next().ok_or_else(short)?)?;
            if let Some(units) = units {
                stock_left = Some(stock_left.unwrap_or(0) + units);
            }
            if let Some(held) = held.as_mut() {
                let entry: Option<String> = redis::from_redis_value_ref(values.next().ok_or_else(short)?)?;
                *held |= entry.as_deref().and_then(BuyerEntry::parse).and_then(BuyerEntry::live_order).is_some();
            }
        }
        pages.push(VoucherPage { details, stock_left, held });
    }
    Ok(pages)
}
