//! `GET /orders/{id}`: queued, then stored; owner only.

use std::time::Duration;

use crate::app::{eventually, TestApp};

#[tokio::test]
async fn an_accepted_order_is_queued_until_the_worker_stores_it() {
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(3).await;
    let (_, token) = app.users(1).await.pop().unwrap();
    let (status, body) = app.seckill(&token, voucher).await;
    assert_eq!(status, 202);
    assert_eq!(body["status"], "queued");
    let order = body["order_id"].as_str().unwrap().to_owned();

    let (status, body) = app.get_order(&token, &order).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "queued");
    assert_eq!(body["voucher_id"], voucher.to_string());
    app.shutdown().await;
}

#[tokio::test]
async fn a_stored_order_shows_its_status_to_its_owner_only() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(3).await;
    let users = app.users(2).await;
    let (_, owner) = &users[0];
    let (_, other) = &users[1];
    let (_, body) = app.seckill(owner, voucher).await;
    let order = body["order_id"].as_str().unwrap().to_owned();

    assert!(
        eventually(Duration::from_secs(60), || async { app.get_order(owner, &order).await.1["status"] == "unpaid" })
            .await,
        "order never reached MySQL"
    );
    let (_, body) = app.get_order(owner, &order).await;
    assert_eq!(body["pay_amount"], 5000);
    assert_eq!(body["order_id"], order);

    let (status, body) = app.get_order(other, &order).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("order_not_found")));
    let (status, _) = app.get_order(owner, 123_456_789).await;
    assert_eq!(status, 404);
    let (status, body) = app.get_order(owner, "12ab").await;
    assert_eq!((status, body["code"].as_str()), (400, Some("invalid_path")));
    let r = app.http.get(app.url(&format!("/orders/{order}"))).send().await.unwrap();
    assert_eq!(r.status(), 401);
    app.shutdown().await;
}
