//! Login by phone code; bearer tokens; input validation.

use std::time::Duration;

use cityhub_core::auth::Role;
use cityhub_core::config::Secret;
use cityhub_core::kv::CityKeys;
use cityhub_testkit::{logs, PrivateRedis};
use redis::AsyncCommands;
use serde_json::{json, Value};

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
async fn a_code_survives_a_few_wrong_tries_then_is_spent() {
    let app = TestApp::spawn_without_worker().await;
    let tries = app.env.settings.auth.code_tries;
    assert!(tries >= 2, "a code allows more than one try");
    for (phone, wrong_tries) in [("13800138001", tries - 1), ("13800138004", tries)] {
        assert_eq!(request_code(&app, phone).await.status(), 200);
        let code: String = app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap();
        for _ in 0..wrong_tries {
            let r = try_code(&app, phone, wrong(&code)).await;
            assert_eq!(r.status(), 422);
            assert_eq!(r.json::<Value>().await.unwrap()["code"], "invalid_code");
        }
        let expect = if wrong_tries < tries { 200 } else { 422 };
        assert_eq!(try_code(&app, phone, &code).await.status(), expect, "{wrong_tries} wrong tries first");
    }
    let users: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'shopper'").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 1, "only the phone whose code survived logged in");
    app.shutdown().await;
}

/// The lockout attack of the security review: an attacker who knows a
/// victim's phone sends wrong logins (no code asked), asks for codes and
/// guesses them, from one client and then from many IPv6 addresses of one
/// /64. The victim, on another network, still gets a code and logs in.
/// Only strikes from `phone_lock_clients` distinct clients lock the phone.
#[tokio::test]
async fn one_client_cannot_lock_a_phone_out_for_its_owner() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| s.http.trusted_proxies = "127.0.0.1".into()).await;
    let victim = "13800138020";
    let (attacker, owner) = ("203.0.113.7", "2001:db8:1:2::5");
    let auth = &app.env.settings.auth;
    // Wrong logins for a phone that has no code: nothing counts against it.
    for _ in 0..auth.wrong_codes_per_phone_client * 3 {
        assert_eq!(login_from(&app, attacker, victim, "000000").await.0, 422);
    }
    let code = code_from(&app, owner, victim).await;
    assert_eq!(login_from(&app, owner, victim, &code).await.0, 200, "the owner logs in");

    // The attacker asks for codes and guesses until locked out (a code
    // survives `code_tries - 1` wrong tries): the lock is the attacker's own.
    let mut locked = false;
    for _ in 0..auth.code_requests_per_phone_client {
        if ask_from(&app, attacker, victim).await != 200 {
            locked = true;
            break;
        }
        for _ in 0..auth.code_tries {
            locked |= login_from(&app, attacker, victim, "000000").await.0 == 429;
        }
    }
    assert!(locked, "the attacker's own guesses lock the attacker out of this phone");
    assert_eq!(login_from(&app, attacker, victim, "000000").await.0, 429);
    let code = code_from(&app, owner, victim).await;
    assert_eq!(login_from(&app, owner, victim, &code).await.0, 200, "the owner still logs in");

    // Rotating IPv6 addresses inside one /64 is one client.
    let other = "13800138021";
    let mut rotated = Vec::new();
    for i in 1..=auth.code_requests_per_phone_client + 1 {
        rotated.push(ask_from(&app, &format!("2001:db8:9:9::{i:x}"), other).await);
    }
    assert_eq!(rotated.last(), Some(&429), "addresses of one /64 share a count: {rotated:?}");
    assert_eq!(ask_from(&app, "2001:db8:9:a::1", other).await, 200, "another /64 is another client");

    // Only lockouts of enough distinct clients lock the phone for everyone;
    // merely asking for codes from many clients does not.
    let third = "13800138022";
    for i in 1..=auth.phone_lock_clients {
        assert_eq!(ask_from(&app, &format!("198.51.100.{i}"), third).await, 200);
    }
    assert_eq!(ask_from(&app, owner, third).await, 200, "five clients asking is no evidence");
    for i in 1..=auth.phone_lock_clients {
        let client = format!("198.51.100.{i}");
        let mut last = 200;
        for _ in 0..auth.code_requests_per_phone_client {
            last = ask_from(&app, &client, third).await;
        }
        assert_eq!(last, 429, "{client} asked too often and is locked out of this phone");
        if i + 1 < auth.phone_lock_clients {
            assert_eq!(ask_from(&app, owner, third).await, 200, "the owner is not locked out by {i} clients");
        }
    }
    let (status, body) = login_from(&app, owner, third, "000000").await;
    assert_eq!((status, body["code"].as_str()), (429, Some("login_locked")), "{body}");
    app.shutdown().await;
}

/// Asks for a code for `phone` from `client`; answers the status.
async fn ask_from(app: &TestApp, client: &str, phone: &str) -> u16 {
    let r = app
        .http
        .post(app.url("/auth/code"))
        .header("x-forwarded-for", client)
        .json(&json!({ "phone": phone }))
        .send()
        .await
        .unwrap();
    r.status().as_u16()
}

async fn code_from(app: &TestApp, client: &str, phone: &str) -> String {
    assert_eq!(ask_from(app, client, phone).await, 200, "{client} asked for a code");
    app.kv.conn().get(app.kv.keys.login_code(phone)).await.unwrap()
}

async fn login_from(app: &TestApp, client: &str, phone: &str, code: &str) -> (u16, Value) {
    let r = app
        .http
        .post(app.url("/auth/login"))
        .header("x-forwarded-for", client)
        .json(&json!({ "phone": phone, "code": code }))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
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
    let login_keys: Vec<&String> =
        keys.iter().filter(|k| k.contains("auth:") && !k.contains("auth:session:")).collect();
    assert!(login_keys.is_empty(), "a code or a strike was stored: {login_keys:?}");
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
    assert!(guesses <= limits.wrong_codes_per_phone_client + 1, "{guesses} guesses were judged");
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
        s.auth.code_requests_per_client = 6;
        s.auth.wrong_codes_per_client = 3;
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
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = Duration::from_millis(600_000))
            .await;
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
        // The documented bound (docs/GUARANTEES.md): as soon as the message arrives.
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
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = Duration::from_millis(600_000))
            .await;
    let second = app.second_instance().await;
    let (_, token) = app.login("13800000078").await;
    let admin_only = "/admin/reconcile/1";
    for base in [&app.base, &second.base] {
        assert_eq!(app.get_at(base, admin_only, Some(&token)).await.0, 403);
    }
    let auth = app.state.auth.clone();
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

/// Revoking an admin reaches a session however old: one logged in days ago
/// and kept alive by use (its expiry slid past the login's token TTL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_an_admin_reaches_a_session_slid_far_past_its_login() {
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = Duration::from_millis(1)).await;
    let auth = app.state.auth.clone();
    let phone = cityhub_core::auth::Phone::parse("13800000079").unwrap();
    let (_, token) = app.login(phone.as_str()).await;
    auth.set_role(&phone, Role::Admin).await.unwrap();
    let admin_only = "/admin/reconcile/1";
    assert_eq!(app.get_at(&app.base, admin_only, Some(&token)).await.0, 404);
    // Days of use: logged in three days ago, its expiry slid to an hour from now.
    sqlx::query(
        "UPDATE sessions SET created_at = NOW(3) - INTERVAL 3 DAY, expires_at = NOW(3) + INTERVAL 1 HOUR \
         WHERE token_hash = ?",
    )
    .bind(cityhub_core::auth::token_hash(&token))
    .execute(&app.db)
    .await
    .unwrap();
    auth.set_role(&phone, Role::Shopper).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(app.get_at(&app.base, admin_only, Some(&token)).await.0, 403, "the old session kept its admin role");
    app.shutdown().await;
}

/// A login that read the user's role just before a revoke and stores its
/// session just after (the race of a login with a role change) does not
/// keep the old role: not in its answer, not in Redis, not on any read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_racing_a_revoke_cannot_keep_the_old_role() {
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = Duration::from_millis(1)).await;
    let auth = app.state.auth.clone();
    let phone = cityhub_core::auth::Phone::parse("13800000080").unwrap();
    auth.register(&phone).await.unwrap();
    auth.set_role(&phone, Role::Admin).await.unwrap();
    // The login reads the role ...
    let read = auth.register(&phone).await.unwrap();
    assert_eq!(read.role, Role::Admin);
    // ... the admin is revoked (no session of the login exists yet) ...
    auth.set_role(&phone, Role::Shopper).await.unwrap();
    // ... and the login stores its session with what it read.
    let issued = auth.issue(read).await.unwrap();
    assert_eq!(issued.session.role, Role::Shopper, "the login answered the old role");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(auth.authenticate(&issued.token).await.unwrap().map(|s| s.role), Some(Role::Shopper));
    assert_eq!(app.get_at(&app.base, "/admin/reconcile/1", Some(&issued.token)).await.0, 403);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_outlive_redis_losing_them_and_a_stale_copy_never_revives_a_logged_out_one() {
    let mut redis = PrivateRedis::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.redis.url = Secret::new(url);
        s.redis.cluster_nodes.clear();
        s.auth.session_cache_ms = Duration::from_millis(1);
    })
    .await;
    let (_, gone) = app.login("13800000081").await;
    let (user, kept) = app.login("13800000082").await;
    redis.snapshot().await;
    let r = app.http.post(app.url("/auth/logout")).bearer_auth(&gone).send().await.unwrap();
    assert_eq!(r.status(), 204);

    // Redis comes back from before the logout, the ended session's copy with it.
    redis.restart_from_snapshot().await;
    let me = || async { app.get_at(&app.base, "/users/me", Some(&kept)).await };
    let back = eventually(Duration::from_secs(10), || async { me().await.0 == 200 }).await;
    assert!(back, "a live session was lost with Redis: {:?}", me().await);
    assert_eq!(me().await.1["user_id"], user.to_string());
    assert_eq!(app.get_at(&app.base, "/users/me", Some(&gone)).await.0, 401, "a logged-out session came back");

    // Redis loses everything: nobody is logged out.
    redis.flush_all().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(me().await.0, 200, "a live session was lost with Redis's data");
    assert_eq!(app.get_at(&app.base, "/users/me", Some(&gone)).await.0, 401);
    app.shutdown().await;
}
