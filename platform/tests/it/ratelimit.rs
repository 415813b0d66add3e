//! The Redis rate limiters the routes use, on the real Redis: a sliding
//! window never passes more than its maximum in any window, a token bucket
//! its capacity at once and then its rate.

use std::time::{Duration, Instant};

use cityhub_platform::kv::Kv;
use cityhub_platform::ratelimit::{self, Decision, Limit};
use cityhub_testkit::TestEnv;

async fn decide_all(kv: &Kv, key: &str, limit: Limit, n: usize) -> Vec<Decision> {
    let checks = (0..n).map(|_| {
        let (kv, key) = (kv.clone(), key.to_owned());
        tokio::spawn(async move { ratelimit::check(&kv, &[(key, limit)]).await.unwrap() })
    });
    futures::future::join_all(checks).await.into_iter().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sliding_window_passes_n_of_n_plus_one_at_once_and_never_more_than_n_in_any_window() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let limit = Limit::Window { window_ms: 1000, max: 5 };
    let key = format!("{}limit:test:burst", kv.keys.prefix());
    let burst = Instant::now();
    let decisions = decide_all(&kv, &key, limit, 6).await;
    // Six decided within one window: five pass (a sixth only if the burst
    // itself outlasted the window on a starved machine).
    let most = if burst.elapsed() < Duration::from_millis(1000) { 5 } else { 6 };
    assert!((5..=most).contains(&decisions.iter().filter(|d| **d == Decision::Pass).count()), "{decisions:?}");
    let refused = decisions.iter().find_map(|d| match d {
        Decision::Refuse { retry_after } => Some(*retry_after),
        Decision::Pass => None,
    });
    assert!(refused.map_or(most == 6, |r| r > Duration::ZERO && r <= Duration::from_millis(1000)), "{refused:?}");

    // A client firing every 10 ms until 12 passes, across two window edges
    // however slow the machine. Redis decides each request between its send
    // and its answer, so six passes from the send of one to the answer of
    // the fifth after it fit in one window only if they took less than the
    // window: they never may. A window that never reopens fails the count.
    let key = format!("{}limit:test:steady", kv.keys.prefix());
    let start = Instant::now();
    let mut passed = Vec::new();
    while passed.len() < 12 && start.elapsed() < Duration::from_secs(30) {
        let sent = start.elapsed();
        if ratelimit::check(&kv, &[(key.clone(), limit)]).await.unwrap() == Decision::Pass {
            passed.push((sent, start.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(passed.len(), 12, "the window stopped reopening: {passed:?}");
    for six in passed.windows(6) {
        let span = six[5].1 - six[0].0;
        assert!(span >= Duration::from_millis(995), "six passes within {span:?}: {six:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_bucket_passes_its_capacity_at_once_then_its_rate() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let limit = Limit::Bucket { capacity: 10, per_second: 5.0 };
    let key = format!("{}limit:test:bucket", kv.keys.prefix());
    let burst_start = Instant::now();
    let burst = decide_all(&kv, &key, limit, 11).await;
    let burst_end = Instant::now();
    // A full bucket passes its capacity, and more only if the burst itself
    // took long enough to earn a token.
    let burst_passed = burst.iter().filter(|d| **d == Decision::Pass).count();
    let earned = ((burst_end - burst_start).as_secs_f64() * 5.0).floor() as usize;
    assert!((10..=10 + earned).contains(&burst_passed), "{burst_passed} passed at once: {burst:?}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let later_start = Instant::now();
    let later = decide_all(&kv, &key, limit, 10).await;
    let later_end = Instant::now();
    // Tokens back: the refill over the time between the two batches, at 5/s.
    let passed = later.iter().filter(|d| **d == Decision::Pass).count();
    let least = ((later_start - burst_end).as_secs_f64() * 5.0).floor() as usize;
    let most = ((later_end - burst_start).as_secs_f64() * 5.0).ceil() as usize;
    assert!((least..=most).contains(&passed), "{passed} tokens came back, expected {least} to {most}");
    assert!(least >= 5, "the batches were a second apart");
}
