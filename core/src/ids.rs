//! The ids of CityHub's things, one newtype each, so a user id passed where
//! an order id belongs does not compile. Each is a `u64` on every wire: a
//! number in JSON (`serde(transparent)`), `BIGINT UNSIGNED` in MySQL
//! (`sqlx(transparent)`), decimal digits in Redis keys and script arguments
//! (`Display`, `ToRedisArgs`), a path segment in the API (`FromStr`).
//!
//! Order ids are Snowflake ids issued by `cityhub_platform::ids`, which
//! knows numbers only; [`OrderId`] gives them their name here. The API shows
//! order ids to shoppers as strings (JavaScript loses digits past 2^53);
//! that choice is the API's, made where it writes its answers.

use std::fmt;
use std::str::FromStr;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default,
            serde::Serialize, serde::Deserialize, sqlx::Type,
        )]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(pub u64);

        impl $name {
            /// The bare number, for the places that speak only numbers
            /// (metrics, arithmetic in tests).
            pub const fn get(self) -> u64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl FromStr for $name {
            type Err = std::num::ParseIntError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map(Self)
            }
        }

        impl From<u64> for $name {
            fn from(id: u64) -> Self {
                Self(id)
            }
        }

        impl redis::ToRedisArgs for $name {
            fn write_redis_args<W>(&self, out: &mut W)
            where
                W: ?Sized + redis::RedisWrite,
            {
                self.0.write_redis_args(out)
            }

            fn describe_numeric_behavior(&self) -> redis::NumericBehavior {
                redis::NumericBehavior::NumberIsInteger
            }
        }

        impl redis::ToSingleRedisArg for $name {}

        impl redis::FromRedisValue for $name {
            fn from_redis_value(v: redis::Value) -> Result<Self, redis::ParsingError> {
                u64::from_redis_value(v).map(Self)
            }
        }
    };
}

id! {
    /// A signed-up user (a shopper, an admin, a follower).
    UserId
}

id! {
    /// A voucher, plain or seckill.
    VoucherId
}

id! {
    /// An order: the Snowflake id the seckill script reserved it under, the
    /// same in Redis, on the order topic and as MySQL's primary key.
    OrderId
}

impl OrderId {
    /// When the id was issued, Unix ms (the Snowflake's clock part).
    pub fn issued_at_ms(self) -> u64 {
        cityhub_platform::ids::issued_at_ms(self.0)
    }

    /// The order-id node slot it was issued under.
    pub fn node(self) -> u16 {
        cityhub_platform::ids::node_of(self.0)
    }
}

/// One stock bucket of a seckill voucher: the unit of Redis sale state.
/// A bucket's keys share one hash tag, so one slot, one master of a
/// cluster; a hot voucher split into buckets spreads over masters (see
/// `vouchers::buckets`, and `keys` for the tags). A voucher of one bucket is
/// bucket 0, whose hash tag is the voucher id itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sale {
    pub voucher_id: VoucherId,
    pub bucket: u16,
}

impl From<VoucherId> for Sale {
    /// The voucher's first (or only) bucket.
    fn from(voucher_id: VoucherId) -> Self {
        Self { voucher_id, bucket: 0 }
    }
}

id! {
    /// A shop.
    ShopId
}

id! {
    /// One unit of an ordinary coupon a shopper claimed.
    ClaimId
}

id! {
    /// A shopper's note about a shop.
    NoteId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_number_on_every_wire() {
        let id = OrderId(1_825_728_063_868_680_768);
        assert_eq!(id.to_string(), "1825728063868680768");
        assert_eq!("1825728063868680768".parse::<OrderId>().unwrap(), id);
        assert_eq!(serde_json::to_string(&id).unwrap(), "1825728063868680768");
        assert_eq!(serde_json::from_str::<OrderId>("1825728063868680768").unwrap(), id);
        assert_eq!(redis::ToRedisArgs::to_redis_args(&id), vec![b"1825728063868680768".to_vec()]);
        assert!("12a".parse::<UserId>().is_err());
    }
}
