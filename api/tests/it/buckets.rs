//! A hot voucher split into stock buckets, end to end: the walk from bucket
//! to bucket, one order per user across buckets, "sold out" only once every
//! bucket is empty, releases and rebuilds per bucket. In the suite's cluster
//! profile the buckets sit on different masters.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::seckill::scripts::PASSED;
use cityhub_core::vouchers::buckets;
use cityhub_core::{OrderId, Sale, UserId, VoucherId};
use cityhub_testkit::invariants;
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::{accepted, eventually, Options, TestApp};

const DRAIN: Duration = Duration::from_secs(60);

/// A voucher of `stock` units in `n` buckets, on sale now for an hour.
async fn bucketed(app: &TestApp, stock: u32, n: u16) -> VoucherId {
    let (status, body) = create(app, json!({ "stock": stock, "buckets": n })).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["buckets"], n);
    body["id"].as_str().unwrap().parse().unwrap()
}

async fn create(app: &TestApp, fields: Value) -> (u16, Value) {
    let now = chrono::Utc::now();
    let mut body = json!({
        "shop_id": app.shop().await, "title": "hot", "pay_value": 5000, "actual_value": 10000,
        "begin_time": now - chrono::Duration::seconds(1), "end_time": now + chrono::Duration::hours(1),
    });
    body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    app.admin_send(reqwest::Method::POST, "/admin/vouchers", &body).await
}

async fn bucket_stock(app: &TestApp, voucher_id: VoucherId, bucket: u16) -> Option<i64> {
    app.kv.conn().hget(app.kv.keys.seckill_voucher(Sale { voucher_id, bucket }), "stock").await.unwrap()
}

/// The stored orders of the voucher per bucket.
async fn orders_per_bucket(app: &TestApp, voucher: VoucherId) -> HashMap<u16, i64> {
    let rows: Vec<(u16, i64)> = sqlx::query_as(
        "SELECT bucket, COUNT(*) FROM orders WHERE voucher_id = ? AND status IN ('unpaid', 'paid') GROUP BY bucket",
    )
    .bind(voucher)
    .fetch_all(&app.db)
    .await
    .unwrap();
    rows.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stampede_on_a_voucher_of_4_buckets_sells_exactly_its_stock_and_sold_out_waits_for_the_last_bucket() {
    let app = TestApp::spawn().await;
    let voucher = bucketed(&app, 30, 4).await;
    let users = app.users(90).await;

    let answers = futures::future::join_all(users.iter().map(|(_, t)| app.seckill(t, voucher))).await;

    let won = accepted(&users, &answers);
    assert_eq!(won.len(), 30, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    let sold_out = answers.iter().filter(|(s, b)| *s == 409 && b["code"] == "sold_out").count();
    assert_eq!(sold_out, 60, "every other request is a clean sold-out");
    assert_eq!(app.wait_for_orders(voucher, 30, DRAIN).await, 30);
    for bucket in 0..4 {
        assert_eq!(bucket_stock(&app, voucher, bucket).await, Some(0), "bucket {bucket} drained");
    }
    let per_bucket = orders_per_bucket(&app, voucher).await;
    let shares: HashMap<u16, i64> = (0..4).map(|b| (b, buckets::share(30, 4, b))).collect();
    assert_eq!(per_bucket, shares, "each bucket sold its share, no more");
    app.assert_invariants(voucher, &won).await;
    app.assert_stock_agrees(voucher).await;
    let report = app.state.reconciler.run(voucher).await.unwrap();
    assert_eq!(report.verdict.as_str(), "consistent", "{report:?}");
    assert_eq!((report.redis_stock, report.live_buyers, report.live_orders), (Some(0), 30, 30));

    let (status, page) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), None).await;
    assert_eq!((status, page["stock_left"].as_i64()), (200, Some(0)), "{page}");
    app.shutdown().await;
}

async fn bucket_of(app: &TestApp, order: OrderId) -> u16 {
    sqlx::query_scalar("SELECT bucket FROM orders WHERE id = ?").bind(order).fetch_one(&app.db).await.unwrap()
}

/// Users of `users` whose walk over `n` buckets starts at `bucket`.
fn homed(users: &[(UserId, String)], n: u16, bucket: u16) -> Vec<(UserId, String)> {
    users.iter().filter(|(u, _)| buckets::home(*u, n) == bucket).cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_who_walked_past_an_empty_bucket_cannot_buy_there_when_a_release_or_a_rebuild_refills_it() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.reconcile.grace_secs = Duration::from_secs(1);
        s.reconcile.every_secs = Duration::from_secs(3600);
    })
    .await;
    let voucher = bucketed(&app, 2, 2).await;
    let users = app.users(12).await;
    let at_home = homed(&users, 2, 0);
    let [first, walker, late] = [&at_home[0], &at_home[1], &at_home[2]];

    // `first` takes bucket 0's one unit; `walker` finds it empty and buys in bucket 1.
    let bought = app.stored_orders(voucher, std::slice::from_ref(first)).await;
    let walked = app.stored_orders(voucher, std::slice::from_ref(walker)).await;
    assert_eq!((bucket_of(&app, bought[0].2).await, bucket_of(&app, walked[0].2).await), (0, 1));

    // `first`'s order is closed: its unit goes back to bucket 0.
    let (status, body) = app.admin_close(Some(&app.admin_token()), bought[0].2).await;
    assert_eq!(status, 200, "{body}");
    eventually(Duration::from_secs(30), || async { bucket_stock(&app, voucher, 0).await == Some(1) }).await;
    let (status, err) = app.seckill(&walker.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("already_bought")), "{err}");

    // Bucket 0's keys are lost and rebuilt from MySQL: the walker's mark comes back with them.
    let sale = Sale { voucher_id: voucher, bucket: 0 };
    let _: () =
        app.kv.conn().del(&[app.kv.keys.seckill_voucher(sale), app.kv.keys.seckill_buyers(sale)]).await.unwrap();
    assert_eq!(app.seckill(&late.1, voucher).await.0, 503, "bucket 0 is paused");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let report = loop {
        let report = app.state.reconciler.run(voucher).await.unwrap();
        if report.verdict.as_str() != "paused" || tokio::time::Instant::now() >= deadline {
            break report;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    // Rebuilt by this run or, a moment before, by the worker's own reconciler.
    assert!(matches!(report.verdict.as_str(), "repaired" | "consistent"), "{report:?}");
    assert_eq!(bucket_stock(&app, voucher, 0).await, Some(1));
    let mark: Option<String> = app.kv.conn().hget(app.kv.keys.seckill_buyers(sale), walker.0).await.unwrap();
    assert_eq!(mark.as_deref(), Some(PASSED), "the rebuild marks the walker passed again");
    let (status, err) = app.seckill(&walker.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("already_bought")), "{err}");

    // The refilled unit goes to a buyer who had not passed bucket 0.
    let third = app.stored_orders(voucher, std::slice::from_ref(late)).await;
    assert_eq!(bucket_of(&app, third[0].2).await, 0);
    let won: Vec<invariants::Accepted> = [&walked[0], &third[0]]
        .iter()
        .map(|(user_id, _, order_id)| invariants::Accepted { order_id: *order_id, user_id: *user_id })
        .collect();
    let state = invariants::load(&app.db, &app.kv, voucher).await.unwrap();
    let live: HashSet<UserId> =
        state.buyers.iter().filter(|(_, e)| e.live_order().is_some()).map(|(u, _)| *u).collect();
    assert_eq!(live, won.iter().map(|a| a.user_id).collect(), "the live buyers are the two live orders'");
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

#[tokio::test]
async fn buckets_out_of_range_or_beyond_the_stock_are_refused_and_create_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    for (stock, n) in [(10, 0), (100, 65), (3, 4)] {
        let (status, err) = create(&app, json!({ "stock": stock, "buckets": n })).await;
        assert_eq!((status, err["code"].as_str()), (422, Some("validation_failed")), "{stock} in {n}: {err}");
    }
    let after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    assert_eq!(after, before);
    app.shutdown().await;
}
