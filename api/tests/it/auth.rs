//! Login by phone code; bearer tokens; input validation.

use std::time::Duration;

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
    assert_eq!(me, json!({ "user_id": user.to_string() }));

    // Logging in again with the same phone is the same user.
    let (again, other_token) = app.login("13800138000").await;
    assert_eq!(again, user);
    assert_ne!(other_token, token);
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 1);
    app.shutdown().await;
}

#[tokio::test]
async fn a_challenge_takes_a_few_wrong_guesses_then_is_spent_and_another_still_works() {
    let app = TestApp::spawn_without_worker().await;
    let tries = app.env.settings.auth.code_tries;
    assert!(tries >= 2, "a challenge allows more than one guess");
    for (phone, wrong_tries) in [("13800138001", tries - 1), ("13800138004", tries)] {
        let (challenge, code) = app.ask_code(phone).await;
        for left in (tries - wrong_tries..tries).rev() {
            let (status, body) = try_code(&app, phone, wrong(&code), &challenge).await;
            assert_eq!((status, body["code"].as_str()), (422, Some("invalid_code")), "{body}");
            assert!(body["message"].as_str().unwrap().contains(&format!("{left} guesses left")), "{body}");
        }
        let (status, body) = try_code(&app, phone, &code, &challenge).await;
        if wrong_tries < tries {
            assert_eq!(status, 200, "{wrong_tries} wrong guesses first: {body}");
        } else {
            assert_eq!((status, body["code"].as_str()), (422, Some("challenge_gone")), "{body}");
            // The code itself is not spent: a challenge of its own takes it.
            let (again, same) = app.ask_code(phone).await;
            assert_eq!(same, code, "the code sent lately stays the phone's code");
            assert_eq!(try_code(&app, phone, &code, &again).await.0, 200);
        }
    }
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&app.db).await.unwrap();
    assert_eq!(users, 2);
    app.shutdown().await;
}

/// The lockout attack of the hostile-clients review, with every limit on:
/// a stranger who knows a victim's phone sends malformed code requests and
/// logins without a code from one address, then asks for codes and guesses
/// from many addresses, past the phone's day of free wrong guesses. The
/// owner, on another network, still logs in with the code on their phone
/// (paying one proof of work once guessing at the phone is past its day).
#[tokio::test]
async fn no_stranger_from_any_number_of_addresses_can_spend_or_lock_the_owners_login() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| guarded(s, 60)).await;
    let victim = "13800138020";
    let (stranger, owner) = ("203.0.113.7", "2001:db8:1:2::5");
    for _ in 0..3 {
        let r = post_from(&app, stranger, "/auth/code", json!({ "phone": victim, "x": 1 })).await;
        assert_eq!(r.0, 422, "{}", r.1);
    }
    for _ in 0..12 {
        let r = post_from(&app, stranger, "/auth/login", json!({ "phone": victim })).await;
        assert_eq!(r.0, 422, "{}", r.1);
    }
    let (status, body) = post_from(&app, owner, "/auth/code", json!({ "phone": victim })).await;
    assert_eq!(status, 200, "malformed requests spent the owner's budget: {body}");
    let (challenge, code) = (body["challenge"].as_str().unwrap().to_owned(), app.phone_code(victim).await);
    assert_eq!(login_from(&app, owner, victim, &code, &challenge).await.0, 200, "the owner logs in");

    // Twenty strangers, each asking for a code and guessing until its
    // challenge is spent: 100 wrong guesses, past the phone's 60 free ones.
    let tries = app.env.settings.auth.code_tries;
    let (mut wrong_guesses, mut refused) = (0, 0);
    for i in 1..=20 {
        let client = format!("198.51.100.{i}");
        let (status, body) = post_from(&app, &client, "/auth/code", json!({ "phone": victim })).await;
        assert_eq!(status, 200, "{client}: {body}");
        let challenge = body["challenge"].as_str().unwrap();
        for _ in 0..tries {
            match login_from(&app, &client, victim, "000000", challenge).await {
                (422, b) if b["code"] == "invalid_code" => wrong_guesses += 1,
                (403, b) if b["code"] == "proof_required" => refused += 1,
                other => panic!("{client}: {other:?}"),
            }
        }
    }
    assert_eq!(wrong_guesses, 60, "free guesses at the phone are bounded by its day");
    assert_eq!(refused, 40, "past them, a guess without a proof is not even judged");
    // One code for the owner, one more after the owner's login used it:
    // twenty strangers asking within the minute sent nothing.
    assert_eq!(cityhub_testkit::metric(cityhub_core::metrics::LOGIN_CODES_SENT, &[]), 2.0);

    let (status, body) = post_from(&app, owner, "/auth/code", json!({ "phone": victim })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["proof_bits"], 8, "the challenge says a proof is needed: {body}");
    let challenge = body["challenge"].as_str().unwrap();
    let code = app.phone_code(victim).await;
    let (status, body) = login_from(&app, owner, victim, &code, challenge).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("proof_required")), "{body}");
    let proof = cityhub_core::auth::guard::solve(challenge, 8);
    let r = post_from(
        &app,
        owner,
        "/auth/login",
        json!({ "phone": victim, "code": code, "challenge": challenge, "proof": proof }),
    )
    .await;
    assert_eq!(r.0, 200, "the owner logs in with the code on their phone: {}", r.1);
    app.shutdown().await;
}

/// A login griefer past a phone's day of free guesses: once Redis has
/// said the phone needs a proof, guesses without one from any number of
/// addresses are refused in process (no Redis command, no MySQL), while the
/// owner, paying the proof, still logs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guesses_without_a_proof_at_a_phone_that_needs_one_cost_no_redis_command() {
    let redis = PrivateRedis::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.redis.url = Secret::new(url);
        s.redis.cluster_nodes.clear();
        guarded(s, 2);
    })
    .await;
    let victim = "13800138090";
    let (status, body) = post_from(&app, "198.51.100.1", "/auth/code", json!({ "phone": victim })).await;
    assert_eq!(status, 200, "{body}");
    let stranger = body["challenge"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        assert_eq!(login_from(&app, "198.51.100.1", victim, "000000", &stranger).await.0, 422);
    }
    // The first refusal comes from the phone's script, and is remembered.
    let (status, body) = login_from(&app, "198.51.100.2", victim, "000000", &stranger).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("proof_required")), "{body}");

    let mut monitor = redis.monitor().await;
    monitor.take().await;
    for i in 0..50 {
        let (status, body) = login_from(&app, &format!("203.0.113.{i}"), victim, "000000", &stranger).await;
        assert_eq!((status, body["code"].as_str()), (403, Some("proof_required")), "{body}");
    }
    let commands = monitor.take().await;
    assert!(commands.is_empty(), "50 proofless guesses cost Redis commands: {commands:#?}");

    let (status, body) = post_from(&app, "2001:db8:9::1", "/auth/code", json!({ "phone": victim })).await;
    assert_eq!((status, body["proof_bits"].as_u64()), (200, Some(8)), "{body}");
    let challenge = body["challenge"].as_str().unwrap();
    let code = app.phone_code(victim).await;
    let proof = cityhub_core::auth::guard::solve(challenge, 8);
    let (status, body) = post_from(
        &app,
        "2001:db8:9::1",
        "/auth/login",
        json!({ "phone": victim, "code": code, "challenge": challenge, "proof": proof }),
    )
    .await;
    assert_eq!(status, 200, "the owner logs in with a proof: {body}");
    app.shutdown().await;
}

/// Codes go to a phone at most once per resend interval and a few times a
/// day, however many ask; the day's last code stays valid until the day
/// renews, so a phone whose codes strangers spent still has one its owner
/// received.
#[tokio::test]
async fn codes_sent_to_a_phone_are_paced_and_bounded_per_day_and_the_last_one_stays_valid() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.auth.code_resend_secs = Duration::from_secs(1);
        s.auth.codes_per_phone_day = 3;
    })
    .await;
    let phone = "13800138030";
    let (mut sent, mut asked) = (0, 0);
    // Ask until three codes went out (one a second at most).
    while sent < 3 {
        let r = request_code(&app, phone).await;
        assert_eq!(r.status(), 200);
        asked += 1;
        if r.json::<Value>().await.unwrap()["sent"] == true {
            sent += 1;
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(asked < 500, "three codes were not sent in {asked} requests");
    }
    assert!(asked > 3, "the resend interval held some requests back");
    for _ in 0..20 {
        let r = request_code(&app, phone).await;
        assert_eq!(r.json::<Value>().await.unwrap()["sent"], false, "past the day's budget nothing is sent");
    }
    assert_eq!(cityhub_testkit::metric(cityhub_core::metrics::LOGIN_CODES_SENT, &[]), 3.0);
    let ttl: i64 = app.kv.conn().pttl(app.kv.keys.login_code(phone)).await.unwrap();
    assert!(ttl > app.env.settings.auth.code_ttl_secs.as_millis() as i64, "the last code lives until the day renews");
    app.login(phone).await;
    app.shutdown().await;
}

/// Every limit on, clients named by `X-Forwarded-For` from 127.0.0.1,
/// `wrong_per_day` free wrong guesses a phone, then proofs of 8 bits.
fn guarded(s: &mut cityhub_core::config::Settings, wrong_per_day: u32) {
    s.limits.enabled = true;
    s.http.trusted_proxies = "127.0.0.1".into();
    s.auth.wrong_codes_per_phone_day = wrong_per_day;
    s.auth.proof_bits = 8;
}

async fn post_from(app: &TestApp, client: &str, path: &str, body: Value) -> (u16, Value) {
    let r = app.http.post(app.url(path)).header("x-forwarded-for", client).json(&body).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn login_from(app: &TestApp, client: &str, phone: &str, code: &str, challenge: &str) -> (u16, Value) {
    post_from(app, client, "/auth/login", json!({ "phone": phone, "code": code, "challenge": challenge })).await
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
        ("/auth/login", r#"{"phone": "13800138000", "code": "12"}"#, 422, "invalid_body"),
        ("/auth/login", r#"{"phone": "13800138000", "code": "123456"}"#, 422, "invalid_body"),
        (
            "/auth/login",
            r#"{"phone": "13800138000", "code": "12", "challenge": "00000000000000000000000000000000"}"#,
            422,
            "validation_failed",
        ),
        ("/auth/login", r#"{"phone": "13800138000", "code": "123456", "challenge": "XYZ"}"#, 422, "validation_failed"),
        (
            "/auth/login",
            r#"{"phone": "13800138000", "code": "123456", "challenge": "00000000000000000000000000000000", "proof": "a b"}"#,
            422,
            "validation_failed",
        ),
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
    assert!(!keys.iter().any(|k| k.contains("auth:session:")), "a session was stored: {keys:?}");
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

async fn try_code(app: &TestApp, phone: &str, code: &str, challenge: &str) -> (u16, Value) {
    let body = json!({ "phone": phone, "code": code, "challenge": challenge });
    let r = app.http.post(app.url("/auth/login")).json(&body).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
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
        let (challenge, code) = app.ask_code(&phone).await;
        statuses.push(try_code(&app, &phone, wrong(&code), &challenge).await.0);
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
        let (_, code) = app.ask_code(phone).await;
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

/// No session opens an admin route, whatever its phone (the CLI's old
/// operator phone included) and on every instance: the admin routes take
/// operator keys only, and no role exists to grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_shoppers_session_opens_an_admin_route_whatever_its_phone() {
    let app = TestApp::spawn_without_worker().await;
    let second = app.second_instance().await;
    for phone in ["19999999999", "13800138000", "13800000078"] {
        let (_, token) = app.login(phone).await;
        for path in ["/admin/sales", "/admin/overview", "/admin/parked", "/admin/orders?phone=13800138000"] {
            for base in [&app.base, &second.base] {
                let (status, body) = app.get_at(base, path, Some(&token)).await;
                assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")), "{phone} {path}: {body}");
            }
        }
        let (status, me) = app.get_at(&app.base, "/users/me", Some(&token)).await;
        assert_eq!(status, 200);
        assert!(me.get("role").is_none(), "a session carries no role: {me}");
    }
    second.shutdown().await;
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

/// A token sprayer: 10,000 distinct made-up tokens from as many addresses
/// cost no MySQL query (their MAC is checked in process, before any
/// lookup); one address sending bad tokens is refused past its second's
/// budget; a real shopper is served all along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_made_up_tokens_cost_no_mysql_query_and_a_sprayer_is_limited() {
    use futures::StreamExt;
    logs::init_with("warn,cityhub=info,sqlx::query=trace");
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.http.trusted_proxies = "127.0.0.1".into();
    })
    .await;
    let (user, real) = app.login("13800138050").await;
    let me = |token: String, client: String| {
        let app = &app;
        async move {
            let r = app.http.get(app.url("/users/me")).bearer_auth(token).header("x-forwarded-for", client);
            r.send().await.unwrap().status().as_u16()
        }
    };
    let before = logs::mysql_statements();
    let statuses: Vec<u16> = futures::stream::iter(0..10_000u32)
        .map(|i| {
            // Well-formed (80 hex digits) and all distinct: only the MAC is wrong.
            let token = format!("{:080x}", u128::from(i) * 0x9e37_79b9_7f4a_7c15);
            me(token, format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255))
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let spent = logs::mysql_statements() - before;
    assert!(statuses.iter().all(|s| *s == 401), "{:?}", statuses.iter().find(|s| **s != 401));
    assert!(spent <= 10, "10,000 made-up tokens cost {spent} MySQL statements");
    assert!(before > 0, "the statement count is captured");

    // One address: refused past its budget, before any lookup.
    let per_sec = app.env.settings.limits.unauthorized_per_sec as usize;
    let mut unauthorized = 0;
    let limited = loop {
        match me("0".repeat(80), "203.0.113.9".into()).await {
            401 => unauthorized += 1,
            429 => break true,
            other => panic!("{other}"),
        }
        if unauthorized > 20 * per_sec {
            break false;
        }
    };
    assert!(limited && unauthorized >= per_sec, "{unauthorized} bad tokens then no 429");
    assert_eq!(me(real.clone(), "198.51.100.3".into()).await, 200, "another client is served");
    let r = app.http.get(app.url("/users/me")).bearer_auth(&real).send().await.unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["user_id"], user.to_string());
    app.shutdown().await;
}

/// Operator keys open the admin routes; a made-up, revoked or expired key
/// does not, and no phone login obtains one.
#[tokio::test]
async fn operator_keys_open_admin_routes_until_revoked_or_expired() {
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.auth.session_cache_ms = Duration::from_millis(1)).await;
    let auth = &app.state.auth;
    let admin_only = "/admin/sales";
    let key = auth.create_operator_key("console", Duration::from_secs(3600)).await.unwrap();
    assert!(key.key.starts_with("op_"));
    assert_eq!(app.get_at(&app.base, admin_only, Some(&key.key)).await.0, 200);
    let made_up = format!("op_{}", "0".repeat(80));
    assert_eq!(app.get_at(&app.base, admin_only, Some(&made_up)).await.0, 401);
    let (_, shopper) = app.login("13800138060").await;
    assert_eq!(app.get_at(&app.base, admin_only, Some(&shopper)).await.0, 403);
    assert!(auth.revoke_operator_key(key.id).await.unwrap());
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(app.get_at(&app.base, admin_only, Some(&key.key)).await.0, 401, "a revoked key");
    let short = auth.create_operator_key("short", Duration::from_millis(300)).await.unwrap();
    assert_eq!(app.get_at(&app.base, admin_only, Some(&short.key)).await.0, 200);
    let expired = eventually(Duration::from_secs(10), || async {
        app.get_at(&app.base, admin_only, Some(&short.key)).await.0 == 401
    })
    .await;
    assert!(expired, "an expired key still opens the admin routes");
    let listed = auth.operator_keys().await.unwrap();
    assert!(listed.iter().any(|k| k.id == key.id && k.revoked), "{listed:?}");
    let hashes: Vec<String> =
        sqlx::query_scalar("SELECT key_hash FROM operator_keys").fetch_all(&app.db).await.unwrap();
    assert!(hashes.iter().all(|h| h.len() == 64 && *h != key.key), "only hashes are stored");
    app.shutdown().await;
}
