//! Login by phone code; bearer tokens; input validation.

use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::TestApp;

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
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&app.db).await.unwrap();
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
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&app.db).await.unwrap();
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
    assert!(keys.iter().all(|k| !k.contains("auth:")), "no code or session was stored: {keys:?}");
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
