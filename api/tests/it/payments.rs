//! Payment: the owner starts it, the provider's signed callback applies it
//! once; a bad signature changes nothing; a payment for an order the worker
//! has not stored yet stores it as paid.

use std::time::Duration;

use cityhub_core::OrderId;
use serde_json::json;

use crate::app::{eventually, Options, TestApp};

/// Provider callbacks go nowhere, so each test sends them itself.
fn silent_provider(s: &mut cityhub_core::config::Settings) {
    s.payments.callback_url = "http://127.0.0.1:9/callback".into();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_delivered_twice_pays_once_and_a_bad_signature_changes_nothing() {
    let app = TestApp::spawn_with(Options { worker: true }, silent_provider).await;
    let voucher = app.on_sale(10).await;
    let users = app.users(2).await;
    let orders = app.stored_orders(voucher, &users).await;
    let (_, token, order) = &orders[0];

    let (status, started) = app.pay(token, *order).await;
    assert_eq!(status, 202, "{started}");
    let txn = started["txn_id"].as_str().unwrap().to_owned();
    assert_eq!(started["amount"], 5000);
    // Someone else's order is not found.
    assert_eq!(app.pay(&orders[1].1, *order).await.0, 404);

    assert_eq!(app.paid_callback(&txn, *order, 5000).await, (200, json!({ "result": "paid" })));
    assert_eq!(app.paid_callback(&txn, *order, 5000).await, (200, json!({ "result": "duplicate" })));
    assert_eq!(app.order_status(*order).await.as_deref(), Some("paid"));
    assert_eq!(app.payments(*order).await, [("paid".to_owned(), 1)]);
    let (_, view) = app.get_order(token, order).await;
    assert_eq!(view["status"], "paid");
    assert_eq!(app.pay(token, *order).await.0, 409, "a paid order cannot be paid again");

    // The other order: a wrong secret, a body changed after signing, no signature.
    let other = orders[1].2;
    let body = json!({ "txn_id": "t-forged", "order_id": other, "amount": 5000, "result": "succeeded" }).to_string();
    let (status, err) = app.callback_signed(body.as_bytes(), b"not-the-secret").await;
    assert_eq!((status, err["code"].as_str()), (401, Some("bad_signature")));
    let secret = app.env.settings.payments.callback_secret.expose().as_bytes().to_vec();
    let sig = cityhub_core::payments::signature::sign(&secret, body.as_bytes());
    let tampered = body.replace("5000", "1");
    let r = app
        .http
        .post(app.url("/payments/callback"))
        .header(cityhub_core::payments::signature::HEADER, sig)
        .body(tampered)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = app.http.post(app.url("/payments/callback")).body(body.clone()).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(app.order_status(other).await.as_deref(), Some("unpaid"));
    assert!(app.payments(other).await.is_empty());
    // Signed but not a callback: 422, nothing recorded.
    assert_eq!(app.callback_signed(b"{\"txn_id\":\"x\"}", &secret).await.0, 422);
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulated_provider_calls_back_and_a_failing_provider_leaves_the_order_unpaid() {
    let app = TestApp::spawn().await;
    let failing = TestApp::spawn_with(Options { worker: true }, |s| s.payments.provider_failure_rate = 1.0).await;
    for (app, expect) in [(&app, "paid"), (&failing, "failed")] {
        let voucher = app.on_sale(5).await;
        let users = app.users(1).await;
        let (_, token, order) = app.stored_orders(voucher, &users).await.remove(0);
        assert_eq!(app.pay(&token, order).await.0, 202);
        let reported = || async { app.payments(order).await.iter().all(|(status, _)| status != "started") };
        assert!(eventually(Duration::from_secs(10), reported).await);
        assert_eq!(app.payments(order).await, [(expect.to_owned(), 1)]);
        let status = if expect == "paid" { "paid" } else { "unpaid" };
        assert_eq!(app.order_status(order).await.as_deref(), Some(status));
    }
    failing.shutdown().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_for_an_order_the_worker_has_not_stored_stores_it_paid_and_the_late_insert_changes_nothing() {
    let mut app = TestApp::spawn_with(Options { worker: false }, silent_provider).await;
    let voucher = app.on_sale(10).await;
    let users = app.users(1).await;
    let (status, body) = app.seckill(&users[0].1, voucher).await;
    assert_eq!(status, 202);
    let order: OrderId = body["order_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(app.get_order(&users[0].1, order).await.1["status"], "queued");

    let (status, started) = app.pay(&users[0].1, order).await;
    assert_eq!(status, 202, "{started}");
    let txn = started["txn_id"].as_str().unwrap();
    assert_eq!(app.paid_callback(txn, order, 5000).await, (200, json!({ "result": "paid" })));
    assert_eq!(app.order_status(order).await.as_deref(), Some("paid"));
    assert_eq!(app.db_stock(voucher).await, 9);

    // The worker now receives the order message: nothing changes.
    app.start_worker().await;
    let seen = || async { app.env.order_messages("redelivered") >= 1 };
    assert!(eventually(Duration::from_secs(30), seen).await, "the worker never saw the order message");
    assert_eq!(app.order_status(order).await.as_deref(), Some("paid"));
    assert_eq!(app.order_count(voucher).await, 1);
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

/// The forged payment of the security review: a shopper who knows the
/// secret's shape signs a callback for their own order at one cent, under a
/// transaction id no payment started. Then the near misses: a started
/// payment's callback at another amount, for another order, and signed too
/// long ago. Each is refused, changes nothing and is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_that_matches_no_started_payment_changes_nothing_and_is_counted() {
    let app = TestApp::spawn_with(Options { worker: true }, silent_provider).await;
    let voucher = app.on_sale(10).await;
    let users = app.users(2).await;
    let orders = app.stored_orders(voucher, &users).await;
    let (_, token, order) = &orders[0];
    let other = orders[1].2;

    let (status, err) = app.paid_callback("x", *order, 1).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("payment_mismatch")), "{err}");
    let txn = app.start_payment(token, *order).await;
    for (txn, order_id, amount) in
        [(txn.as_str(), *order, 1), (txn.as_str(), other, 5000), ("sim-unknown", *order, 5000)]
    {
        let (status, err) = app.paid_callback(txn, order_id, amount).await;
        assert_eq!((status, err["code"].as_str()), (409, Some("payment_mismatch")), "{txn} {order_id} {amount}: {err}");
    }
    let long_ago =
        chrono::Utc::now().timestamp() - app.env.settings.payments.callback_max_age_secs.as_secs() as i64 - 5;
    let (status, err) = app.callback_at(&txn, *order, 5000, long_ago).await;
    assert_eq!((status, err["code"].as_str()), (401, Some("stale_callback")), "{err}");
    for o in [*order, other] {
        assert_eq!(app.order_status(o).await.as_deref(), Some("unpaid"));
    }
    assert_eq!(app.payments(*order).await, [("started".to_owned(), 1)]);
    assert!(app.payments(other).await.is_empty());

    let metrics = app.http.get(app.ops_url("/metrics")).send().await.unwrap().text().await.unwrap();
    let counted = |reason: &str| {
        cityhub_platform::metrics::sample(
            &metrics,
            "cityhub_payment_mismatches_total",
            &[&format!(r#"reason="{reason}""#)],
        )
    };
    assert_eq!(counted("unknown_txn"), Some(2.0));
    assert_eq!(counted("amount"), Some(1.0));
    assert_eq!(counted("order"), Some(1.0));
    assert_eq!(counted("stale"), Some(1.0));

    // The real callback still pays the order.
    assert_eq!(app.paid_callback(&txn, *order, 5000).await, (200, json!({ "result": "paid" })));
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

/// Without a callback secret the API does not start: there is no default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_refuses_to_start_without_a_callback_secret() {
    let mut env = cityhub_testkit::TestEnv::new();
    env.settings.payments.callback_secret = cityhub_core::config::Secret::new(String::new());
    let mq = cityhub_testkit::mq_client();
    let err = cityhub_api::state::AppState::build(env.settings.clone(), mq).await.err().expect("it must not start");
    assert!(format!("{err:#}").contains("payments.callback_secret"), "{err:#}");
}
