//! CityHub's plumbing: everything the binaries need that knows no business
//! rule. The business rules (`cityhub-core`) build on it; it never depends
//! on them.
//!
//! - [`config`]: layered settings loading and the plumbing's own sections.
//! - [`db`]: the MySQL pool, the one migrator, error classification.
//! - [`kv`]: the Redis connection, the key prefix and the script runner.
//! - [`cache`]: the two-level read-through cache (moka L1, Redis L2 with
//!   logical expiry, rebuild lock, Bloom filter, pub/sub invalidation).
//! - [`mq`]: the RocketMQ runtime, the batching publisher, the consumer loop
//!   and its lag, topic creation.
//! - [`parking`]: where consumers put messages they will not use.
//! - [`ratelimit`]: sliding-window and token-bucket limits in Redis Lua.
//! - [`outbox`]: events written in the caller's transaction, and their relay.
//! - [`ids`]: Snowflake order ids and the Redis node lease they need.
//! - [`metrics`], [`telemetry`]: the Prometheus recorder, logging.
//! - [`ops`]: the ops listener (`/metrics`, `/healthz`) both binaries serve.
//! - [`jobs`], [`shutdown`]: the job supervisor and the shutdown signal.
//! - [`presence`]: each instance's beat in Redis, for the operator's list
//!   of instances and their health.
//! - [`retry`]: the jittered exponential backoff the retry loops share.
//! - [`alloc`]: the binaries' allocator (jemalloc) and its heap figures.
#![forbid(unsafe_code)]

pub mod alloc;
pub mod cache;
pub mod config;
pub mod db;
pub mod ids;
pub mod jobs;
pub mod kv;
pub mod metrics;
pub mod mq;
pub mod ops;
pub mod outbox;
pub mod parking;
pub mod presence;
pub mod ratelimit;
pub mod retry;
pub mod shutdown;
pub mod telemetry;

/// Runs `work` in its own task and waits for it: a caller that goes away
/// (an HTTP client hanging up drops the request future) cannot stop `work`
/// halfway. A panic in `work` resumes in the caller.
pub async fn run_to_completion<F>(work: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    join(tokio::spawn(work)).await
}

/// Waits for a spawned task; a panic in it resumes in the caller.
pub async fn join<T>(task: tokio::task::JoinHandle<T>) -> T {
    match task.await {
        Ok(output) => output,
        Err(task) => std::panic::resume_unwind(task.into_panic()),
    }
}

/// Milliseconds since the Unix epoch, from the local clock.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
