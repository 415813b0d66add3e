//! The binlog relay on its own, on the MariaDB that writes a row binlog
//! (`scripts/stack binlog`): it resumes from its stored position after a
//! restart and after a lost connection, starts again at the binlog's end
//! (after a sweep) when its position is gone, reads an outbox table with a
//! column added, relays by polling on a server without a row binlog, and of
//! two relays on one database only one streams.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cityhub_platform::metrics as m;
use cityhub_platform::outbox;
use cityhub_platform::outbox::binlog::BinlogRelay;
use cityhub_platform::outbox::relay::Relay;
use cityhub_testkit::{eventually, metric, mq_client, TestEnv};
use serde_json::json;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

const DRAIN: Duration = Duration::from_secs(60);

struct Harness {
    env: TestEnv,
    db: MySqlPool,
    topic: String,
}

impl Harness {
    async fn start() -> Self {
        Self::on(TestEnv::on_binlog()).await
    }

    async fn on(env: TestEnv) -> Self {
        let db = env.db().await;
        let topic = format!("{}_events", env.settings.mq.order_topic);
        Self { env, db, topic }
    }

    /// Commits one event of `key`; answers its id.
    async fn enqueue(&self, key: &str) -> u64 {
        let mut tx = self.db.begin().await.unwrap();
        let id = outbox::enqueue(&mut tx, &self.topic, key, &json!({ "key": key })).await.unwrap();
        tx.commit().await.unwrap();
        id
    }

    async fn relay(&self) -> Running {
        let s = &self.env.settings;
        let group = format!("{}_relay_{}", s.mq.producer_group, rand::random::<u32>());
        let producer = cityhub_platform::mq::start_producer(&mq_client(), &s.mq, &group).await.unwrap();
        let relay = Relay::new(self.db.clone(), producer, s.outbox.clone(), &s.mq);
        let url = s.database.url.expose();
        let relay = Arc::new(BinlogRelay::new(relay, self.db.clone(), url, s.outbox.clone()).unwrap());
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (relay, stop) = (Arc::clone(&relay), stop.clone());
            async move { relay.run(stop).await }
        });
        Running { relay, stop, task }
    }

    async fn unpublished(&self) -> i64 {
        outbox::backlog(&self.db).await.unwrap().rows
    }

    async fn drained(&self) -> bool {
        eventually(DRAIN, || async { self.unpublished().await == 0 }).await
    }
}

struct Running {
    relay: Arc<BinlogRelay>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Until this relay streams (it stored a position and opened its stream).
    async fn streaming(&self) -> bool {
        eventually(DRAIN, || async {
            self.relay.stored_position().await.unwrap().is_some() && self.relay.stream_connection() != 0
        })
        .await
    }

    async fn stop(self) {
        self.stop.cancel();
        self.task.await.unwrap().unwrap();
    }

    /// Stops the relay, which followed the binlog throughout (it never fell
    /// back to polling, and its sweep published nothing).
    async fn stop_streaming(self) {
        self.stop().await;
        assert_eq!(metric(m::OUTBOX_RELAY_POLLING, &[]), 0.0, "the relay never fell back to polling");
        assert_eq!(metric(m::OUTBOX_SWEPT, &[]), 0.0, "the binlog brought every event");
    }
}

/// Reads `h`'s topic from its first message until it has seen each of
/// `ids`; answers how many times each event id was delivered.
async fn delivered(h: &Harness, ids: &[u64]) -> HashMap<u64, usize> {
    let (consumer, seen) = super::outbox::read_topic(&h.env.settings, &h.topic).await;
    let all = eventually(DRAIN, || async {
        let seen = seen.0.lock().unwrap();
        ids.iter().all(|id| seen.iter().any(|s| s.0 == *id))
    });
    assert!(all.await, "every event delivered");
    tokio::time::sleep(Duration::from_millis(500)).await;
    consumer.shutdown().await;
    let mut counts = HashMap::new();
    for s in seen.0.lock().unwrap().iter() {
        *counts.entry(s.0).or_default() += 1;
    }
    counts
}

fn restarts(reason: &str) -> f64 {
    metric(m::OUTBOX_BINLOG_RESTARTS, &[&format!("reason=\"{reason}\"")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_relay_resumes_from_its_stored_position_and_sends_nothing_twice() {
    let h = Harness::start().await;
    let first = h.relay().await;
    assert!(first.streaming().await);
    let mut ids = Vec::new();
    for n in 0..20 {
        ids.push(h.enqueue(&format!("k{}", n % 4)).await);
    }
    assert!(h.drained().await);
    let stored = first.relay.stored_position().await.unwrap().unwrap();
    first.stop().await;
    // Written while no relay runs: the next one reads them from the binlog,
    // from where the first stopped.
    for n in 0..20 {
        ids.push(h.enqueue(&format!("k{}", n % 4)).await);
    }
    assert_eq!(h.unpublished().await, 20);
    let second = h.relay().await;
    assert!(h.drained().await);
    assert!(second.relay.stored_position().await.unwrap().unwrap() != stored, "the position moved on");
    second.stop_streaming().await;
    let seen = delivered(&h, &ids).await;
    assert_eq!(seen.len(), 40);
    assert!(seen.values().all(|n| *n == 1), "a clean stop and start sends nothing twice: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_binlog_connection_is_resumed_from_the_stored_position() {
    let h = Harness::start().await;
    let relay = h.relay().await;
    assert!(relay.streaming().await);
    let mut ids = Vec::new();
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    assert!(h.drained().await);
    let killed = relay.relay.stream_connection();
    sqlx::query(&format!("KILL {killed}")).execute(&h.db).await.unwrap();
    // Written while the relay has no stream.
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    assert!(h.drained().await, "the relay read on from its position on a new connection");
    assert!(relay.relay.stream_connection() != killed, "a new stream");
    assert!(restarts("lost") >= 1.0);
    relay.stop_streaming().await;
    let seen = delivered(&h, &ids).await;
    assert_eq!(seen.len(), 20, "each committed event, none lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_position_the_server_no_longer_has_is_swept_and_the_relay_starts_at_the_end() {
    let h = Harness::start().await;
    let mut ids = Vec::new();
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    // A position in a binlog file the server purged (or never had).
    sqlx::query("INSERT INTO outbox_relay_position (relay, file, pos) VALUES ('binlog', 'binlog.999999', 4)")
        .execute(&h.db)
        .await
        .unwrap();
    let relay = h.relay().await;
    assert!(h.drained().await, "what the lost position held is swept");
    assert!(restarts("purged") >= 1.0);
    assert!(relay.streaming().await);
    let stored = relay.relay.stored_position().await.unwrap().unwrap();
    assert!(stored.file != "binlog.999999", "the relay started again at the binlog's end: {stored:?}");
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    assert!(h.drained().await, "and streams from there");
    relay.stop_streaming().await;
    let seen = delivered(&h, &ids).await;
    assert_eq!(seen.len(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outbox_table_with_a_column_added_is_still_read_by_column_name() {
    let h = Harness::start().await;
    let relay = h.relay().await;
    assert!(relay.streaming().await);
    let mut ids = vec![h.enqueue("a").await];
    assert!(h.drained().await);
    sqlx::raw_sql("ALTER TABLE outbox ADD COLUMN origin VARCHAR(32) NULL FIRST").execute(&h.db).await.unwrap();
    for n in 0..5 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    assert!(h.drained().await);
    assert_eq!(restarts("unusable"), 0.0);
    relay.stop_streaming().await;
    let seen = delivered(&h, &ids).await;
    assert_eq!(seen.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_row_binlog_is_relayed_by_polling_and_says_so() {
    // The shared server of the default profile writes no binlog.
    let mut env = TestEnv::new();
    env.settings.outbox.relay = cityhub_platform::config::RelayKind::Binlog;
    let h = Harness::on(env).await;
    let log_bin: i64 = sqlx::query_scalar("SELECT CAST(@@global.log_bin AS SIGNED)").fetch_one(&h.db).await.unwrap();
    assert_eq!(log_bin, 0, "this test needs CITYHUB_TEST_MYSQL without a binlog");
    let relay = h.relay().await;
    let mut ids = Vec::new();
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{n}")).await);
    }
    assert!(h.drained().await, "published by polling");
    assert_eq!(metric(m::OUTBOX_RELAY_POLLING, &[]), 1.0, "the fallback shows");
    assert!(restarts("unusable") >= 1.0);
    relay.stop().await;
    assert_eq!(delivered(&h, &ids).await.len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_relays_on_one_database_one_streams_and_the_other_takes_over_when_it_stops() {
    let h = Harness::start().await;
    let first = h.relay().await;
    assert!(first.streaming().await);
    let second = h.relay().await;
    let mut ids = Vec::new();
    for n in 0..30 {
        ids.push(h.enqueue(&format!("k{}", n % 5)).await);
    }
    assert!(h.drained().await);
    assert_eq!(second.relay.stream_connection(), 0, "the second waits for the lock");
    first.stop().await;
    assert!(eventually(DRAIN, || async { second.relay.stream_connection() != 0 }).await, "it takes over");
    for n in 0..10 {
        ids.push(h.enqueue(&format!("k{}", n % 5)).await);
    }
    assert!(h.drained().await);
    second.stop_streaming().await;
    let seen = delivered(&h, &ids).await;
    assert_eq!(seen.len(), 40);
    assert!(seen.values().all(|n| *n == 1), "one relay at a time sends each once: {seen:?}");
}
