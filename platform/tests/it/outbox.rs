//! The shared outbox and its relay over RocketMQ: what commits is published,
//! what rolls back never is, a key's events keep their order on one queue,
//! and a relay dying between publishing and marking only causes duplicates.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::outbox::relay::Relay;
use cityhub_platform::outbox::{self, Envelope};
use cityhub_testkit::{eventually, mq_client, Settings, TestEnv};
use serde_json::{json, Value};
use sqlx::MySqlPool;

/// How long a consumer gets to see what was published.
const DRAIN: Duration = Duration::from_secs(60);

/// A test's environment and its migrated database.
struct Harness {
    env: TestEnv,
    db: MySqlPool,
}

impl Harness {
    async fn start(configure: impl FnOnce(&mut Settings)) -> Self {
        let mut env = TestEnv::new();
        configure(&mut env.settings);
        let db = env.db().await;
        Self { env, db }
    }
}

/// Every delivery: (event id, key, queue, offset).
#[derive(Default)]
struct Seen(Mutex<Vec<(u64, String, i32, i64)>>);

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
    Relay::new(h.db.clone(), producer, s.outbox.clone(), s.mq.topic_queues)
}

async fn consume(h: &Harness, topic: &str) -> (Consumer, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let group = format!("{topic}_reader");
    let consumer =
        Consumer::start(&mq_client(), &h.env.settings.mq, &group, topic, Arc::new(Collect(Arc::clone(&seen)))).await;
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

    let relay = relay(&h).await;
    let mut published = 0;
    for _ in 0..50 {
        published += relay.run_once().await.unwrap().published;
        if published == committed.len() {
            break;
        }
    }
    assert_eq!(published, committed.len(), "rounds of 7 published every committed event once");
    assert_eq!(relay.run_once().await.unwrap(), Default::default(), "nothing is left to publish");
    assert_eq!(relay.sample().await.unwrap().rows, 0, "no backlog");

    let (consumer, seen) = consume(&h, &topic).await;
    assert!(eventually(DRAIN, || async { seen.0.lock().unwrap().len() >= committed.len() }).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    consumer.shutdown().await;
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
    let mut committed = HashSet::new();
    for n in 0..10 {
        committed.insert(enqueue(&h, &topic, &format!("k{}", n % 3), n, true).await);
    }
    // Marking fails, as when the relay dies between the broker's answer and its commit.
    sqlx::raw_sql(
        "CREATE TRIGGER outbox_mark_fails BEFORE UPDATE ON outbox FOR EACH ROW \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'relay died'",
    )
    .execute(&h.db)
    .await
    .unwrap();
    let relay = relay(&h).await;
    assert!(relay.run_once().await.is_err(), "published, then could not mark");
    sqlx::raw_sql("DROP TRIGGER outbox_mark_fails").execute(&h.db).await.unwrap();
    assert_eq!(relay.run_once().await.unwrap().published, 10, "the unmarked rows go again");

    let (consumer, seen) = consume(&h, &topic).await;
    assert!(eventually(DRAIN, || async { seen.0.lock().unwrap().len() >= 20 }).await, "both copies arrive");
    consumer.shutdown().await;
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
