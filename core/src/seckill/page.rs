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
use crate::ids::{UserId, VoucherId};
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
    let mut pipe = redis::pipe();
    pipe.hget(kv.keys.seckill_voucher(id), "stock");
    if let Some(user) = viewer {
        pipe.hget(kv.keys.seckill_buyers(id), user);
    }
    let (stock_left, entry): (Option<i64>, Option<String>) = if viewer.is_some() {
        pipe.query_async(&mut kv.conn()).await?
    } else {
        let (stock,): (Option<i64>,) = pipe.query_async(&mut kv.conn()).await?;
        (stock, None)
    };
    let held = viewer.map(|_| entry.as_deref().and_then(BuyerEntry::parse).and_then(BuyerEntry::live_order).is_some());
    Ok(Some(VoucherPage { details, stock_left, held }))
}
