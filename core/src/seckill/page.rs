//! A voucher as a shopper's page shows it: its details from the shared
//! two-level cache (no MySQL call on a hit, none at all on an L1 hit), then
//! what the sale says now, from Redis in one round trip: the units left and
//! whether the viewer holds one. Stock is read on every view, never cached:
//! it changes every millisecond of a sale.
//!
//! The read is a display, not a decision: while a voucher's sale is paused
//! (Redis lost or replaced its keys) it shows what Redis holds, and only the
//! seckill script decides a purchase.

use std::sync::Arc;

use cityhub_platform::cache::CacheError;

use super::scripts::BuyerEntry;
use crate::ids::{ShopId, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::vouchers::{VoucherDetails, Vouchers};

/// One voucher's page.
#[derive(Debug, Clone)]
pub struct VoucherPage {
    pub details: Arc<VoucherDetails>,
    /// Units left as Redis says now; `None` while the sale has no keys.
    pub stock_left: Option<i64>,
    /// Whether the viewer holds a unit (reserved or confirmed); `None` for
    /// an anonymous viewer.
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

/// The pages of shop `shop`'s vouchers, oldest first: the list and each
/// voucher's details from the cache, then every voucher's units left (and
/// the viewer's entries) in one Redis round trip.
pub async fn of_shop(
    vouchers: &Vouchers,
    kv: &Kv,
    shop: ShopId,
    viewer: Option<UserId>,
) -> Result<Vec<VoucherPage>, PageError> {
    let ids = vouchers.of_shop(shop).await?;
    let mut details = Vec::with_capacity(ids.len());
    for id in ids.iter() {
        // A voucher listed but gone since is left out.
        details.extend(vouchers.details(*id).await?);
    }
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
    let mut pipe = redis::pipe();
    for d in &details {
        pipe.hget(kv.keys.seckill_voucher(d.id), "stock");
        if let Some(user) = viewer {
            pipe.hget(kv.keys.seckill_buyers(d.id), user);
        }
    }
    let values: Vec<redis::Value> = pipe.query_async(&mut kv.conn()).await?;
    let per = if viewer.is_some() { 2 } else { 1 };
    let mut pages = Vec::with_capacity(details.len());
    for (details, answer) in details.into_iter().zip(values.chunks(per)) {
        let stock_left: Option<i64> = redis::from_redis_value_ref(&answer[0])?;
        let held = match answer.get(1) {
            Some(entry) => {
                let entry: Option<String> = redis::from_redis_value_ref(entry)?;
                Some(entry.as_deref().and_then(BuyerEntry::parse).and_then(BuyerEntry::live_order).is_some())
            }
            None => None,
        };
        pages.push(VoucherPage { details, stock_left, held });
    }
    Ok(pages)
}
