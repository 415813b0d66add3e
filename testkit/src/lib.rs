//! What CityHub's tests stand on, and what its checking tools check with:
//!
//! - [`TestEnv`]: one test's private slice of the real MariaDB, Redis and
//!   RocketMQ (its own database, key prefix, topics and groups).
//! - [`logs`]: captured log lines a test can search.
//! - [`fakes`]: builder-style fixtures made through the business rules
//!   (`services.voucher().stock(50).on_sale().create()`).
//! - [`sale`]: reads and assertions of one voucher's sale.
//! - [`invariants`]: the seckill invariants of a sale against the exact 202s,
//!   shared by the tests and by `cityhub flash-sale`, `chaos` and `bench`.
//! - [`relayed`]: the outbox's promise for follow events over a run (every
//!   committed event applied once in effect), for `cityhub chaos`.
//! - [`PrivateRedis`]: a Redis server of one test's own, for failures the
//!   shared server must never see.
//! - [`browser`]: headless Chromium over WebDriver, for the console's test.
//!
//! Every crate dev-depends on it, the platform's own tests included; the
//! CLI depends on it for the invariants its commands check.
#![forbid(unsafe_code)]

pub mod browser;
pub mod env;
pub mod fakes;
pub mod invariants;
pub mod logs;
pub mod private_redis;
pub mod relayed;
pub mod sale;

pub use cityhub_core::config::Settings;
pub use env::{metric, mq_client, TestEnv};
pub use fakes::Fakes;
pub use private_redis::PrivateRedis;

/// Polls `check` until it is true or `timeout` passes; returns its last value.
pub async fn eventually<F, Fut>(timeout: std::time::Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    loop {
        if check().await {
            return true;
        }
        if start.elapsed() > timeout {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
