//! What a client cannot stretch: idle, slow and half-open connections,
//! oversized heads, requests past the in-flight cap or the time bound.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::app::{Options, TestApp};

fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection; what it sent, and when
/// it closed (`None`: still open after `within`).
async fn until_closed(stream: &mut TcpStream, within: Duration) -> (String, Option<Duration>) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = within.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), Some(started.elapsed())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), None),
        }
    }
}

/// 2,000 idle connections held open do not stop a shopper from being
/// served, and the server closes each once its head timeout passes; a
/// client that trickles a head is closed the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_connections_are_closed_and_do_not_keep_shoppers_out() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.http.header_timeout_ms = Duration::from_millis(1500);
    })
    .await;
    let mut idle = Vec::with_capacity(2000);
    for _ in 0..2000 {
        idle.push(TcpStream::connect(addr(&app)).await.unwrap());
    }
    let mut slow = TcpStream::connect(addr(&app)).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let served = Instant::now();
    assert_eq!(app.get_at(&app.base, "/healthz", None).await.0, 200, "a shopper is served beside them");
    assert!(served.elapsed() < Duration::from_secs(5), "served in {:?}", served.elapsed());

    // The server closes them (the client keeps them open for a minute).
    let (_, closed) = until_closed(&mut slow, Duration::from_secs(60)).await;
    assert!(closed.is_some(), "a half-sent head kept its connection");
    let mut open = 0;
    for stream in &mut idle {
        if until_closed(stream, Duration::from_secs(30)).await.1.is_none() {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} idle connections were never closed");
    assert_eq!(app.get_at(&app.base, "/healthz", None).await.0, 200);
    app.shutdown().await;
}

/// A head over `http.max_header_bytes` is refused with 431 and the
/// connection closed; a normal request on a new one is served.
#[tokio::test]
async fn a_head_over_the_limit_gets_431() {
    let app = TestApp::spawn_without_worker().await;
    let big = "v".repeat(app.env.settings.http.max_header_bytes + 1);
    let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let (answer, closed) = until_closed(&mut stream, Duration::from_secs(30)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{:?}", answer.lines().next());
    assert!(closed.is_some());
    assert_eq!(app.get_at(&app.base, "/healthz", None).await.0, 200);
    app.shutdown().await;
}

/// Past `http.max_in_flight` a request gets 503 `overloaded` at once; a
/// request held past `http.request_timeout_ms` (its body never comes) gets
/// 503 `request_timeout`; both in the API's error shape.
#[tokio::test]
async fn requests_past_the_in_flight_cap_or_the_time_bound_get_503() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.http.max_in_flight = 1;
        s.http.request_timeout_ms = Duration::from_millis(1500);
    })
    .await;
    // A body announced and never sent holds its request in flight.
    let mut held = TcpStream::connect(addr(&app)).await.unwrap();
    let head = "POST /auth/code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
    held.write_all(head.as_bytes()).await.unwrap();
    let overloaded = crate::app::eventually(Duration::from_secs(10), || async {
        let (status, body) = app.get_at(&app.base, "/shop-types", None).await;
        status == 503 && body["code"] == "overloaded"
    })
    .await;
    assert!(overloaded, "no 503 overloaded while a request was in flight");
    assert_eq!(app.get_at(&app.base, "/healthz", None).await.0, 200, "health checks are not counted");
    let (answer, _) = until_closed(&mut held, Duration::from_secs(30)).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{:?}", answer.lines().next());
    assert!(answer.contains("request_timeout"), "{answer}");
    let served = crate::app::eventually(Duration::from_secs(10), || async {
        app.get_at(&app.base, "/shop-types", None).await.0 == 200
    })
    .await;
    assert!(served, "the place was not given back");
    app.shutdown().await;
}

/// A draining API: from the moment its shutdown begins, `GET /serving` (the
/// balancer's check) answers 503 `draining` while every other request is
/// still served for `http.drain_ms`; only then does the listener close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_api_fails_the_balancers_check_at_once_and_serves_until_its_drain_ends() {
    let drain = Duration::from_secs(6);
    let app = TestApp::spawn_with(Options { worker: false }, |s| s.http.drain_ms = drain).await;
    let serving = || async { app.get_at(&app.base, "/serving", None).await };
    assert_eq!(serving().await.0, 200);
    let began = Instant::now();
    app.begin_shutdown();
    let draining = crate::app::eventually(drain, || async {
        let (status, body) = serving().await;
        status == 503 && body["code"] == "draining"
    })
    .await;
    assert!(draining, "the balancer's check still passes: {:?}", serving().await);
    let (status, body) = app.get_at(&app.base, "/healthz", None).await;
    assert_eq!(status, 200, "a request during the drain was not served: {body}");
    assert!(began.elapsed() < drain, "the check took the whole drain to fail");

    let closed = crate::app::eventually(drain + Duration::from_secs(10), || async {
        TcpStream::connect(addr(&app)).await.is_err()
    })
    .await;
    assert!(closed, "the listener is still open");
    assert!(began.elapsed() >= drain, "the listener closed {:?} into a drain of {drain:?}", began.elapsed());
    app.shutdown().await;
}
