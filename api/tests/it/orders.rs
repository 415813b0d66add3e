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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_order_list_pages_the_callers_stored_orders_newest_first() {
    let app = TestApp::spawn().await;
    let users = app.users(2).await;
    let (me, other) = (&users[0].1, &users[1].1);
    let mut mine = Vec::new();
    for _ in 0..5 {
        let voucher = app.on_sale(5).await;
        let (_, body) = app.seckill(me, voucher).await;
        mine.push(body["order_id"].as_str().unwrap().to_owned());
        app.seckill(other, voucher).await;
        assert_eq!(app.wait_for_orders(voucher, 2, Duration::from_secs(60)).await, 2);
    }
    mine.reverse();

    let page = |cursor: Option<String>| {
        let query = cursor.map_or("?limit=2".to_owned(), |c| format!("?limit=2&cursor={c}"));
        let req = app.http.get(app.url(&format!("/orders{query}"))).bearer_auth(me);
        async move {
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), 200);
            r.json::<serde_json::Value>().await.unwrap()
        }
    };
    let (mut seen, mut cursor) = (Vec::new(), None);
    for expected_len in [2, 2, 1] {
        let body = page(cursor).await;
        let orders = body["orders"].as_array().unwrap();
        assert_eq!(orders.len(), expected_len, "{body}");
        assert!(orders.iter().all(|o| o["status"] == "unpaid"));
        seen.extend(orders.iter().map(|o| o["order_id"].as_str().unwrap().to_owned()));
        cursor = body["next_cursor"].as_str().map(str::to_owned);
    }
    assert_eq!(cursor, None, "the last page says so");
    assert_eq!(seen, mine, "exactly the caller's orders, newest first");

    for (query, status, code) in [
        ("?cursor=abc", 400, "invalid_query"),
        ("?cursor=0", 400, "invalid_query"),
        ("?limit=0", 422, "validation_failed"),
        ("?limit=101", 422, "validation_failed"),
        ("?x=1", 400, "invalid_query"),
    ] {
        let r = app.http.get(app.url(&format!("/orders{query}"))).bearer_auth(me).send().await.unwrap();
        assert_eq!(r.status(), status, "{query}");
        assert_eq!(r.json::<serde_json::Value>().await.unwrap()["code"], code, "{query}");
    }
    assert_eq!(app.http.get(app.url("/orders")).send().await.unwrap().status(), 401);
    app.shutdown().await;
}
