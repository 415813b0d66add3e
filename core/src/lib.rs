//! CityHub's shared library: everything the API and the order worker both
//! need, with no HTTP in it.
//!
//! - [`config`]: typed settings (defaults, file, `CITYHUB__` environment).
//! - [`db`]: the MySQL pool and the one migrator.
//! - [`kv`]: the Redis connection, key names and typed Lua scripts.
//! - [`mq`]: the RocketMQ runtime, the batching publisher and the consumer loop.
//! - [`ids`]: time-ordered 64-bit order ids.
//! - [`metrics`]: the Prometheus recorder and every metric name.
//! - [`auth`], [`vouchers`], [`seckill`], [`orders`]: the domain rules.
#![forbid(unsafe_code)]

pub mod auth;
pub mod config;
pub mod db;
pub mod ids;
pub mod kv;
pub mod metrics;
pub mod mq;
pub mod orders;
pub mod seckill;
pub mod shutdown;
pub mod telemetry;
pub mod vouchers;

#[cfg(feature = "testkit")]
pub mod testkit;

/// Milliseconds since the Unix epoch, from the local clock.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
