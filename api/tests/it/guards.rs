//! Guards every route shares: an operator key on every `/admin/*` operation,
//! and the rate limits of the routes (the limiter itself is tested in
//! `platform/tests`).

use std::time::Duration;

use cityhub_core::OrderId;
use serde_json::Value;

use crate::app::{Options, TestApp};

/// Every admin operation of the document (so new ones are covered): 401
/// without a token or with one that is not valid, 403 with a shopper's.
/// The one exception is the console's page, `GET /admin/`: it holds no
/// data, and every figure it shows comes from a guarded route.
#[tokio::test]
async fn every_admin_route_answers_401_without_a_valid_token_and_403_to_a_shopper() {
    let app = TestApp::spawn_without_worker().await;
    let (_, shopper) = app.login("13800000090").await;
    let doc = serde_json::to_value(cityhub_api::openapi()).unwrap();
    let mut checked = 0;
    let guarded = |p: &str| p.starts_with("/admin/") && p != "/admin/";
    for (path, item) in doc["paths"].as_object().unwrap().iter().filter(|(p, _)| guarded(p)) {
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
            redis::AsyncCommands::keys(&mut app.kv.conn(), format!("{}auth:client:*", app.kv.keys.prefix()))
                .await
                .unwrap();
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert!(keys[0].ends_with(&format!(":{{{counted}}}:codes")), "trusted {trusted:?}: {keys:?}");
        app.shutdown().await;
    }
}

/// A limited answer: 429, `rate_limited`, and a `Retry-After` within the window.
fn assert_limited(status: u16, retry_after: Option<u64>, body: &Value, window_secs: u64) {
    assert_eq!((status, body["code"].as_str()), (429, Some("rate_limited")), "{body}");
    assert!(retry_after.is_some_and(|s| (1..=window_secs).contains(&s)), "Retry-After {retry_after:?}");
}

async fn post(app: &TestApp, path: &str, token: Option<&str>, body: Value) -> (u16, Option<u64>, Value) {
    let mut req = app.http.post(app.url(path)).json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let r = req.send().await.unwrap();
    let retry_after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    (r.status().as_u16(), retry_after, r.json().await.unwrap_or(Value::Null))
}

async fn rate_limited_total(app: &TestApp, route: &str) -> u64 {
    let text = app.http.get(app.ops_url("/metrics")).send().await.unwrap().text().await.unwrap();
    let prefix = format!("cityhub_rate_limited_total{{route=\"{route}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map_or(0, |v| v.trim().parse().unwrap())
}

/// The seckill route's limits are counted inside its script, per voucher:
/// a user's attempts past `user` and everyone's past `ip` are refused with
/// 429 before any check of the sale, reserve nothing, and are not counted
/// against the other limit.
#[tokio::test]
async fn seckill_attempts_past_the_user_or_ip_window_get_429_and_reserve_nothing() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.seckill = "user: 3 per 60s; ip: 5 per 60s".parse().unwrap();
    })
    .await;
    let voucher = app.on_sale(10).await;
    let users = app.users(4).await;
    let path = format!("/vouchers/{voucher}/seckill");
    let first = &users[0].1;
    let answers =
        futures::future::join_all((0..5).map(|_| post(&app, &path, Some(first), serde_json::json!({})))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.0).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [202, 409, 409, 429, 429], "{answers:?}");
    for (status, retry_after, body) in answers.iter().filter(|a| a.0 == 429) {
        assert_limited(*status, *retry_after, body, 60);
    }
    // Three attempts from this IP so far: two more users fit, the next does not.
    for (_, token) in &users[1..3] {
        assert_eq!(app.seckill(token, voucher).await.0, 202);
    }
    let (status, retry_after, body) = post(&app, &path, Some(&users[3].1), serde_json::json!({})).await;
    assert_limited(status, retry_after, &body, 60);
    assert_eq!(app.redis_stock(voucher).await, 7, "three won, nothing else reserved");
    assert_eq!(app.buyers(voucher).await.len(), 3);
    assert_eq!(rate_limited_total(&app, "seckill").await, 3);
    app.shutdown().await;
}

/// The public shop reads share one window per client IP (crawlers) and a
/// `global` window over every client: a client past its own window gets 429
/// on any of the reads, another client still reads until the global window
/// is spent. A refused read uses nothing of either window.
#[tokio::test]
async fn shop_reads_past_the_ip_or_global_window_get_429() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.http.trusted_proxies = "127.0.0.1".into();
        s.limits.reads = "ip: 3 per 60s; global: 5 per 60s".parse().unwrap();
    })
    .await;
    let shop = app.shop().await;
    let get = |path: String, client: &'static str| {
        let app = &app;
        async move {
            let r = app.http.get(app.url(&path)).header("x-forwarded-for", client).send().await.unwrap();
            let retry_after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
            (r.status().as_u16(), retry_after, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (crawler, shopper) = ("203.0.113.7", "198.51.100.9");
    for path in [format!("/shops/{shop}"), "/shops".into(), "/shop-types".into()] {
        assert_eq!(get(path, crawler).await.0, 200);
    }
    let (status, retry_after, body) = get(format!("/shops/{shop}"), crawler).await;
    assert_limited(status, retry_after, &body, 60);
    // Another client has a window of its own; two reads spend the global five.
    for _ in 0..2 {
        assert_eq!(get("/shops".into(), shopper).await.0, 200);
    }
    let (status, retry_after, body) = get("/shop-types".into(), shopper).await;
    assert_limited(status, retry_after, &body, 60);
    assert_eq!(rate_limited_total(&app, "reads").await, 2);
    // Writes and other routes are not read-limited.
    assert_eq!(app.get_at(&app.base, "/healthz", None).await.0, 200);
    app.shutdown().await;
}

/// Code requests past the client's window get 429 and send no code: the
/// window counts every phone the client asks for.
#[tokio::test]
async fn code_requests_past_the_ip_window_get_429_and_send_nothing() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.login_code = "ip: 3 per 60s".parse().unwrap();
    })
    .await;
    let code_of = |phone: &str| {
        let key = cityhub_core::kv::CityKeys::login_code(&app.kv.keys, phone);
        let mut conn = app.kv.conn();
        async move { redis::AsyncCommands::get::<_, Option<String>>(&mut conn, key).await.unwrap() }
    };
    let phone = |p: &str| serde_json::json!({ "phone": p });
    for p in ["13800000101", "13800000102", "13800000103"] {
        assert_eq!(post(&app, "/auth/code", None, phone(p)).await.0, 200);
        assert!(code_of(p).await.is_some());
    }
    let (status, retry_after, body) = post(&app, "/auth/code", None, phone("13800000104")).await;
    assert_limited(status, retry_after, &body, 60);
    assert_eq!(code_of("13800000104").await, None);
    assert_eq!(rate_limited_total(&app, "login_code").await, 1);
    app.shutdown().await;
}

/// Payments take tokens from the user's bucket: a full bucket lets its
/// capacity through at once, the next waits for a token.
#[tokio::test]
async fn payment_requests_past_the_users_bucket_get_429() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.payment = "user: bucket 2 at 0.1/s".parse().unwrap();
    })
    .await;
    let users = app.users(2).await;
    let pay = |token: &str| {
        let (app, token) = (&app, token.to_owned());
        async move { post(app, "/orders/123456789/pay", Some(&token), serde_json::json!({})).await }
    };
    for _ in 0..2 {
        assert_eq!(pay(&users[0].1).await.0, 404, "no such order, but within the bucket");
    }
    let (status, retry_after, body) = pay(&users[0].1).await;
    assert_limited(status, retry_after, &body, 10);
    assert_eq!(pay(&users[1].1).await.0, 404, "another user has a bucket of their own");
    // Without a valid session nothing is counted by user: the handler answers 401.
    assert_eq!(pay("not-a-token").await.0, 401);
    app.shutdown().await;
}

/// A body over the limit is refused before it is parsed or checked (400
/// `invalid_body`; under the limit these bodies get 422 or 401).
#[tokio::test]
async fn bodies_over_the_limit_are_refused_before_they_are_parsed() {
    let app = TestApp::spawn_without_worker().await;
    let big = serde_json::json!({ "phone": "1".repeat(cityhub_api::BODY_LIMIT) }).to_string();
    for path in ["/auth/code", "/auth/login", "/payments/callback"] {
        let r = app
            .http
            .post(app.url(path))
            .header("content-type", "application/json")
            .body(big.clone())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        assert_eq!((status, body["code"].as_str()), (400, Some("invalid_body")), "{path}: {body}");
    }
    app.shutdown().await;
}

/// No token, login code or callback secret reaches the logs: a run through
/// login, an authenticated read, an admin call, a seckill, a payment and its
/// signed callback, and logout, logged at debug, then every captured event
/// and span field is searched for each.
#[tokio::test]
async fn no_token_code_or_secret_reaches_the_logs() {
    cityhub_testkit::logs::init_with("info,cityhub=debug,tower_http=debug,sqlx=debug");
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.payments.callback_url = "http://127.0.0.1:9/".into();
    })
    .await;
    let phone = "13800000111";
    let (challenge, code) = app.ask_code(phone).await;
    let r = app
        .http
        .post(app.url("/auth/login"))
        .json(&serde_json::json!({ "phone": phone, "code": code, "challenge": challenge }))
        .send()
        .await
        .unwrap();
    let token = r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    assert_eq!(app.get_at(&app.base, "/users/me", Some(&token)).await.0, 200);
    let admin = app.admin_token();
    let voucher = app.on_sale(5).await;
    let (status, won) = app.seckill(&token, voucher).await;
    assert_eq!(status, 202, "{won}");
    let order: OrderId = won["order_id"].as_str().unwrap().parse().unwrap();
    app.wait_for_orders(voucher, 1, Duration::from_secs(30)).await;
    let txn = app.start_payment(&token, order).await;
    assert_eq!(app.paid_callback(&txn, order, 5000).await.0, 200);
    assert_eq!(app.admin_close(Some(&admin), order).await.0, 200);
    let r = app.http.post(app.url("/auth/logout")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 204);
    let secret = app.env.settings.payments.callback_secret.expose().to_owned();
    app.shutdown().await;

    assert!(cityhub_testkit::logs::any(|l| l.contains("order paid") || l.contains("refunded")), "nothing captured");
    for (what, needle) in [("token", token.as_str()), ("admin token", admin.as_str()), ("secret", secret.as_str())] {
        assert!(!cityhub_testkit::logs::any(|l| l.contains(needle)), "the {what} is in the logs");
    }
    // The code is six digits: look for it as a number of its own.
    let as_number = |l: &str| l.split(|c: char| !c.is_ascii_digit()).any(|n| n == code);
    assert!(!cityhub_testkit::logs::any(as_number), "the login code is in the logs");
}

/// Notes, likes and the feed have limits of their own: past them 429,
/// and a refused note writes no row and no event.
#[tokio::test]
async fn notes_likes_and_the_feed_past_their_limits_get_429_and_write_nothing() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.notes = "user: 2 per 60s".parse().unwrap();
        s.limits.likes = "user: 2 per 60s".parse().unwrap();
        s.limits.feed = "user: 2 per 60s".parse().unwrap();
    })
    .await;
    let shop = app.shop().await;
    let users = app.users(1).await;
    let token = users[0].1.as_str();
    let note = serde_json::json!({ "shop_id": shop, "title": "Dumplings", "content": "crisp", "images": [] });
    let mut created = Vec::new();
    for _ in 0..2 {
        let (status, _, body) = post(&app, "/notes", Some(token), note.clone()).await;
        assert_eq!(status, 201, "{body}");
        created.push(body["id"].as_str().unwrap().to_owned());
    }
    let (status, retry_after, body) = post(&app, "/notes", Some(token), note).await;
    assert_limited(status, retry_after, &body, 60);
    let rows: (i64, i64) = sqlx::query_as("SELECT (SELECT COUNT(*) FROM notes), (SELECT COUNT(*) FROM outbox)")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(rows, (2, 2), "the refused note wrote nothing");
    let like = |id: &str| app.http.put(app.url(&format!("/notes/{id}/like"))).bearer_auth(token).send();
    assert_eq!(like(&created[0]).await.unwrap().status(), 200);
    assert_eq!(like(&created[1]).await.unwrap().status(), 200);
    assert_eq!(like(&created[0]).await.unwrap().status(), 429);
    for expect in [200, 200, 429] {
        assert_eq!(app.get_at(&app.base, "/feed", Some(token)).await.0, expect);
    }
    for route in ["notes", "likes", "feed"] {
        assert_eq!(rate_limited_total(&app, route).await, 1, "{route}");
    }
    app.shutdown().await;
}
