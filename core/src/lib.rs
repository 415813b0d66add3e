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

/// Runs `work` in its own task and waits for it: a caller that goes away
/// (an HTTP client hanging up drops the request future) cannot stop `work`
/// halfway. A panic in `work` resumes in the caller.
pub async fn run_to_completion<F>(work: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    match tokio::spawn(work).await {
        Ok(output) => output,
        Err(task) => std::panic::resume_unwind(task.into_panic()),
    }
}

/// Milliseconds since the Unix epoch, from the local clock.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
