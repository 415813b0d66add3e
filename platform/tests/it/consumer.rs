//! The push consumer over RocketMQ: its lag shows what a held-back consumer
//! owes and returns to zero once it has drained, and a batch held for longer
//! than the client's own deadlines stays with its handler.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_testkit::eventually;
use cityhub_testkit::{mq_client, TestEnv};
use tokio::sync::watch;

/// Holds every batch until the gate opens, then counts it.
struct Gated {
    open: watch::Receiver<bool>,
    done: Arc<AtomicI64>,
}

impl BatchHandler for Gated {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let _ = self.open.clone().wait_for(|open| *open).await;
        self.done.fetch_add(batch.len() as i64, Ordering::Relaxed);
        Ack::Done
    }
}

/// A consumer of the test's order topic whose handler is [`Gated`] (the gate
/// open), warmed up: sequential single sends go round the queues, so once
/// these are consumed the consumer has an offset on every queue.
struct Rig {
    consumer: Consumer,
    publisher: BatchPublisher,
    gate: watch::Sender<bool>,
    done: Arc<AtomicI64>,
    warm: i64,
}

async fn rig(env: &TestEnv) -> Rig {
    let s = &env.settings.mq;
    let producer = cityhub_platform::mq::start_producer(&mq_client(), s, &s.producer_group).await.unwrap();
    cityhub_platform::mq::ensure_topic(&producer, &s.order_topic, s.topic_queues).await;
    let (gate, open) = watch::channel(true);
    let done = Arc::new(AtomicI64::new(0));
    let handler = Arc::new(Gated { open, done: Arc::clone(&done) });
    let consumer = Consumer::start(&mq_client(), s, &s.order_consumer_group, &s.order_topic, handler).await.unwrap();
    let publisher = BatchPublisher::spawn(producer, s.order_topic.clone(), BatchConfig::from(s));
    let warm = 4 * i64::from(s.topic_queues);
    for i in 0..warm {
        publisher.publish(format!("w{i}"), b"warm".to_vec()).await.unwrap();
    }
    assert!(eventually(Duration::from_secs(60), || async { done.load(Ordering::Relaxed) == warm }).await);
    Rig { consumer, publisher, gate, done, warm }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_lag_counts_what_is_held_back_and_drains_to_zero() {
    let env = TestEnv::new();
    let s = &env.settings.mq;
    let Rig { consumer, publisher, gate, done, warm } = rig(&env).await;
    let lag_is = |want: i64| {
        let consumer = &consumer;
        move || async move { consumer.lag(&s.order_topic).await.is_ok_and(|l| l == want) }
    };
    assert!(eventually(Duration::from_secs(10), lag_is(0)).await);

    gate.send_replace(false);
    let sent = 200;
    for i in 0..sent {
        publisher.publish(format!("m{i}"), b"held".to_vec()).await.unwrap();
    }
    // Every send was stored before `publish` returned, and none is consumed.
    let held = eventually(Duration::from_secs(10), lag_is(sent)).await;
    assert!(held, "lag of a held-back consumer: {:?}", consumer.lag(&s.order_topic).await);

    gate.send_replace(true);
    let drained = eventually(Duration::from_secs(60), lag_is(0)).await;
    assert!(drained, "lag after the drain: {:?}", consumer.lag(&s.order_topic).await);
    assert!(done.load(Ordering::Relaxed) >= warm + sent, "every message consumed");
    consumer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_held_past_the_clients_blocking_deadline_stays_with_its_handler() {
    let env = TestEnv::new();
    let s = &env.settings.mq;
    let Rig { consumer, publisher, gate, done, warm } = rig(&env).await;

    gate.send_replace(false);
    let sent = 20;
    for i in 0..sent {
        publisher.publish(format!("m{i}"), b"held".to_vec()).await.unwrap();
    }
    let owed = || async { consumer.lag(&s.order_topic).await.is_ok_and(|l| l == sent) };
    assert!(eventually(Duration::from_secs(60), owed).await, "lag: {:?}", consumer.lag(&s.order_topic).await);

    // The client's blocking lane gives up on a task after 5 s queued or 30 s
    // running, by default: it would then send the batch back to the retry
    // topic and commit past it while the handler still holds it.
    tokio::time::sleep(Duration::from_secs(40)).await;
    assert_eq!(consumer.lag(&s.order_topic).await.unwrap(), sent, "the client committed past a held batch");

    gate.send_replace(true);
    assert!(eventually(Duration::from_secs(30), || async { done.load(Ordering::Relaxed) == warm + sent }).await);
    // A batch handed back would come again from the retry topic (after 10 s).
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert_eq!(done.load(Ordering::Relaxed), warm + sent, "a held batch was delivered again");
    consumer.shutdown().await;
}
