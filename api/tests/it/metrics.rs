//! Prometheus metrics during a small flash sale, and request ids followed
//! from the HTTP request into the worker's log.

use std::time::Duration;

use cityhub_platform::metrics::sample;
use cityhub_testkit::logs;
use futures::future::join_all;

use crate::app::{eventually, Options, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_requests_outcomes_publishes_and_consumption_during_a_sale() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| s.mq.lag_sample_ms = Duration::from_millis(200)).await;
    let voucher = app.on_sale(5).await;
    let users = app.users(12).await;
    // One winner asks twice (already bought), then the rest sell it out.
    app.seckill(&users[0].1, voucher).await;
    app.seckill(&users[0].1, voucher).await;
    join_all(users[1..].iter().map(|(_, t)| app.seckill(t, voucher))).await;
    assert_eq!(app.wait_for_orders(voucher, 5, Duration::from_secs(60)).await, 5);

    // The API and the worker share this process's recorder and its ops listener.
    let ops_url = app.ops_url("/metrics");
    let public = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(public.status(), 404, "metrics are not on the public port");

    let api = app.http.get(&ops_url).send().await.unwrap();
    assert_eq!(api.status(), 200);
    let api = api.text().await.unwrap();
    let route = r#"route="/vouchers/{id}/seckill""#;
    assert!(sample(&api, "cityhub_http_requests_total", &[route, r#"status="202""#]).unwrap() >= 5.0);
    assert!(sample(&api, "cityhub_http_requests_total", &[route, r#"status="409""#]).unwrap() >= 8.0);
    assert!(sample(&api, "cityhub_http_request_duration_seconds_bucket", &[route, r#"le="+Inf""#]).unwrap() >= 13.0);
    // Each test runs in its own process, so these counters hold this sale alone.
    let outcome = |o: &str| sample(&api, "cityhub_seckill_requests_total", &[&format!(r#"outcome="{o}""#)]);
    assert_eq!(outcome("accepted"), Some(5.0));
    assert_eq!(outcome("sold_out"), Some(7.0));
    assert_eq!(outcome("already_bought"), Some(1.0));
    let others = cityhub_core::seckill::Outcome::ALL.map(|o| o.label());
    for other in others.iter().filter(|o| !["accepted", "sold_out", "already_bought"].contains(o)) {
        assert_eq!(outcome(other), Some(0.0), "{other} is exported from the start, at zero");
    }
    let topic = format!(r#"topic="{}""#, app.env.settings.mq.order_topic);
    assert!(sample(&api, "cityhub_mq_publish_batch_size_bucket", &[&topic, r#"le="+Inf""#]).unwrap() >= 1.0);
    assert!(sample(&api, "cityhub_mq_publish_duration_seconds_count", &[&topic]).unwrap() >= 1.0);
    assert!(sample(&api, "cityhub_mq_published_messages_total", &[&topic]).unwrap() >= 5.0);
    assert_eq!(sample(&api, "cityhub_mq_publish_failures_total", &[&topic]), Some(0.0));
    assert!(sample(&api, "cityhub_db_pool_connections", &[r#"state="idle""#]).is_some());
    let version = format!(r#"version="{}""#, env!("CARGO_PKG_VERSION"));
    assert_eq!(sample(&api, "cityhub_build_info", &[&version, "commit="]), Some(1.0), "the build is labelled");

    let scrape = || async { app.http.get(&ops_url).send().await.unwrap().text().await.unwrap() };
    let lag = format!(r#"group="{}""#, app.env.settings.mq.order_consumer_group);
    let drained = || async { sample(&scrape().await, "cityhub_consumer_lag_messages", &[&lag]) == Some(0.0) };
    assert!(eventually(Duration::from_secs(30), drained).await, "the lag gauge never read 0 after the drain");
    let worker = scrape().await;
    assert_eq!(sample(&worker, "cityhub_consumer_messages_total", &[&topic, r#"result="stored""#]), Some(5.0));
    assert_eq!(sample(&worker, "cityhub_consumer_messages_total", &[&topic, r#"result="parked""#]), Some(0.0));
    assert!(sample(&worker, "cityhub_consumer_batch_duration_seconds_count", &[]).unwrap() >= 1.0);
    assert!(worker.contains("# TYPE cityhub_consumer_messages_total counter"));
    assert_eq!(sample(&worker, "cityhub_consumer_lag_messages", &[&topic, &lag]), Some(0.0));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_travels_from_the_http_request_to_the_worker_log() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(1).await;
    let (_, token) = app.users(1).await.pop().unwrap();
    let request_id = format!("req-{}", app.env.id);

    let r = app
        .http
        .post(app.url(&format!("/vouchers/{voucher}/seckill")))
        .bearer_auth(&token)
        .header("x-request-id", &request_id)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], request_id.as_str());
    let order_id = r.json::<serde_json::Value>().await.unwrap()["order_id"].as_str().unwrap().to_owned();

    let needles = ["cityhub_order_worker", &format!("order_id={order_id}"), &format!("request_id={request_id}")];
    assert!(
        eventually(Duration::from_secs(60), || async { logs::contains(&needles) }).await,
        "no worker log line carries the request id"
    );
    app.shutdown().await;
}

/// Made-up methods, paths and headers add no series: the label sets are
/// closed (`other`, `unmatched`), so a client cannot grow `/metrics` or the
/// API's memory by what it sends.
#[tokio::test]
async fn made_up_methods_paths_and_headers_add_no_series() {
    let app = TestApp::spawn_without_worker().await;
    let series = || async {
        let text = app.http.get(app.ops_url("/metrics")).send().await.unwrap().text().await.unwrap();
        // The HTTP families: other families move with background work.
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("cityhub_http_")).collect();
        let bytes = lines.iter().map(|l| series_of(l).len()).sum::<usize>();
        (lines.len(), bytes)
    };
    let hostile = |i: usize| {
        let method = reqwest::Method::from_bytes(format!("{}{i}", "X".repeat(1000)).as_bytes()).unwrap();
        let path = format!("/made/up/{i}/{}", "p".repeat(200));
        app.http
            .request(method, app.url(&path))
            .header(format!("x-made-up-{i}"), "v".repeat(100))
            .header("x-request-id", format!("id-{i}"))
            .send()
    };
    // Every shape once (the `other` and `unmatched` series exist from then on).
    for i in 0..3 {
        hostile(i).await.unwrap();
        app.http.get(app.url(&format!("/shops/{}", i + 1))).send().await.unwrap();
        app.http.get(app.url(&format!("/nope/{i}"))).send().await.unwrap();
    }
    let (before, bytes_before) = series().await;
    for i in 3..300 {
        let r = hostile(i).await.unwrap();
        assert!(r.status().is_client_error(), "{}", r.status());
        app.http.get(app.url(&format!("/nope/{i}"))).send().await.unwrap();
    }
    let (after, bytes_after) = series().await;
    assert_eq!(after, before, "made-up requests added series");
    assert_eq!(bytes_after, bytes_before, "the HTTP series' names grew");
    app.shutdown().await;
}

/// A sample line's series (its name and labels, without the value).
fn series_of(line: &str) -> &str {
    line.rsplit_once(' ').map_or(line, |(series, _)| series)
}
