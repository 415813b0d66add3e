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

/// One request through `leases` against `(key, limit)`s.
async fn admit(leases: &ratelimit::Leases, kv: &Kv, counted: &[(String, Limit)]) -> Decision {
    let ids: Vec<(u64, Limit)> = counted.iter().map(|(key, limit)| (leases.id(key), *limit)).collect();
    leases.admit(kv, &ids, |i| counted[i].0.clone()).await.unwrap()
}

async fn admit_all(leases: &ratelimit::Leases, kv: &Kv, counted: &[(String, Limit)], n: usize) -> usize {
    let mut passed = 0;
    for _ in 0..n {
        if admit(leases, kv, counted).await == Decision::Pass {
            passed += 1;
        }
    }
    passed
}

async fn entries(kv: &Kv, key: &str) -> u64 {
    redis::cmd("ZCARD").arg(key).query_async(&mut kv.conn()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowance_and_leases_of_a_tenth_keep_redis_out_and_two_instances_pass_at_most_max_plus_their_share() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    // A window far longer than the test: every request falls in one window.
    let limit = Limit::Window { window_ms: 600_000, max: 50 };
    let key = format!("{}limit:test:lease", kv.keys.prefix());
    let counted = [(key.clone(), limit)];
    let (a, b) = (ratelimit::Leases::new(100), ratelimit::Leases::new(100));

    assert_eq!(admit_all(&a, &kv, &counted, 5).await, 5);
    assert_eq!(entries(&kv, &key).await, 0, "a tenth of the limit passes without Redis");
    assert_eq!(admit_all(&a, &kv, &counted, 1).await, 1);
    assert_eq!(entries(&kv, &key).await, 5, "past the allowance, one script call counted a lease of five");
    assert_eq!(admit_all(&a, &kv, &counted, 4).await, 4);
    assert_eq!(entries(&kv, &key).await, 5, "four more spent the lease in memory");

    // Two instances racing: the window holds exactly its max, and together
    // they pass it plus each one's allowance (the bound: max plus, per
    // instance, an allowance and a lease).
    let (ka, kb) = (kv.clone(), kv.clone());
    let (ca, cb) = (counted.clone(), counted.clone());
    let (pa, pb) = tokio::join!(admit_all(&a, &ka, &ca, 100), admit_all(&b, &kb, &cb, 100));
    assert_eq!(10 + pa + pb, 50 + 5 + 5, "{pa} + {pb} passed after the first 10");
    assert_eq!(entries(&kv, &key).await, 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_refused_by_one_limit_gives_back_the_credit_it_took_from_another() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let wide = (format!("{}limit:{{test}}:wide", kv.keys.prefix()), Limit::Window { window_ms: 600_000, max: 100 });
    let narrow = (format!("{}limit:{{test}}:narrow", kv.keys.prefix()), Limit::Window { window_ms: 600_000, max: 10 });
    let leases = ratelimit::Leases::new(100);
    let both = [wide.clone(), narrow.clone()];

    // The narrow limit's allowance (1) and one lease (1) pass both; the
    // wide one's allowance (10) covers them.
    assert_eq!(admit_all(&leases, &kv, &both, 2).await, 2);
    assert_eq!(entries(&kv, &wide.0).await, 0);
    // Fill the narrow window from elsewhere: the rest is refused.
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    for i in 0..9 {
        let add = redis::cmd("ZADD").arg(&narrow.0).arg(now_ms).arg(format!("other{i}")).clone();
        let _: () = add.query_async(&mut kv.conn()).await.unwrap();
    }
    assert_eq!(admit_all(&leases, &kv, &both, 20).await, 0, "the narrow limit refuses the rest");

    // The wide limit's allowance still holds its eight credits: eight
    // requests pass from memory, and only the ninth takes a lease.
    let wide_only = [wide.clone()];
    assert_eq!(admit_all(&leases, &kv, &wide_only, 8).await, 8);
    assert_eq!(entries(&kv, &wide.0).await, 0, "the refused requests gave their credit back");
    assert_eq!(admit_all(&leases, &kv, &wide_only, 1).await, 1);
    assert_eq!(entries(&kv, &wide.0).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_lease_takes_its_tokens_at_once_and_the_bucket_passes_its_capacity_plus_the_allowance() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    // Refilling one token in 100 s: the test sees a full bucket and no refill.
    let limit = Limit::Bucket { capacity: 100, per_second: 0.01 };
    let key = format!("{}limit:test:bucket-lease", kv.keys.prefix());
    let counted = [(key.clone(), limit)];
    let leases = ratelimit::Leases::new(100);
    assert_eq!(admit_all(&leases, &kv, &counted, 11).await, 11, "the allowance of ten, then a lease");
    let tokens: f64 = redis::cmd("HGET").arg(&key).arg("tokens").query_async(&mut kv.conn()).await.unwrap();
    assert!((89.0..=90.1).contains(&tokens), "a lease took ten tokens: {tokens} left");
    assert_eq!(admit_all(&leases, &kv, &counted, 150).await, 99, "the rest of the bucket's capacity, no more");
}
