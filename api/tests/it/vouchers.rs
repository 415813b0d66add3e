//! Admin creation of seckill vouchers: MySQL and the Redis preload together.

use cityhub_core::kv::CityKeys;
use cityhub_core::{ShopId, VoucherId};
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::TestApp;

fn body(shop: ShopId) -> Value {
    let now = chrono::Utc::now();
    json!({
        "shop_id": shop, "title": "20 off", "pay_value": 8000, "actual_value": 10000, "stock": 7,
        "begin_time": now, "end_time": now + chrono::Duration::hours(1),
    })
}

#[tokio::test]
async fn creating_a_voucher_stores_it_and_preloads_its_stock_and_window() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let req = body(shop);
    let r = app.http.post(app.url("/admin/vouchers")).bearer_auth(app.admin_token()).json(&req).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let id: VoucherId = created["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(created["stock"], 7);

    assert_eq!(app.db_stock(id).await, 7);
    let state: std::collections::HashMap<String, i64> =
        app.kv.conn().hgetall(app.kv.keys.seckill_voucher(id)).await.unwrap();
    assert_eq!(state["stock"], 7);
    assert_eq!(state["pay_value"], 8000);
    let begin = chrono::DateTime::parse_from_rfc3339(req["begin_time"].as_str().unwrap()).unwrap();
    assert_eq!(state["begin_ms"], begin.timestamp_millis());
    let generation = app.kv.generation.current().await.unwrap();
    assert_eq!(state["gen"].to_string(), *generation, "written under Redis's current generation");
    app.shutdown().await;
}

#[tokio::test]
async fn only_admins_create_vouchers() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let (_, shopper) = app.users(1).await.pop().unwrap();
    let url = app.url("/admin/vouchers");
    let r = app.http.post(&url).json(&body(shop)).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = app.http.post(&url).bearer_auth(&shopper).json(&body(shop)).send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "forbidden");
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    assert_eq!(count, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn invalid_vouchers_are_refused_and_nothing_is_written() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let now = chrono::Utc::now();
    let mut cases = Vec::new();
    for (field, value) in [
        ("stock", json!(0)),
        ("stock", json!(-1)),
        ("title", json!("")),
        ("pay_value", json!(20000)),
        ("end_time", json!(now - chrono::Duration::hours(1))),
        ("begin_time", json!("yesterday")),
        ("shop_id", json!(0)),
    ] {
        let mut b = body(shop);
        b[field] = value;
        cases.push((b, 422));
    }
    let mut unknown_shop = body(shop);
    unknown_shop["shop_id"] = json!(shop.get() + 1000);
    cases.push((unknown_shop, 422));
    for (b, status) in cases {
        let r = app.http.post(app.url("/admin/vouchers")).bearer_auth(app.admin_token()).json(&b).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{b}");
        let err: Value = r.json().await.unwrap();
        assert!(err["code"].is_string() && err["message"].is_string(), "{err}");
    }
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    assert_eq!(count, 0);
    let keys: Vec<String> = app.kv.conn().keys(format!("{}seckill:*", app.kv.keys.prefix())).await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
    app.shutdown().await;
}
