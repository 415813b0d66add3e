//! The shared outbox and its relay over RocketMQ: what commits is published,
//! what rolls back never is, a key's events keep their order on one queue,
//! a relay dying between publishing and marking only causes duplicates, and
//! a send that finds no broker fails and is counted.
//! The relay is the one the settings name: the poll relay by default, the
//! binlog relay in the suite's binlog profile (`CITYHUB_TEST_OUTBOX_RELAY`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cityhub_platform::config::RelayKind;
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::outbox::binlog::BinlogRelay;
use cityhub_platform::outbox::relay::{Outgoing, Relay};
use cityhub_platform::outbox::{self, Envelope};
use cityhub_testkit::{eventually, metric, mq_client, Settings, TestEnv};
use serde_json::{json, Value};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// How long a consumer gets to see what was published.
const DRAIN: Duration = Duration::from_secs(60);

/// A test's environment and its migrated database.
struct Harness {
    env: TestEnv,
    db: MySqlPool,
}

impl Harness {
    async fn start(configure: impl FnOnce(&mut Settings)) -> Self {
        Self::on(TestEnv::new(), configure).await
    }

    async fn on(mut env: TestEnv, configure: impl FnOnce(&mut Settings)) -> Self {
        configure(&mut env.settings);
        let db = env.db().await;
        Self { env, db }
    }
}

/// The relay the settings name, running: the poll relay's rounds are run by
/// [`Running::drain`]; the binlog relay runs on its own, from a position it
/// stored before anything was enqueued, so every event comes through the
/// binlog (the start-up sweep finds nothing).
enum Running {
    Poll(Box<Relay>),
    Binlog { relay: Arc<BinlogRelay>, stop: CancellationToken, task: tokio::task::JoinHandle<anyhow::Result<()>> },
}

impl Running {
    async fn start(h: &Harness) -> Self {
        let s = &h.env.settings;
        let relay = relay(h).await;
        match s.outbox.relay {
            RelayKind::Poll => Running::Poll(Box::new(relay)),
            RelayKind::Binlog => {
                let url = s.database.url.expose();
                let binlog = Arc::new(BinlogRelay::new(relay, h.db.clone(), url, s.outbox.clone()).unwrap());
                let stop = CancellationToken::new();
                let task = tokio::spawn({
                    let (relay, stop) = (Arc::clone(&binlog), stop.clone());
                    async move { relay.run(stop).await }
                });
                let started = eventually(DRAIN, || async { binlog.stored_position().await.unwrap().is_some() });
                assert!(started.await, "the binlog relay stored its first position");
                Running::Binlog { relay: binlog, stop, task }
            }
        }
    }

    /// Until nothing committed is left unpublished.
    async fn drain(&self, h: &Harness) {
        match self {
            Running::Poll(relay) => {
                for _ in 0..50 {
                    if relay.run_once().await.is_ok_and(|r| r.published == 0) {
                        break;
                    }
                }
            }
            Running::Binlog { .. } => {}
        }
        let empty = eventually(DRAIN, || async { outbox::backlog(&h.db).await.unwrap().rows == 0 });
        assert!(empty.await, "every committed event was published");
    }

    /// Stops the binlog relay (it never fell back to polling and its sweep
    /// published nothing: every event came through the binlog).
    async fn stop(self) {
        if let Running::Binlog { relay, stop, task } = self {
            stop.cancel();
            task.await.unwrap().unwrap();
            drop(relay);
            assert_eq!(metric(cityhub_platform::metrics::OUTBOX_SWEPT, &[]), 0.0, "nothing was left to the sweep");
            assert_eq!(metric(cityhub_platform::metrics::OUTBOX_RELAY_POLLING, &[]), 0.0, "it never polled");
        }
    }
}

/// Every delivery: (event id, key, queue, offset).
#[derive(Default)]
pub struct Seen(pub Mutex<Vec<(u64, String, i32, i64)>>);

struct Collect(Arc<Seen>);

impl BatchHandler for Collect {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let mut seen = self.0 .0.lock().unwrap();
        for d in batch {
            let event: Envelope<Value> = serde_json::from_slice(&d.body).unwrap();
            let key = event.payload["key"].as_str().unwrap().to_owned();
            seen.push((event.event_id, key, d.queue_id, d.queue_offset));
        }
        Ack::Done
    }
}

async fn relay(h: &Harness) -> Relay {
    let s = &h.env.settings;
    let producer = cityhub_platform::mq::start_producer(&mq_client(), &s.mq, &format!("{}_relay", s.mq.producer_group))
        .await
        .unwrap();
    Relay::new(h.db.clone(), producer, s.outbox.clone(), &s.mq)
}

async fn consume(h: &Harness, topic: &str) -> (Consumer, Arc<Seen>) {
    read_topic(&h.env.settings, topic).await
}

/// A consumer of `topic` from its first message, recording every delivery.
pub async fn read_topic(settings: &Settings, topic: &str) -> (Consumer, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let group = format!("{topic}_reader");
    let consumer =
        Consumer::start(&mq_client(), &settings.mq, &group, topic, Arc::new(Collect(Arc::clone(&seen)))).await;
    (consumer.unwrap(), seen)
}

async fn enqueue(h: &Harness, topic: &str, key: &str, n: usize, commit: bool) -> u64 {
    let mut tx = h.db.begin().await.unwrap();
    let id = outbox::enqueue(&mut tx, topic, key, &json!({ "key": key, "n": n })).await.unwrap();
    if commit {
        tx.commit().await.unwrap();
    } else {
        tx.rollback().await.unwrap();
    }
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_events_are_published_in_key_order_on_one_queue_and_rolled_back_ones_never() {
    let h = Harness::start(|s| s.outbox.batch_max = 7).await;
    let topic = format!("{}_events", h.env.settings.mq.order_topic);
    let relay = Running::start(&h).await;
    let mut committed = HashMap::new();
    for n in 0..15 {
        for key in ["a", "b", "c"] {
            let commit = !(key == "c" && n % 3 == 0);
            let id = enqueue(&h, &topic, key, n, commit).await;
            if commit {
                committed.insert(id, key.to_owned());
            }
        }
    }
    relay.drain(&h).await;
    if let Running::Poll(poll) = &relay {
        assert_eq!(poll.run_once().await.unwrap(), Default::default(), "nothing is left to publish");
    }

    let (consumer, seen) = consume(&h, &topic).await;
    assert!(eventually(DRAIN, || async { seen.0.lock().unwrap().len() >= committed.len() }).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    consumer.shutdown().await;
    relay.stop().await;
    let seen = seen.0.lock().unwrap().clone();
    let ids: HashSet<u64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(ids, committed.keys().copied().collect(), "exactly the committed events, none rolled back");
    assert_eq!(seen.len(), committed.len(), "each once");
    for key in ["a", "b", "c"] {
        let mut mine: Vec<&(u64, String, i32, i64)> = seen.iter().filter(|s| s.1 == key).collect();
        assert_eq!(mine.iter().map(|s| s.2).collect::<HashSet<_>>().len(), 1, "{key} stays on one queue");
        mine.sort_by_key(|s| s.3);
        assert!(mine.windows(2).all(|w| w[0].0 < w[1].0), "{key}'s events in enqueue order: {mine:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_dying_after_publishing_and_before_marking_only_duplicates_and_a_deduplicating_consumer_changes_nothing(
) {
    let h = Harness::start(|_| {}).await;
    let topic = format!("{}_events", h.env.settings.mq.order_topic);
    let relay = Running::start(&h).await;
    // Marking fails, as when the relay dies between the broker's answer and its commit.
    sqlx::raw_sql(
        "CREATE TRIGGER outbox_mark_fails BEFORE UPDATE ON outbox FOR EACH ROW \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'relay died'",
    )
    .execute(&h.db)
    .await
    .unwrap();
    let mut committed = HashSet::new();
    for n in 0..10 {
        committed.insert(enqueue(&h, &topic, &format!("k{}", n % 3), n, true).await);
    }
    let label = format!("topic=\"{topic}\"");
    let published = || metric(cityhub_platform::metrics::OUTBOX_PUBLISHED, &[&label]);
    match &relay {
        Running::Poll(poll) => assert!(poll.run_once().await.is_err(), "published, then could not mark"),
        // The binlog relay publishes, fails to mark and store its position,
        // reads again from the position it had stored and publishes again.
        Running::Binlog { .. } => {
            let twice = eventually(DRAIN, || async { published() >= 20.0 });
            assert!(twice.await, "published again while the marks fail");
        }
    }
    assert!(published() >= 10.0, "published once");
    sqlx::raw_sql("DROP TRIGGER outbox_mark_fails").execute(&h.db).await.unwrap();
    relay.drain(&h).await;

    let (consumer, seen) = consume(&h, &topic).await;
    let copies = published() as usize;
    assert!(copies >= 20, "published again after the failed marks: {copies}");
    assert!(eventually(DRAIN, || async { seen.0.lock().unwrap().len() >= copies }).await, "the copies arrive");
    consumer.shutdown().await;
    relay.stop().await;
    // A consumer that applies each event id once ends as if each came once.
    let mut applied = HashSet::new();
    let mut effects = 0;
    for (event_id, ..) in seen.0.lock().unwrap().iter() {
        if applied.insert(*event_id) {
            effects += 1;
        }
    }
    assert_eq!((applied, effects), (committed, 10));
}

/// A broker that is gone is gone from its name server's routes at once: the
/// relay's send then fails before it reaches a broker, and that failure is
/// counted like a refused batch (the alert on failed publishes sees an
/// outage either way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_that_finds_no_route_to_a_broker_fails_and_is_counted() {
    let h = Harness::start(|s| {
        // Nothing listens there: no route for any topic.
        s.mq.namesrv_addr = "127.0.0.1:1".into();
        s.mq.send_timeout_ms = Duration::from_millis(1000);
    })
    .await;
    let topic = format!("{}_events", h.env.settings.mq.order_topic);
    let relay = relay(&h).await;
    let failures = || metric(cityhub_platform::metrics::OUTBOX_FAILURES, &[&format!("topic=\"{topic}\"")]);
    let event = Outgoing { id: 1, topic: topic.clone(), msg_key: "a".into(), payload: "{}".into() };

    // The relay tries to create the topic once, briefly: each failing send
    // ends within a few send timeouts, not `mq::ensure_topic`'s 30 s.
    let started = std::time::Instant::now();
    let err = relay.send(std::slice::from_ref(&event)).await.expect_err("no broker to send to");
    assert!(err.contains("no route"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(15), "the send took {:?}", started.elapsed());
    assert_eq!(failures(), 1.0);
}
