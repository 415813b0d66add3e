//! Guards every route shares: the admin role on every `/admin/*` operation,
//! and the Redis rate limiters the routes are to use.

use std::time::{Duration, Instant};

use cityhub_core::testkit::TestEnv;
use cityhub_platform::ratelimit::{self, Decision, Limit};
use serde_json::Value;

use crate::app::TestApp;

/// Every admin operation of the document (so new ones are covered): 401
/// without a token or with one that is not valid, 403 with a shopper's.
#[tokio::test]
async fn every_admin_route_answers_401_without_a_valid_token_and_403_to_a_shopper() {
    let app = TestApp::spawn_without_worker().await;
    let (_, shopper) = app.login("13800000090").await;
    let doc = serde_json::to_value(cityhub_api::openapi()).unwrap();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap().iter().filter(|(p, _)| p.starts_with("/admin/")) {
        let concrete = path.split('/').map(|s| if s.starts_with('{') { "1" } else { s }).collect::<Vec<_>>().join("/");
        for method in item.as_object().unwrap().keys() {
            let method: reqwest::Method = method.to_uppercase().parse().unwrap();
            for (token, want) in [(None, 401), (Some("not-a-token"), 401), (Some(shopper.as_str()), 403)] {
                let mut req = app.http.request(method.clone(), app.url(&concrete)).json(&serde_json::json!({}));
                if let Some(token) = token {
                    req = req.bearer_auth(token);
                }
                let r = req.send().await.unwrap();
                let status = r.status().as_u16();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                assert_eq!(status, want, "{method} {concrete} with {token:?}: {body}");
                assert!(body["code"].is_string(), "{method} {concrete}: {body}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 7, "only {checked} admin operations found");
    app.shutdown().await;
}

async fn decide_all(kv: &cityhub_core::kv::Kv, key: &str, limit: Limit, n: usize) -> Vec<Decision> {
    let checks = (0..n).map(|_| {
        let (kv, key) = (kv.clone(), key.to_owned());
        tokio::spawn(async move { ratelimit::check(&kv, &key, limit).await.unwrap() })
    });
    futures::future::join_all(checks).await.into_iter().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sliding_window_passes_n_of_n_plus_one_at_once_and_never_more_than_n_in_any_window() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let limit = Limit::Window { window_ms: 1000, limit: 5 };
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
        if ratelimit::check(&kv, &key, limit).await.unwrap() == Decision::Pass {
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

/// Whose IP a code request counts against: `X-Forwarded-For` only when the
/// direct peer (here 127.0.0.1) is a configured trusted proxy.
#[tokio::test]
async fn x_forwarded_for_names_the_client_only_behind_a_trusted_proxy() {
    for (trusted, counted) in [("", "127.0.0.1"), ("127.0.0.1", "203.0.113.7")] {
        let app = crate::app::TestApp::spawn_with(crate::app::Options { worker: false }, |s| {
            s.http.trusted_proxies = trusted.into();
        })
        .await;
        let r = app
            .http
            .post(app.url("/auth/code"))
            .header("x-forwarded-for", "203.0.113.7")
            .json(&serde_json::json!({ "phone": "13800000091" }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let keys: Vec<String> =
            redis::AsyncCommands::keys(&mut app.kv.conn(), format!("{}auth:*:ip:*", app.kv.keys.prefix()))
                .await
                .unwrap();
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert!(keys[0].ends_with(&format!(":ip:{counted}")), "trusted {trusted:?}: {keys:?}");
        app.shutdown().await;
    }
}
