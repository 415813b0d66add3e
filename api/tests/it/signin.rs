//! Daily sign-in on the real Redis: signing twice a day changes nothing, a
//! month with gaps reads back its days and streak, and bad months are
//! refused without a write.

use chrono::{Datelike, NaiveDate, Utc};
use cityhub_core::kv::CityKeys;
use cityhub_core::signin::Month;
use serde_json::{json, Value};

use crate::app::TestApp;

async fn sign(app: &TestApp, token: &str) -> (u16, Value) {
    let r = app.http.post(app.url("/users/me/sign")).bearer_auth(token).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn signing_twice_a_day_changes_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let (user, token) = app.users(1).await.remove(0);
    let today = Utc::now().date_naive();
    let (status, first) = sign(&app, &token).await;
    assert_eq!((status, first["changed"].as_bool()), (200, Some(true)), "{first}");
    let (status, again) = sign(&app, &token).await;
    assert_eq!((status, again["changed"].as_bool()), (200, Some(false)), "{again}");
    assert_eq!(again["date"], today.to_string());

    let key = app.kv.keys.sign_month(user, &Month::of(today).to_string());
    let bits: u32 = redis::cmd("BITCOUNT").arg(&key).query_async(&mut app.kv.conn()).await.unwrap();
    assert_eq!(bits, 1, "one bit for the day");
    let (status, month) = app.get_at(&app.base, "/users/me/sign", Some(&token)).await;
    assert_eq!(status, 200, "{month}");
    assert_eq!(month["days"], json!([today.day()]));
    assert_eq!(month["streak"], 1);
    assert_eq!(month["month"], Month::of(today).to_string());
    app.shutdown().await;
}

#[tokio::test]
async fn a_month_with_gaps_reads_back_its_days_and_streak() {
    let app = TestApp::spawn_without_worker().await;
    let (user, token) = app.users(1).await.remove(0);
    let november = |day| NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
    for day in [1, 2, 3, 5, 6, 8, 28, 29, 30] {
        assert!(app.state.signins.sign(user, november(day)).await.unwrap());
    }
    let (status, month) = app.get_at(&app.base, "/users/me/sign?month=2026-11", Some(&token)).await;
    assert_eq!(status, 200, "{month}");
    assert_eq!(month["days"], json!([1, 2, 3, 5, 6, 8, 28, 29, 30]));
    assert_eq!(month["streak"], 3, "the 28th to the 30th, the month's last day");

    // This month: yesterday and the day before signed, today not yet.
    let today = Utc::now().date_naive();
    if today.day() >= 3 {
        for back in [1, 2] {
            app.state.signins.sign(user, today - chrono::Days::new(back)).await.unwrap();
        }
        let (_, month) = app.get_at(&app.base, "/users/me/sign", Some(&token)).await;
        assert_eq!(month["streak"], 2, "today unsigned does not break the streak: {month}");
        sign(&app, &token).await;
        let (_, month) = app.get_at(&app.base, "/users/me/sign", Some(&token)).await;
        assert_eq!(month["streak"], 3, "{month}");
    }
    app.shutdown().await;
}

#[tokio::test]
async fn bad_months_and_missing_sessions_are_refused_and_write_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let (user, token) = app.users(1).await.remove(0);
    for (query, want) in [
        ("month=2026-13", 422),
        ("month=1999-12", 422),
        ("month=2026-1", 422),
        ("month=abc", 422),
        ("month=9999-12", 422),
        ("day=2026-11", 400),
    ] {
        let (status, body) = app.get_at(&app.base, &format!("/users/me/sign?{query}"), Some(&token)).await;
        assert_eq!(status, want, "{query}: {body}");
        assert!(body["code"].is_string(), "{query}: {body}");
    }
    assert_eq!(sign(&app, "not-a-token").await.0, 401);
    assert_eq!(app.get_at(&app.base, "/users/me/sign", None).await.0, 401);
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(app.kv.keys.sign_month(user, "*")).query_async(&mut app.kv.conn()).await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
    app.shutdown().await;
}
