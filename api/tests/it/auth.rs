//! Login by phone code; bearer tokens; input validation.

use std::time::Duration;

use cityhub_core::auth::Role;
use cityhub_core::kv::CityKeys;
use redis::AsyncCommands;
use serde_json::{json, Value};

use cityhub_core::testkit::logs;

use crate::app::{eventually, Options, TestApp};

#[tokio::test]
async fn a_phone_code_logs_in_and_the_token_identifies_the_user() {
    let app = TestApp::spawn_without_worker().await;
    let (user, token) = app.login("13800138000").await;

    let r = app.http.get(app.url("/users/me")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let me: Value = r.json().await.unwrap();
    assert_eq!(me, json!({ "user_id": user.to_string(), "role": "shopper" }));

    // Logging in again with the same phone is the same user.
    let (again, other_token) = app.login("13800138000").await;
    assert_eq!(again, user);
    assert_ne!(other_token, token);
    let users: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'shopper'").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 1);
    app.shutdown().await;
}

#[tokio::test]
async fn a_wrong_code_is_refused_and_burns_the_code() {
    let app = TestApp::spawn_without_worker().await;
    let phone = "13800138001";
    app.http.post(app.url("/auth/code")).json(&json!({ "phone": phone })).send().await.unwrap();
    let code: String = app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap();
    let wrong = if code == "000000" { "111111" } else { "000000" };

    let r = app.http.post(app.url("/auth/login")).json(&json!({ "phone": phone, "code": wrong })).send().await.unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "invalid_code");
    let r = app.http.post(app.url("/auth/login")).json(&json!({ "phone": phone, "code": code })).send().await.unwrap();
    assert_eq!(r.status(), 422, "the right code no longer works after a wrong try");
    let users: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'shopper'").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 0, "no user was created");
    app.shutdown().await;
}

#[tokio::test]
async fn bad_login_input_gets_a_clear_json_error_and_changes_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let cases: Vec<(&str, &str, u16, &str)> = vec![
        ("/auth/code", r#"{"phone": "12ab"}"#, 422, "validation_failed"),
        ("/auth/code", r#"{"phone": 13800138000}"#, 422, "invalid_body"),
        ("/auth/code", r#"{"phone": "13800138000", "extra": 1}"#, 422, "invalid_body"),
        ("/auth/code", r#"{"phone": "1380"#, 400, "invalid_body"),
        ("/auth/code", r#"{}"#, 422, "invalid_body"),
        ("/auth/login", r#"{"phone": "13800138000", "code": "12"}"#, 422, "validation_failed"),
        ("/auth/login", r#"not json"#, 400, "invalid_body"),
    ];
    for (path, body, status, code) in cases {
        let r =
            app.http.post(app.url(path)).header("content-type", "application/json").body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{path} {body}");
        let json: Value = r.json().await.unwrap();
        assert_eq!(json["code"], code, "{path} {body}: {json}");
        assert!(json["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let r = app.http.post(app.url("/auth/code")).body(r#"{"phone": "13800138000"}"#).send().await.unwrap();
    assert_eq!(r.status(), 400, "a body without a JSON content type is refused");
    let keys: Vec<String> = app.kv.conn().keys(format!("{}*", app.kv.keys.prefix())).await.unwrap();
    assert!(keys.iter().all(|k| !k.contains("auth:code") && !k.contains("auth:lock")), "a code was stored: {keys:?}");
    let sessions = keys.iter().filter(|k| k.contains("auth:session:")).count();
    assert_eq!(sessions, 1, "no session but the test app's admin: {keys:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let app = TestApp::spawn_without_worker().await;
    let r = app.http.get(app.url("/nope")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "route_not_found");
    let r = app.http.get(app.url("/auth/code")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "method_not_allowed");
    let r = app.http.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("x-request-id"), "every response carries a request id");
    let r = app.http.get(app.url("/readyz")).header("x-request-id", "abc-123").send().await.unwrap();
    assert_eq!(r.headers()["x-request-id"], "abc-123");
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["checks"], json!({ "mysql": true, "redis": true, "rocketmq": true }));
    app.shutdown().await;
}

async fn request_code(app: &TestApp, phone: &str) -> reqwest::Response {
    app.http.post(app.url("/auth/code")).json(&json!({ "phone": phone })).send().await.unwrap()
}

async fn try_code(app: &TestApp, phone: &str, code: &str) -> reqwest::Response {
    app.http.post(app.url("/auth/login")).json(&json!({ "phone": phone, "code": code })).send().await.unwrap()
}

/// A six-digit code other than `code`.
fn wrong(code: &str) -> &'static str {
    if code == "000000" {
        "111111"
    } else {
        "000000"
    }
}

async fn assert_locked(r: reqwest::Response) {
    assert_eq!(r.status(), 429);
    let retry_after: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry_after > 0 && retry_after <= 900, "{retry_after}");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], "login_locked");
    assert!(body["message"].as_str().unwrap().contains(" s"), "the answer says how long: {body}");
}

#[tokio::test]
async fn fifty_wrong_codes_across_fresh_codes_lock_the_phone_after_a_handful_of_guesses() {
    let app = TestApp::spawn_without_worker().await;
    let phone = "13800138002";
    let (mut guesses, mut locked) = (0, 0);
    for _ in 0..50 {
        let r = request_code(&app, phone).await;
        if r.status() == 429 {
            locked += 1;
            continue;
        }
        assert_eq!(r.status(), 200);
        let code: String = app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap();
        let r = try_code(&app, phone, wrong(&code)).await;
        match r.status().as_u16() {
            422 => guesses += 1,
            429 => locked += 1,
            other => panic!("unexpected {other}"),
        }
    }
    let limits = &app.env.settings.auth;
    assert!(guesses <= limits.wrong_codes_per_phone + 1, "{guesses} guesses were judged");
    assert!(locked >= 40, "most of the 50 rounds met the lockout ({locked})");

    // Locked: no new code, and even the right code does not log in.
    assert_locked(request_code(&app, phone).await).await;
    let _: () = app.kv.conn().set(app.kv.keys.login_code(phone), "123456").await.unwrap();
    assert_locked(try_code(&app, phone, "123456").await).await;
    let code: Option<String> = app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap();
    assert_eq!(code.as_deref(), Some("123456"), "a locked-out login does not even use up the code");
    let users: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'shopper'").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 0);
    // Another phone is not affected.
    assert_eq!(request_code(&app, "13800138003").await.status(), 200);
    app.shutdown().await;
}

#[tokio::test]
async fn one_client_ip_cycling_through_phones_is_locked_out_too() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.auth.code_requests_per_ip = 6;
        s.auth.wrong_codes_per_ip = 3;
    })
    .await;
    // Wrong codes across phones: the fourth locks the IP.
    let mut statuses = Vec::new();
    for i in 0..4 {
        let phone = format!("1380013810{i}");
        assert_eq!(request_code(&app, &phone).await.status(), 200);
        let code: String = app.kv.conn().get(app.kv.keys.login_code(&phone)).await.unwrap();
        statuses.push(try_code(&app, &phone, wrong(&code)).await.status().as_u16());
    }
    assert_eq!(statuses, [422, 422, 422, 429]);
    assert_locked(request_code(&app, "13800138199").await).await;
    app.shutdown().await;
}

#[tokio::test]
async fn login_codes_reach_the_log_only_with_the_development_switch() {
    for log_codes in [false, true] {
        let app = TestApp::spawn_with(Options { worker: false }, |s| s.auth.log_codes = log_codes).await;
        let phone = if log_codes { "13800138011" } else { "13800138010" };
        assert_eq!(request_code(&app, phone).await.status(), 200);
        let code: String = app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap();
        let logged = logs::contains(&[phone, &format!("code={code}")]);
        assert_eq!(logged, log_codes, "log_codes = {log_codes}");
        app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_out_token_is_refused_by_both_api_instances_at_once_and_redis_never_holds_it() {
    // Sessions stay in each instance's memory for ten minutes: only the
    // invalidation message can end them in time.
    let app = TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = 600_000).await;
    let second = app.second_instance().await;
    let (_, token) = app.login("13800000077").await;
    for base in [&app.base, &second.base] {
        assert_eq!(app.get_at(base, "/users/me", Some(&token)).await.0, 200);
    }
    let keys: Vec<String> = app.kv.conn().keys(format!("{}*", app.kv.keys.prefix())).await.unwrap();
    assert!(keys.iter().any(|k| k.contains("auth:session:")), "{keys:?}");
    assert!(keys.iter().all(|k| !k.contains(&token)), "a key holds the token itself: {keys:?}");

    let r = app.http.post(app.url("/auth/logout")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 204);
    for base in [&app.base, &second.base] {
        // The README's bound: as soon as the message arrives.
        let refused =
            eventually(Duration::from_secs(1), || async { app.get_at(base, "/users/me", Some(&token)).await.0 == 401 })
                .await;
        assert!(refused, "{base} still accepts the token");
    }
    let r = app.http.post(app.url("/auth/logout")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 401, "a second logout has no session to end");
    second.shutdown().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_change_takes_effect_on_live_sessions_of_every_instance() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = 600_000).await;
    let second = app.second_instance().await;
    let (_, token) = app.login("13800000078").await;
    let admin_only = "/admin/reconcile/1";
    for base in [&app.base, &second.base] {
        assert_eq!(app.get_at(base, admin_only, Some(&token)).await.0, 403);
    }
    let auth = cityhub_core::auth::Auth::new(app.db.clone(), app.kv.clone(), &app.env.settings.auth);
    let phone = cityhub_core::auth::Phone::parse("13800000078").unwrap();
    for (role, status) in [(Role::Admin, 404), (Role::Shopper, 403)] {
        auth.set_role(&phone, role).await.unwrap();
        for base in [&app.base, &second.base] {
            let seen = eventually(Duration::from_secs(1), || async {
                app.get_at(base, admin_only, Some(&token)).await.0 == status
            })
            .await;
            assert!(seen, "{base}: the live session did not become {role:?}");
        }
    }
    second.shutdown().await;
    app.shutdown().await;
}
