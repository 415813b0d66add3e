//! Refunds always finish. A refund is recorded as `refunding` before the
//! provider is asked; whatever stops it halfway (the provider refusing for
//! now, a crash after the provider refunded), the money goes back once, the
//! order ends refunded with its unit released once, and a callback for the
//! payment is not answered `duplicate` while its refund is under way.

use std::time::Duration;

use cityhub_core::{OrderId, VoucherId};
use serde_json::json;

use crate::app::{eventually, Options, TestApp};

/// Callbacks go nowhere (the tests send them); the refund job runs every second.
fn quiet(s: &mut cityhub_core::config::Settings) {
    s.payments.callback_url = "http://127.0.0.1:9/callback".into();
    s.payments.refund_retry_secs = Duration::from_secs(1);
}

/// `(status, refund_move)` of payment `txn`.
async fn payment_row(app: &TestApp, txn: &str) -> (String, Option<String>) {
    sqlx::query_as("SELECT status, refund_move FROM payments WHERE txn_id = ?")
        .bind(txn)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// A paid order: (token, order id, transaction id).
async fn paid_order(app: &TestApp, voucher: VoucherId) -> (String, OrderId, String) {
    let users = app.users(1).await;
    let (_, token, order) = app.stored_orders(voucher, &users).await.remove(0);
    let txn = app.start_payment(&token, order).await;
    assert_eq!(app.paid_callback(&txn, order, 5000).await, (200, json!({ "result": "paid" })));
    (token, order, txn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_close_whose_refund_the_provider_refuses_is_finished_by_the_refund_job() {
    // Each process's provider refuses the first two refund calls of a payment.
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        quiet(s);
        s.payments.provider_refund_failures = 2;
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (_, order, txn) = paid_order(&app, voucher).await;
    let admin = app.admin_token();

    let (status, err) = app.admin_close(Some(&admin), order).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("refund_pending")), "{err}");
    assert_eq!(payment_row(&app, &txn).await, ("refunding".into(), Some("refund_paid".into())));
    assert_eq!(app.order_status(order).await.as_deref(), Some("paid"), "no refund confirmed: still paid");
    assert_eq!(app.db_stock(voucher).await, 4, "nothing released before the money is back");
    // The provider delivers the callback again meanwhile: not `duplicate`.
    let (status, err) = app.paid_callback(&txn, order, 5000).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("refund_pending")), "{err}");

    // The worker's refund job (its provider refuses twice too) finishes it.
    let refunded = || async { payment_row(&app, &txn).await.0 == "refunded" };
    assert!(eventually(Duration::from_secs(30), refunded).await, "the refund job never finished the refund");
    assert_eq!(app.order_status(order).await.as_deref(), Some("refunded"));
    assert_eq!(app.db_stock(voucher).await, 5, "the unit came back once");
    app.assert_stock_agrees(voucher).await;
    assert_eq!(app.paid_callback(&txn, order, 5000).await, (200, json!({ "result": "duplicate" })));
    assert_eq!(app.admin_close(Some(&admin), order).await.1["status"], "refunded");
    assert_eq!(app.db_stock(voucher).await, 5);
    app.shutdown().await;
}

/// The crash the review names: the provider refunded, then the process died
/// before its transaction (the row still says `refunding`). The job asks
/// the provider again (one refund: the same refund id) and finishes once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_that_crashed_after_the_provider_refunded_is_finished_once() {
    // The worker stores orders; its refund job stays out of the way.
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        quiet(s);
        s.payments.refund_retry_secs = Duration::from_secs(3600);
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (_, order, txn) = paid_order(&app, voucher).await;
    // What an admin close leaves when it dies right after the provider call.
    sqlx::query("UPDATE payments SET status = 'refunding', refund_move = 'refund_paid' WHERE txn_id = ?")
        .bind(&txn)
        .execute(&app.db)
        .await
        .unwrap();
    let payments = app.services().payments().unwrap();
    let first = payments.provider().refund(&txn).await.unwrap();
    assert_eq!(app.order_status(order).await.as_deref(), Some("paid"));

    let (finished, pending) = payments.finish_refunds(Duration::ZERO, 100).await.unwrap();
    assert_eq!((finished, pending), (1, 0));
    assert_eq!(payments.provider().refund(&txn).await.unwrap(), first, "one refund per transaction");
    assert_eq!(payment_row(&app, &txn).await.0, "refunded");
    assert_eq!(app.order_status(order).await.as_deref(), Some("refunded"));
    assert_eq!(app.db_stock(voucher).await, 5);
    // Running again (a second worker, a retry) changes nothing.
    payments.finish_refund(&txn).await.unwrap();
    assert_eq!(payments.finish_refunds(Duration::ZERO, 100).await.unwrap(), (0, 0));
    assert_eq!(app.db_stock(voucher).await, 5, "released once");
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

/// A payment that loses (its order expired) is refunded; when the provider
/// refuses that refund, the callback answers 503 so the provider delivers
/// it again, and the next delivery finishes the refund.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_losing_payment_whose_refund_fails_is_not_answered_duplicate_until_refunded() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        quiet(s);
        s.payments.provider_refund_failures = 1;
        s.payments.refund_retry_secs = Duration::from_secs(3600);
        s.orders.payment_timeout_secs = Duration::from_secs(1);
        s.orders.close_cron = "0 0 0 1 1 *".into(); // not during the test
    })
    .await;
    let voucher = app.on_sale(5).await;
    let users = app.users(1).await;
    let (_, token, order) = app.stored_orders(voucher, &users).await.remove(0);
    let txn = app.start_payment(&token, order).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let (status, err) = app.paid_callback(&txn, order, 5000).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("refund_pending")), "{err}");
    assert_eq!(payment_row(&app, &txn).await, ("refunding".into(), Some("refund_closed".into())));
    assert_eq!(app.order_status(order).await.as_deref(), Some("closed"), "the expired order closed first");
    assert_eq!(app.paid_callback(&txn, order, 5000).await, (200, json!({ "result": "refunded" })));
    assert_eq!(app.order_status(order).await.as_deref(), Some("refunded"));
    assert_eq!(app.paid_callback(&txn, order, 5000).await, (200, json!({ "result": "duplicate" })));
    assert_eq!(app.db_stock(voucher).await, 5, "released once, by the close");
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}
