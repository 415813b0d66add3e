//! The order worker over RocketMQ: idempotent on redelivery, parks what it
//! cannot use, never writes an order whose reservation was released.

use std::sync::atomic::Ordering;
use std::time::Duration;

use cityhub_core::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_core::orders::OrderMessage;
use cityhub_core::testkit::mq_client;

use crate::app::{eventually, TestApp};

async fn publisher(app: &TestApp) -> BatchPublisher {
    let s = &app.env.settings.mq;
    let producer =
        cityhub_core::mq::start_producer(&mq_client(), s, &format!("{}_replay", s.producer_group)).await.unwrap();
    BatchPublisher::spawn(producer, s.order_topic.clone(), BatchConfig::from(s))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_order_message_twice_stores_one_row_and_decrements_stock_once() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(10).await;
    let (user, token) = app.users(1).await.pop().unwrap();
    let (_, body) = app.seckill(&token, voucher).await;
    let order_id: u64 = body["order_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(app.wait_for_orders(voucher, 1, Duration::from_secs(60)).await, 1);
    let stats = app.worker.as_ref().unwrap().stats();
    let redelivered_before = stats.redelivered.load(Ordering::Relaxed);

    let (pay_amount, created_at): (u64, chrono::DateTime<chrono::Utc>) =
        sqlx::query_as("SELECT pay_amount, created_at FROM orders WHERE id = ?")
            .bind(order_id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    let replay = OrderMessage {
        order_id,
        user_id: user,
        voucher_id: voucher,
        pay_amount,
        created_at_ms: created_at.timestamp_millis() as u64,
        request_id: None,
    };
    let publisher = publisher(&app).await;
    for _ in 0..2 {
        publisher.publish(order_id.to_string(), serde_json::to_vec(&replay).unwrap()).await.unwrap();
    }

    assert!(
        eventually(Duration::from_secs(60), || async {
            stats.redelivered.load(Ordering::Relaxed) >= redelivered_before + 2
        })
        .await,
        "the worker never saw the replayed messages"
    );
    assert_eq!(app.order_count(voucher).await, 1);
    assert_eq!(app.db_stock(voucher).await, 9);
    assert_eq!(stats.stored.load(Ordering::Relaxed), 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_messages_are_parked_and_do_not_block_the_queue() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(10).await;
    let publisher = publisher(&app).await;
    // Unparsable, and a well-formed order that no reservation backs.
    publisher.publish("junk".into(), b"{not json".to_vec()).await.unwrap();
    let forged = OrderMessage {
        order_id: 42,
        user_id: 7,
        voucher_id: voucher,
        pay_amount: 1,
        created_at_ms: 0,
        request_id: None,
    };
    publisher.publish("42".into(), serde_json::to_vec(&forged).unwrap()).await.unwrap();
    // A real order after them still goes through.
    let (_, token) = app.users(1).await.pop().unwrap();
    assert_eq!(app.seckill(&token, voucher).await.0, 202);

    assert_eq!(app.wait_for_orders(voucher, 1, Duration::from_secs(60)).await, 1);
    let parked = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM parked_messages").fetch_one(&app.db).await.unwrap() == 2
    };
    assert!(eventually(Duration::from_secs(60), parked).await);
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT reason FROM parked_messages ORDER BY reason").fetch_all(&app.db).await.unwrap();
    assert!(reasons[0].starts_with("revoked"), "{reasons:?}");
    assert!(reasons[1].starts_with("unparsable"), "{reasons:?}");
    let forged_rows: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE id = 42").fetch_one(&app.db).await.unwrap();
    assert_eq!(forged_rows, 0);
    assert_eq!(app.db_stock(voucher).await, 9);
    app.shutdown().await;
}
