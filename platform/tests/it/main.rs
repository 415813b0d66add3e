//! Tests of the platform's plumbing on its own, against the real MariaDB,
//! Redis and RocketMQ where it needs them: the job supervisor, the cache's
//! lock and freshness rules, the rate limiters, the push consumer and its
//! lag, the outbox relays (poll and binlog). One binary; each test has its own database, key
//! prefix and topic (see `cityhub_testkit`).

mod cache;
mod consumer;
mod jobs;
mod outbox;
mod outbox_binlog;
mod publisher;
mod ratelimit;
