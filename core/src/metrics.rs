//! Prometheus metrics: the process-wide recorder and every metric name
//! CityHub exports, with its help text, in one place.
//!
//! Both binaries call [`install`] once and serve [`render`] at `/metrics`.
//! Names follow Prometheus conventions: counters end in `_total`, durations
//! are histograms in `_seconds`.

use std::sync::OnceLock;

use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "cityhub_http_requests_total";
pub const HTTP_DURATION: &str = "cityhub_http_request_duration_seconds";
pub const SECKILL_REQUESTS: &str = "cityhub_seckill_requests_total";
pub const MQ_PUBLISH_BATCH_SIZE: &str = "cityhub_mq_publish_batch_size";
pub const MQ_PUBLISH_DURATION: &str = "cityhub_mq_publish_duration_seconds";
pub const MQ_PUBLISH_FAILURES: &str = "cityhub_mq_publish_failures_total";
pub const MQ_PUBLISHED: &str = "cityhub_mq_published_messages_total";
pub const CONSUMER_MESSAGES: &str = "cityhub_consumer_messages_total";
pub const CONSUMER_BATCH_SIZE: &str = "cityhub_consumer_batch_size";
pub const CONSUMER_BATCH_DURATION: &str = "cityhub_consumer_batch_duration_seconds";
pub const CONSUMER_RETRIED_BATCHES: &str = "cityhub_consumer_retried_batches_total";
pub const CONSUMER_LAG: &str = "cityhub_consumer_lag_messages";
pub const DB_POOL_CONNECTIONS: &str = "cityhub_db_pool_connections";
pub const CACHE_REQUESTS: &str = "cityhub_cache_requests_total";
pub const RATE_LIMITED: &str = "cityhub_rate_limited_total";
pub const RECONCILER_DRIFT: &str = "cityhub_reconciler_drift_total";
pub const RECONCILER_RUNS: &str = "cityhub_reconciler_runs_total";

const SECONDS_BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
const SIZE_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the global recorder (once per process; later calls return the
/// same handle) and describes every family.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full(MQ_PUBLISH_BATCH_SIZE.into()), SIZE_BUCKETS))
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full(CONSUMER_BATCH_SIZE.into()), SIZE_BUCKETS))
                .expect("static buckets are valid")
                .install_recorder()
                .expect("the metrics recorder is installed once");
            describe();
            handle
        })
        .clone()
}

/// The current metrics in Prometheus text format.
pub fn render(handle: &PrometheusHandle) -> String {
    handle.run_upkeep();
    handle.render()
}

/// Records the pool's open and idle connections (call before rendering).
pub fn record_pool(pool: &sqlx::MySqlPool) {
    let (size, idle) = (pool.size() as f64, pool.num_idle() as f64);
    metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "idle").set(idle);
    metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "in_use").set(size - idle);
}

fn describe() {
    describe_counter!(HTTP_REQUESTS, "HTTP requests by method, route and status.");
    describe_histogram!(HTTP_DURATION, Unit::Seconds, "HTTP request latency by method, route and status.");
    describe_counter!(
        SECKILL_REQUESTS,
        "Seckill requests by outcome: accepted, sold_out, already_bought, not_started, ended, unknown_voucher, publish_failed, error."
    );
    describe_histogram!(MQ_PUBLISH_BATCH_SIZE, Unit::Count, "Messages per RocketMQ send_batch.");
    describe_histogram!(MQ_PUBLISH_DURATION, Unit::Seconds, "Latency of one RocketMQ send_batch.");
    describe_counter!(MQ_PUBLISH_FAILURES, "RocketMQ batches the broker refused or did not answer.");
    describe_counter!(MQ_PUBLISHED, "Messages the broker stored.");
    describe_counter!(
        CONSUMER_MESSAGES,
        "Consumed messages by topic and result: stored, redelivered (already stored), parked."
    );
    describe_histogram!(CONSUMER_BATCH_SIZE, Unit::Count, "Messages per consumed batch.");
    describe_histogram!(CONSUMER_BATCH_DURATION, Unit::Seconds, "Time to handle one consumed batch.");
    describe_counter!(CONSUMER_RETRIED_BATCHES, "Batches handed back to the broker after transient failures.");
    describe_gauge!(
        CONSUMER_LAG,
        Unit::Count,
        "Messages stored past this instance's consumed offsets, over the queues it holds, by topic and group."
    );
    describe_gauge!(DB_POOL_CONNECTIONS, "MySQL pool connections by state (idle, in_use).");
    describe_counter!(CACHE_REQUESTS, "Cache lookups by cache, layer and result (hit, miss, stale).");
    describe_counter!(RATE_LIMITED, "Requests refused by a rate limiter, by limiter.");
    describe_counter!(RECONCILER_DRIFT, "Differences the reconciler found and repaired, by kind.");
    describe_counter!(RECONCILER_RUNS, "Reconciler runs by result.");
}
