//! How a seckill request ends, as one enum: the result code `seckill.lua`
//! returns, the metric label, and the error code the API answers are all
//! derived here, and nowhere else.

/// Every way a seckill request can end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Won: the order is queued.
    Accepted,
    SoldOut,
    AlreadyBought,
    NotStarted,
    Ended,
    UnknownVoucher,
    /// Over the route's rate limit (`limits.seckill`): nothing reserved.
    RateLimited,
    /// The broker did not take the order; the reservation was revoked.
    QueueUnavailable,
    /// No order-id lease is held right now.
    IdsUnavailable,
    /// Redis could not be reached.
    CacheUnavailable,
    /// The voucher is on sale but Redis lost its keys: sales wait until the
    /// reconciler rebuilds them from MySQL.
    SalePaused,
}

/// What kind of answer an outcome is, for mapping it to a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Success,
    /// The request conflicts with the sale's state.
    Conflict,
    NotFound,
    /// Too many attempts; retry later.
    TooMany,
    /// A dependency is down; nothing was reserved.
    Unavailable,
}

impl Outcome {
    pub const ALL: [Outcome; 11] = [
        Outcome::Accepted,
        Outcome::SoldOut,
        Outcome::AlreadyBought,
        Outcome::NotStarted,
        Outcome::Ended,
        Outcome::UnknownVoucher,
        Outcome::RateLimited,
        Outcome::QueueUnavailable,
        Outcome::IdsUnavailable,
        Outcome::CacheUnavailable,
        Outcome::SalePaused,
    ];

    /// The outcome `seckill.lua` returned `code` for (0 accepted, 1 sold out,
    /// 2 already bought, 3 not started, 4 ended, 5 unknown voucher, 6 over a
    /// limit, 7 paused: the voucher's keys are of an older Redis generation).
    pub fn from_script(code: i64) -> Option<Self> {
        Some(match code {
            0 => Outcome::Accepted,
            1 => Outcome::SoldOut,
            2 => Outcome::AlreadyBought,
            3 => Outcome::NotStarted,
            4 => Outcome::Ended,
            5 => Outcome::UnknownVoucher,
            6 => Outcome::RateLimited,
            7 => Outcome::SalePaused,
            _ => return None,
        })
    }

    /// The `outcome` label of `cityhub_seckill_requests_total`.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::SoldOut => "sold_out",
            Outcome::AlreadyBought => "already_bought",
            Outcome::NotStarted => "not_started",
            Outcome::Ended => "ended",
            Outcome::UnknownVoucher => "unknown_voucher",
            Outcome::RateLimited => "rate_limited",
            Outcome::QueueUnavailable => "publish_failed",
            Outcome::IdsUnavailable => "ids_unavailable",
            Outcome::CacheUnavailable => "error",
            Outcome::SalePaused => "sale_paused",
        }
    }

    /// The API's error `code` (`queued` for the one success).
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Accepted => "queued",
            Outcome::SoldOut => "sold_out",
            Outcome::AlreadyBought => "already_bought",
            Outcome::NotStarted => "sale_not_started",
            Outcome::Ended => "sale_ended",
            Outcome::UnknownVoucher => "voucher_not_found",
            Outcome::RateLimited => "rate_limited",
            Outcome::QueueUnavailable => "order_queue_unavailable",
            Outcome::IdsUnavailable => "order_ids_unavailable",
            Outcome::CacheUnavailable => "cache_unavailable",
            Outcome::SalePaused => "sale_paused",
        }
    }

    /// For humans.
    pub fn message(self) -> &'static str {
        match self {
            Outcome::Accepted => "the order is queued",
            Outcome::SoldOut => "the voucher is sold out",
            Outcome::AlreadyBought => "this user already bought this voucher",
            Outcome::NotStarted => "the sale has not started",
            Outcome::Ended => "the sale has ended",
            Outcome::UnknownVoucher => "no such seckill voucher",
            Outcome::RateLimited => "too many attempts; nothing was reserved, retry later",
            Outcome::QueueUnavailable => "orders cannot be queued right now; nothing was reserved, try again",
            Outcome::IdsUnavailable => "orders cannot be numbered right now; nothing was reserved, try again",
            Outcome::CacheUnavailable => "the cache is unavailable; try again",
            Outcome::SalePaused => "the sale is paused while its stock is rebuilt; nothing was reserved, try again",
        }
    }

    pub fn class(self) -> Class {
        match self {
            Outcome::Accepted => Class::Success,
            Outcome::SoldOut | Outcome::AlreadyBought | Outcome::NotStarted | Outcome::Ended => Class::Conflict,
            Outcome::UnknownVoucher => Class::NotFound,
            Outcome::RateLimited => Class::TooMany,
            Outcome::QueueUnavailable | Outcome::IdsUnavailable | Outcome::CacheUnavailable | Outcome::SalePaused => {
                Class::Unavailable
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_codes_labels_and_api_codes_are_distinct_and_round_trip() {
        let labels: std::collections::HashSet<_> = Outcome::ALL.iter().map(|o| o.label()).collect();
        let codes: std::collections::HashSet<_> = Outcome::ALL.iter().map(|o| o.code()).collect();
        assert_eq!((labels.len(), codes.len()), (Outcome::ALL.len(), Outcome::ALL.len()));
        for code in 0..=6 {
            let outcome = Outcome::from_script(code).unwrap();
            assert_eq!(Outcome::ALL.iter().position(|o| *o == outcome), Some(code as usize));
        }
        assert_eq!(Outcome::from_script(7), Some(Outcome::SalePaused));
        assert_eq!(Outcome::from_script(8), None);
    }
}
