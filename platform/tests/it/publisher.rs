//! The batching publisher's window: whatever the broker's speed, a publish
//! answered `Ok` was answered (so its message stored) within
//! `BatchConfig::window` of its call; one whose send could not start in time
//! is answered `Expired` and never sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher, PublishError};
use cityhub_testkit::{mq_client, TestEnv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_answered_ok_was_stored_within_the_window_while_sends_queue_up() {
    let env = TestEnv::new();
    let s = &env.settings.mq;
    let producer = cityhub_platform::mq::start_producer(&mq_client(), s, &s.producer_group).await.unwrap();
    assert!(cityhub_platform::mq::ensure_topic(&producer, &s.order_topic, 2).await);
    // One message per send and one send at a time: 6,000 publishes at once
    // queue up for seconds (the broker takes ~1,500 single sends a second),
    // as every publish does behind a broker that answers slowly.
    let cfg = BatchConfig {
        max: 1,
        linger: Duration::ZERO,
        in_flight: 1,
        timeout: Duration::from_secs(1),
        wait_max: Duration::from_millis(100),
    };
    let publisher = Arc::new(BatchPublisher::spawn(producer, s.order_topic.clone(), cfg));
    let tasks: Vec<_> = (0..6_000)
        .map(|i| {
            let publisher = Arc::clone(&publisher);
            tokio::spawn(async move {
                let called = Instant::now();
                let answer = publisher.publish(format!("k{i}"), b"{}".to_vec()).await;
                (answer, called.elapsed())
            })
        })
        .collect();
    let (mut ok, mut expired, mut slowest_ok) = (0, 0, Duration::ZERO);
    for task in tasks {
        match task.await.unwrap() {
            (Ok(()), took) => {
                ok += 1;
                slowest_ok = slowest_ok.max(took);
            }
            (Err(PublishError::Expired(_)), _) => expired += 1,
            (Err(err), _) => panic!("a publish failed otherwise: {err}"),
        }
    }
    assert!(
        slowest_ok <= cfg.window(),
        "a publish was answered stored {slowest_ok:?} after its call (window {:?})",
        cfg.window()
    );
    assert!(ok > 0 && expired > 0, "{ok} stored, {expired} expired: the backlog never outlasted the wait");
}
