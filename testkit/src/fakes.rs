//! Builder-style fixtures, made through the business rules themselves
//! (never by writing rows behind their back), so a fixture obeys every rule
//! a real one does:
//!
//! ```ignore
//! let voucher = services.voucher().stock(50).on_sale().create().await;
//! let buyers = services.users(100).await;
//! ```

use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_core::auth::Phone;
use cityhub_core::shops::NewShop;
use cityhub_core::vouchers::NewSeckillVoucher;
use cityhub_core::{OrderId, Services, ShopId, UserId, VoucherId};

/// An order id as `node` would issue it now, `seq` telling apart the ids a
/// test makes in one millisecond: what a reservation made by hand (as a
/// dying API would leave it) carries. Tests use nodes no API of theirs holds.
pub fn order_id(node: u16, seq: u64) -> OrderId {
    OrderId(cityhub_platform::ids::compose(cityhub_platform::now_ms(), node, seq))
}

/// Fixtures made through a [`Services`].
pub trait Fakes {
    /// A seckill voucher to describe, then [`VoucherFake::create`].
    fn voucher(&self) -> VoucherFake<'_>;
    /// A shop named `name`, of the first type, with no position.
    fn shop(&self, name: &str) -> impl std::future::Future<Output = ShopId> + Send;
    /// `n` users (phones `1390000<i>`), found or created.
    fn users(&self, n: usize) -> impl std::future::Future<Output = Vec<UserId>> + Send;
}

impl Fakes for Services {
    fn voucher(&self) -> VoucherFake<'_> {
        let now = Utc::now();
        VoucherFake {
            services: self,
            shop: None,
            stock: 10,
            buckets: 1,
            pay_value: 5000,
            actual_value: 10000,
            begin: now - chrono::Duration::seconds(1),
            end: now + chrono::Duration::hours(1),
        }
    }

    async fn shop(&self, name: &str) -> ShopId {
        self.shops.create(&NewShop::named(name)).await.expect("create a shop").id
    }

    async fn users(&self, n: usize) -> Vec<UserId> {
        let phones: Vec<Phone> = (0..n).map(|i| Phone::parse(&format!("1390000{i:04}")).expect("phone")).collect();
        self.auth.register_many(&phones).await.expect("register users").into_iter().map(|s| s.user_id).collect()
    }
}

/// A seckill voucher being described: 10 units at 50.00 off 100.00, on
/// sale from a second ago for an hour, at a shop of its own, unless told
/// otherwise.
#[must_use = "a voucher is made by `create`"]
pub struct VoucherFake<'a> {
    services: &'a Services,
    shop: Option<ShopId>,
    stock: u32,
    buckets: u16,
    pay_value: u64,
    actual_value: u64,
    begin: DateTime<Utc>,
    end: DateTime<Utc>,
}

impl VoucherFake<'_> {
    pub fn stock(mut self, units: u32) -> Self {
        self.stock = units;
        self
    }

    /// Its stock split into `n` buckets (one unless told).
    pub fn buckets(mut self, n: u16) -> Self {
        self.buckets = n;
        self
    }

    /// On sale now, for an hour (the default, said out loud).
    pub fn on_sale(mut self) -> Self {
        let now = Utc::now();
        (self.begin, self.end) = (now - chrono::Duration::seconds(1), now + chrono::Duration::hours(1));
        self
    }

    /// On sale from `after` now, for an hour.
    pub fn starting_in(mut self, after: Duration) -> Self {
        let begin = Utc::now() + after;
        (self.begin, self.end) = (begin, begin + chrono::Duration::hours(1));
        self
    }

    /// Paid `pay` cents for a voucher worth `worth` cents.
    pub fn price(mut self, pay: u64, worth: u64) -> Self {
        (self.pay_value, self.actual_value) = (pay, worth);
        self
    }

    pub fn at_shop(mut self, shop: ShopId) -> Self {
        self.shop = Some(shop);
        self
    }

    /// Creates it through the voucher rules (MySQL, then Redis's sale state).
    pub async fn create(self) -> VoucherId {
        let shop_id = match self.shop {
            Some(shop) => shop,
            None => self.services.shop("test shop").await,
        };
        let new = NewSeckillVoucher {
            shop_id,
            title: "50 off".into(),
            sub_title: String::new(),
            rules: String::new(),
            pay_value: self.pay_value,
            actual_value: self.actual_value,
            stock: self.stock,
            buckets: self.buckets,
            begin_time: self.begin,
            end_time: self.end,
        };
        self.services.vouchers.create_seckill(new).await.expect("create a seckill voucher").id
    }
}
