//! Prometheus metrics: the process-wide recorder and the names of the
//! plumbing's metrics (HTTP, RocketMQ, consumers, the MySQL pool), each with
//! its help text. The business rules name theirs in `cityhub-core`.
//!
//! Both binaries call [`install`] once; the ops listener serves [`render`].
//! The recorder keeps every histogram sample until upkeep folds it into the
//! buckets, so [`install`] starts a thread that runs upkeep every
//! [`UPKEEP_EVERY`]: memory stays flat whether or not anyone scrapes.
//! Names follow Prometheus conventions: counters end in `_total`, durations
//! are histograms in `_seconds`.

use std::sync::OnceLock;

use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "cityhub_http_requests_total";
pub const HTTP_DURATION: &str = "cityhub_http_request_duration_seconds";
pub const MQ_PUBLISH_BATCH_SIZE: &str = "cityhub_mq_publish_batch_size";
pub const MQ_PUBLISH_DURATION: &str = "cityhub_mq_publish_duration_seconds";
pub const MQ_PUBLISH_FAILURES: &str = "cityhub_mq_publish_failures_total";
pub const MQ_PUBLISH_EXPIRED: &str = "cityhub_mq_publish_expired_messages_total";
pub const MQ_PRODUCER_RENEWALS: &str = "cityhub_mq_producer_renewals_total";
pub const REDIS_GENERATIONS: &str = "cityhub_redis_generations_adopted_total";
pub const MQ_PUBLISHED: &str = "cityhub_mq_published_messages_total";
pub const CONSUMER_MESSAGES: &str = "cityhub_consumer_messages_total";
pub const CONSUMER_BATCH_SIZE: &str = "cityhub_consumer_batch_size";
pub const CONSUMER_BATCH_DURATION: &str = "cityhub_consumer_batch_duration_seconds";
pub const CONSUMER_HELD_BATCHES: &str = "cityhub_consumer_held_batches_total";
pub const CONSUMER_LAG: &str = "cityhub_consumer_lag_messages";
pub const CONSUMER_QUEUES: &str = "cityhub_consumer_queues_held";
pub const JOB_UP: &str = "cityhub_job_up";
pub const JOB_EXITS: &str = "cityhub_job_exits_total";
pub const DEPENDENCY_UP: &str = "cityhub_dependency_up";
pub const OUTBOX_BACKLOG: &str = "cityhub_outbox_backlog_rows";
pub const OUTBOX_OLDEST_AGE: &str = "cityhub_outbox_oldest_unpublished_seconds";
pub const OUTBOX_PUBLISHED: &str = "cityhub_outbox_published_total";
pub const OUTBOX_FAILURES: &str = "cityhub_outbox_publish_failures_total";
pub const OUTBOX_SWEPT: &str = "cityhub_outbox_swept_total";
pub const OUTBOX_BINLOG_RESTARTS: &str = "cityhub_outbox_binlog_restarts_total";
pub const OUTBOX_RELAY_POLLING: &str = "cityhub_outbox_binlog_relay_polling";
pub const CACHE_HITS: &str = "cityhub_cache_hits_total";
pub const CACHE_MISSES: &str = "cityhub_cache_misses_total";
pub const CACHE_STALE: &str = "cityhub_cache_stale_served_total";
pub const CACHE_REBUILDS: &str = "cityhub_cache_rebuilds_total";
pub const CACHE_LOCK_CONTENTION: &str = "cityhub_cache_lock_contention_total";
pub const CACHE_REFUSALS: &str = "cityhub_cache_refusals_total";
pub const CACHE_INVALIDATIONS: &str = "cityhub_cache_invalidations_total";
pub const DB_POOL_CONNECTIONS: &str = "cityhub_db_pool_connections";
pub const HEAP_BYTES: &str = "cityhub_heap_bytes";
pub const BUILD_INFO: &str = "cityhub_build_info";

/// This build's version (the workspace's) and commit (`CITYHUB_COMMIT` when
/// it was compiled, `unknown` without it): the labels of [`BUILD_INFO`], so
/// that instances of two versions serving side by side (a rolling deploy)
/// show as such.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = match option_env!("CITYHUB_COMMIT") {
    Some(commit) => commit,
    None => "unknown",
};

const SECONDS_BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
const SIZE_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often recorded histogram samples are folded into their buckets.
pub const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

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
            metrics::gauge!(BUILD_INFO, "version" => VERSION, "commit" => COMMIT).set(1.0);
            let upkeep = handle.clone();
            std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || loop {
                    std::thread::sleep(UPKEEP_EVERY);
                    upkeep.run_upkeep();
                })
                .expect("start the metrics upkeep thread");
            handle
        })
        .clone()
}

/// The current metrics in Prometheus text format.
pub fn render(handle: &PrometheusHandle) -> String {
    handle.run_upkeep();
    handle.render()
}

/// In Prometheus text `text`, the sum of every series of `name` carrying all
/// `labels` (`key="value"`); `None` when there is none.
pub fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && (l[name.len()..].starts_with('{') || l[name.len()..].starts_with(' ')))
        .filter(|l| labels.iter().all(|label| l.contains(label)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .reduce(|a, b| a + b)
}

fn describe() {
    describe_gauge!(BUILD_INFO, "1, labelled with this binary's version and commit.");
    describe_counter!(HTTP_REQUESTS, "HTTP requests by method, route and status.");
    describe_histogram!(HTTP_DURATION, Unit::Seconds, "HTTP request latency by method, route and status.");
    describe_histogram!(MQ_PUBLISH_BATCH_SIZE, Unit::Count, "Messages per RocketMQ send_batch.");
    describe_histogram!(MQ_PUBLISH_DURATION, Unit::Seconds, "Latency of one RocketMQ send_batch.");
    describe_counter!(MQ_PUBLISH_FAILURES, "RocketMQ batches the broker refused or did not answer.");
    describe_counter!(
        MQ_PUBLISH_EXPIRED,
        "Messages answered unsent because their send could not start within mq.publish_wait_max_ms."
    );
    describe_counter!(MQ_PRODUCER_RENEWALS, "Producers replaced after publishes kept failing.");
    describe_counter!(
        REDIS_GENERATIONS,
        "Fresh Redis generations this process adopted (Redis restarted, failed over, was restored or flushed)."
    );
    describe_counter!(MQ_PUBLISHED, "Messages the broker stored.");
    describe_counter!(
        CONSUMER_MESSAGES,
        "Consumed messages by topic and result: stored, redelivered (already stored), parked."
    );
    describe_histogram!(CONSUMER_BATCH_SIZE, Unit::Count, "Messages per consumed batch.");
    describe_histogram!(CONSUMER_BATCH_DURATION, Unit::Seconds, "Time to handle one consumed batch.");
    describe_counter!(CONSUMER_HELD_BATCHES, "Batches that failed and were tried again in place.");
    describe_gauge!(
        CONSUMER_LAG,
        Unit::Count,
        "Messages stored past this instance's consumed offsets, over the queues it holds, by topic and group."
    );
    describe_gauge!(JOB_UP, "1 while the background job runs, 0 after it ended before shutdown, by task.");
    describe_counter!(JOB_EXITS, "Background jobs that ended (returned, failed or panicked) before shutdown, by task.");
    describe_gauge!(
        DEPENDENCY_UP,
        "1 when the dependency answered the last check (every 5 s), 0 when it did not, by dependency: mysql, redis, rocketmq."
    );
    describe_gauge!(CONSUMER_QUEUES, Unit::Count, "Queues of the topic this instance holds, by topic and group.");
    describe_counter!(CACHE_HITS, "Cache hits by cache and layer (l1: in process, l2: Redis).");
    describe_counter!(CACHE_MISSES, "Cache misses by cache and layer.");
    describe_counter!(CACHE_STALE, "Reads answered with a logically expired value while one rebuild runs.");
    describe_counter!(CACHE_REBUILDS, "Entries loaded from the source of truth into Redis, by result.");
    describe_counter!(CACHE_LOCK_CONTENTION, "Rebuild-lock attempts that found the lock taken.");
    describe_counter!(CACHE_REFUSALS, "Keys refused before any lookup, by reason: bloom, invalid.");
    describe_counter!(CACHE_INVALIDATIONS, "L1 invalidations applied (from any instance's writes).");
    describe_gauge!(OUTBOX_BACKLOG, Unit::Count, "Outbox rows not published yet.");
    describe_gauge!(OUTBOX_OLDEST_AGE, Unit::Seconds, "Age of the oldest unpublished outbox row.");
    describe_counter!(OUTBOX_PUBLISHED, "Outbox events the relay published, by topic.");
    describe_counter!(
        OUTBOX_FAILURES,
        "Outbox publish attempts that failed (no route to a broker, or the broker did not store the batch), by topic."
    );
    describe_counter!(
        OUTBOX_SWEPT,
        "Outbox rows the binlog relay's sweep published because the binlog had not brought them in time (alert on any)."
    );
    describe_counter!(
        OUTBOX_BINLOG_RESTARTS,
        "Times the binlog relay stopped following the binlog, by reason: lost (read again from the stored position), \
         purged (swept, started at the end), unusable (relaying by polling)."
    );
    describe_gauge!(
        OUTBOX_RELAY_POLLING,
        "1 while a worker configured for the binlog relay relays by polling because the binlog cannot be used (alert)."
    );
    describe_gauge!(DB_POOL_CONNECTIONS, "MySQL pool connections by state (idle, in_use).");
    describe_gauge!(
        HEAP_BYTES,
        Unit::Bytes,
        "The allocator's bytes by state: allocated (held by the program), resident (kept in memory for it)."
    );
}
