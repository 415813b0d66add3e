//! Closing orders: an admin close (auth, idempotence, the stock released
//! once and the buyer free to buy again), an expired order read as closed,
//! and payments racing closes (exactly one wins, stock right every round).

use std::time::Duration;

use cityhub_core::orders::lifecycle::Move;
use cityhub_core::OrderId;
use serde_json::json;

use crate::app::{eventually, Options, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_close_needs_an_admin_releases_the_unit_once_and_is_idempotent() {
    // No sold-out memory: the unit released below is for sale at once.
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.payments.callback_url = "http://127.0.0.1:9/".into();
        s.seckill.sold_out_cache_ms = Duration::from_millis(0);
    })
    .await;
    let voucher = app.on_sale(2).await;
    let users = app.users(3).await;
    let orders = app.stored_orders(voucher, &users[..2]).await;
    let (user, token, order) = orders[0].clone();

    assert_eq!(app.admin_close(None, order).await.0, 401);
    let (status, err) = app.admin_close(Some(&token), order).await;
    assert_eq!((status, err["code"].as_str()), (403, Some("forbidden")));
    assert_eq!(app.order_status(order).await.as_deref(), Some("unpaid"));
    assert_eq!(app.seckill(&users[2].1, voucher).await.0, 409, "sold out before the close");

    let admin = app.admin_token();
    for _ in 0..2 {
        let (status, body) = app.admin_close(Some(&admin), order).await;
        assert_eq!((status, body), (200, json!({ "order_id": order.to_string(), "status": "closed" })));
        assert_eq!((app.db_stock(voucher).await, app.redis_stock(voucher).await), (1, 1), "released exactly once");
    }
    assert_eq!(app.buyers(voucher).await[&user], cityhub_core::seckill::scripts::BuyerEntry::Released(order));
    app.assert_stock_agrees(voucher).await;
    assert_eq!(app.get_order(&token, order).await.1["status"], "closed");
    assert_eq!(app.pay(&token, order).await.0, 409);

    // The freed unit sells again, to the same buyer too.
    let (status, body) = app.seckill(&token, voucher).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(app.wait_for_orders(voucher, 3, Duration::from_secs(30)).await, 3);
    app.assert_stock_agrees(voucher).await;

    // A paid order is refunded, then closed; its unit comes back once.
    let (_, paid_token, paid) = orders[1].clone();
    let txn = app.pay(&paid_token, paid).await.1["txn_id"].as_str().unwrap().to_owned();
    assert_eq!(app.paid_callback(&txn, paid, 5000).await.0, 200);
    for _ in 0..2 {
        assert_eq!(app.admin_close(Some(&admin), paid).await.1["status"], "refunded");
    }
    assert_eq!(app.payments(paid).await, [("refunded".to_owned(), 1)]);
    assert_eq!(app.db_stock(voucher).await, 1);
    app.assert_stock_agrees(voucher).await;
    assert_eq!(app.admin_close(Some(&admin), OrderId(999_999)).await.0, 404);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unpaid_order_past_its_timeout_reads_closed_and_cannot_be_paid() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.payments.callback_url = "http://127.0.0.1:9/".into();
        s.orders.payment_timeout_secs = Duration::from_secs(1);
        s.orders.close_cron = "0 0 0 1 1 *".into(); // not during the test
    })
    .await;
    let voucher = app.on_sale(5).await;
    let users = app.users(1).await;
    let (_, token, order) = app.stored_orders(voucher, &users).await.remove(0);
    // The shopper starts paying in time; the provider's result comes late.
    let txn = app.start_payment(&token, order).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(app.order_status(order).await.as_deref(), Some("unpaid"), "the close job has not run");
    assert_eq!(app.get_order(&token, order).await.1["status"], "closed");
    let listed = app.http.get(app.url("/orders")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(listed.json::<serde_json::Value>().await.unwrap()["orders"][0]["status"], "closed");
    let (status, err) = app.pay(&token, order).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("order_not_payable")));
    // A payment arriving now loses: the order is closed, its unit released, the money refunded.
    assert_eq!(app.paid_callback(&txn, order, 5000).await.1["result"], "refunded");
    assert_eq!(app.order_status(order).await.as_deref(), Some("refunded"));
    assert_eq!(app.payments(order).await, [("refunded".to_owned(), 1)]);
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

/// 100 fresh orders; on each, a payment callback and a close fire at once
/// (an admin close on even rounds, the close job's optimistic close on odd
/// ones). Exactly one wins: the order ends paid, or closed/refunded with no
/// payment kept, and the stock agrees in MySQL and Redis after every round.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_payments_racing_closes_have_one_winner_each_and_stock_stays_right() {
    let app =
        TestApp::spawn_with(Options { worker: true }, |s| s.payments.callback_url = "http://127.0.0.1:9/".into()).await;
    let voucher = app.on_sale(100).await;
    let users = app.users(100).await;
    let orders = app.stored_orders(voucher, &users).await;
    let lifecycle = app.services().lifecycle;
    let admin = app.admin_token();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for (round, (_, token, order)) in orders.iter().enumerate() {
        let txn = app.start_payment(token, *order).await;
        let pay = app.paid_callback(&txn, *order, 5000);
        if round % 2 == 0 {
            let (paid, closed) = tokio::join!(pay, app.admin_close(Some(&admin), *order));
            assert_eq!((paid.0, closed.0), (200, 200), "{paid:?} {closed:?}");
        } else {
            let (paid, closed) = tokio::join!(pay, lifecycle.apply(*order, Move::Close));
            assert_eq!(paid.0, 200, "{paid:?}");
            closed.unwrap();
        }
        let status = app.order_status(*order).await.unwrap();
        let payments = app.payments(*order).await;
        match status.as_str() {
            "paid" => assert_eq!(payments, [("paid".to_owned(), 1)], "round {round}"),
            "closed" | "refunded" => assert_eq!(payments, [("refunded".to_owned(), 1)], "round {round}: {status}"),
            other => panic!("round {round}: order ended {other}"),
        }
        app.assert_stock_agrees(voucher).await;
        *outcomes.entry(status).or_default() += 1;
    }
    assert_eq!(outcomes.values().sum::<usize>(), 100);
    let live = outcomes.get("paid").copied().unwrap_or(0) as i64;
    assert_eq!(app.db_stock(voucher).await, 100 - live);
    eprintln!("pay vs close outcomes: {outcomes:?}");
    app.shutdown().await;
}

/// An order stored long after its unit was reserved (the worker was down
/// longer than the payment timeout) gives its shopper the whole window from
/// when it was stored: it reads unpaid with a deadline in the future, can
/// be paid, and the close job leaves it alone until that deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_stored_late_keeps_its_whole_payment_window() {
    let mut app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.payments.callback_url = "http://127.0.0.1:9/".into();
        s.orders.payment_timeout_secs = Duration::from_secs(4);
        s.orders.close_cron = "* * * * * *".into();
    })
    .await;
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;
    let mut orders = Vec::new();
    for (_, token) in &users {
        let (status, body) = app.seckill(token, voucher).await;
        assert_eq!(status, 202, "{body}");
        orders.push(body["order_id"].as_str().unwrap().parse::<OrderId>().unwrap());
    }
    // Longer than the payment timeout passes before the worker stores them.
    tokio::time::sleep(Duration::from_secs(5)).await;
    app.start_worker().await;
    assert_eq!(app.wait_for_orders(voucher, 2, Duration::from_secs(30)).await, 2);
    for (order, (_, token)) in orders.iter().zip(&users) {
        let (_, view) = app.get_order(token, *order).await;
        assert_eq!(view["status"], "unpaid", "{view}");
        let pay_by: chrono::DateTime<chrono::Utc> = view["pay_by"].as_str().unwrap().parse().unwrap();
        assert!(pay_by > chrono::Utc::now() + chrono::TimeDelta::seconds(2), "{view}");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let txn = app.start_payment(&users[0].1, orders[0]).await;
    assert_eq!(app.paid_callback(&txn, orders[0], 5000).await, (200, json!({ "result": "paid" })));
    assert_eq!(app.order_status(orders[1]).await.as_deref(), Some("unpaid"), "the close job waits for its window");
    // Its own window over, the unpaid one closes.
    let closed = || async { app.order_status(orders[1]).await.as_deref() == Some("closed") };
    assert!(eventually(Duration::from_secs(30), closed).await);
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}
