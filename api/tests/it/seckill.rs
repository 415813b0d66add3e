//! The seckill path end to end: Redis decides, RocketMQ carries, MySQL stores.

use std::collections::HashSet;
use std::time::Duration;

use futures::future::join_all;

use crate::app::{eventually, Options, TestApp};

const DRAIN: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stampede_of_200_users_on_50_units_sells_exactly_50_and_everything_agrees() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(50).await;
    let users = app.users(200).await;

    let answers = join_all(users.iter().map(|(_, token)| app.seckill(token, voucher))).await;

    let accepted: Vec<u64> = answers
        .iter()
        .filter(|(status, _)| *status == 202)
        .map(|(_, body)| body["order_id"].as_str().unwrap().parse().unwrap())
        .collect();
    let sold_out = answers.iter().filter(|(s, b)| *s == 409 && b["code"] == "sold_out").count();
    assert_eq!(accepted.len(), 50, "answers: {answers:?}");
    assert_eq!(sold_out, 150, "every other request is a clean sold-out");

    assert_eq!(app.wait_for_orders(voucher, 50, DRAIN).await, 50);
    let stored: Vec<(u64, u64)> = sqlx::query_as("SELECT id, user_id FROM orders WHERE voucher_id = ?")
        .bind(voucher)
        .fetch_all(&app.db)
        .await
        .unwrap();
    let stored_ids: HashSet<u64> = stored.iter().map(|(id, _)| *id).collect();
    let stored_users: HashSet<u64> = stored.iter().map(|(_, u)| *u).collect();
    assert_eq!(stored_ids, accepted.iter().copied().collect(), "exactly the accepted orders are stored");
    assert_eq!(stored_users.len(), 50, "no user twice");
    assert_eq!(app.db_stock(voucher).await, 0);
    assert_eq!(app.redis_stock(voucher).await, 0);
    let buyers = app.buyers(voucher).await;
    assert_eq!(buyers.keys().copied().collect::<HashSet<_>>(), stored_users, "Redis buyers are the DB buyers");
    assert!(buyers.values().all(|v| v.ends_with(":c")), "every stored order was confirmed: {buyers:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_user_sending_20_requests_at_once_wins_exactly_once() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(10).await;
    let (user, token) = app.users(1).await.pop().unwrap();

    let answers = join_all((0..20).map(|_| app.seckill(&token, voucher))).await;

    assert_eq!(answers.iter().filter(|(s, _)| *s == 202).count(), 1, "{answers:?}");
    assert_eq!(answers.iter().filter(|(s, b)| *s == 409 && b["code"] == "already_bought").count(), 19);
    assert_eq!(app.wait_for_orders(voucher, 1, DRAIN).await, 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.order_count(voucher).await, 1);
    assert_eq!(app.db_stock(voucher).await, 9);
    assert_eq!(app.redis_stock(voucher).await, 9);
    assert_eq!(app.buyers(voucher).await.len(), 1);
    assert!(app.buyers(voucher).await.contains_key(&user));
    app.shutdown().await;
}

#[tokio::test]
async fn when_the_broker_is_unreachable_the_shopper_gets_503_and_nothing_stays_reserved() {
    // Nothing listens on port 1: this app's producer can reach no name server.
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.mq.namesrv_addr = "127.0.0.1:1".into();
        s.mq.send_timeout_ms = 1000;
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (_, token) = app.users(1).await.pop().unwrap();

    let (status, body) = app.seckill(&token, voucher).await;

    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "order_queue_unavailable");
    assert!(body["message"].as_str().unwrap().len() > 10);
    assert_eq!(app.redis_stock(voucher).await, 5, "stock restored");
    assert!(app.buyers(voucher).await.is_empty(), "buyer removed");
    // The shopper may try again once the broker is back: nothing blocks them.
    let (status, _) = app.seckill(&token, voucher).await;
    assert_eq!(status, 503);
    assert_eq!(app.redis_stock(voucher).await, 5);
    app.shutdown().await;
}

#[tokio::test]
async fn seckill_answers_each_rejection_with_its_own_status_and_code() {
    let app = TestApp::spawn_without_worker().await;
    let (_, token) = app.users(1).await.pop().unwrap();
    let later = app.voucher(5, 3_600_000, 7_200_000).await;
    let brief = app.voucher(5, -1000, 1500).await;

    assert_eq!(
        app.seckill(&token, 999_999).await,
        (404, serde_json::json!({"code": "voucher_not_found", "message": "no such seckill voucher"}))
    );
    let (status, body) = app.seckill(&token, later).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("sale_not_started")));
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let (status, body) = app.seckill(&token, brief).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("sale_ended")));
    for bad in ["abc", "0", "-3", "1.5", "99999999999999999999999"] {
        let (status, body) = app.seckill(&token, bad).await;
        assert_eq!((status, body["code"].as_str()), (400, Some("invalid_path")), "{bad}");
    }
    let r = app.http.post(app.url(&format!("/vouchers/{later}/seckill"))).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["code"], "unauthorized");
    let (status, _) = app.seckill("not-a-token", later).await;
    assert_eq!(status, 401);
    // None of the rejections touched stock or buyers.
    assert_eq!(app.redis_stock(later).await, 5);
    assert_eq!(app.redis_stock(brief).await, 5);
    assert!(app.buyers(later).await.is_empty() && app.buyers(brief).await.is_empty());
    app.shutdown().await;
}

#[tokio::test]
async fn a_sold_out_answer_from_memory_lapses_so_released_stock_sells_again() {
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(1).await;
    let users = app.users(2).await;
    assert_eq!(app.seckill(&users[0].1, voucher).await.0, 202);
    assert_eq!(app.seckill(&users[1].1, voucher).await.1["code"], "sold_out");

    // A unit comes back (as when an unpaid order is closed).
    let _: () = redis::AsyncCommands::hincr(&mut app.kv.conn(), app.kv.keys.seckill_voucher(voucher), "stock", 1)
        .await
        .unwrap();
    let sold_out_for = Duration::from_millis(app.env.settings.seckill.sold_out_cache_ms);
    tokio::time::sleep(sold_out_for + Duration::from_millis(100)).await;

    assert_eq!(app.seckill(&users[1].1, voucher).await.0, 202, "the released unit sells once the memory lapses");
    assert_eq!(app.redis_stock(voucher).await, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn a_shopper_who_hangs_up_mid_request_leaves_no_stranded_reservation() {
    // A name server that accepts connections and never answers: the publish
    // fails only after its 4 s timeout. The shopper gives up after 1 s, which
    // drops the request on the server while the reservation is held.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let namesrv = silent.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            held.push(conn);
        }
    });
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.mq.namesrv_addr = namesrv;
        s.mq.send_timeout_ms = 4000;
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (_, token) = app.users(1).await.pop().unwrap();
    let impatient = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();

    let sent = impatient.post(app.url(&format!("/vouchers/{voucher}/seckill"))).bearer_auth(&token).send().await;
    assert!(sent.is_err_and(|e| e.is_timeout()), "the shopper hung up");
    assert_eq!(app.redis_stock(voucher).await, 4, "the unit is reserved while the publish is pending");

    let released = || async { app.redis_stock(voucher).await == 5 && app.buyers(voucher).await.is_empty() };
    assert!(eventually(Duration::from_secs(15), released).await, "the reservation was never released");
    app.shutdown().await;
}
