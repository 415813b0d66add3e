//! A hot voucher split into stock buckets, end to end: the walk from bucket
//! to bucket, one order per user across buckets, "sold out" only once every
//! bucket is empty, releases and rebuilds per bucket. In the suite's cluster
//! profile the buckets sit on different masters.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::seckill::scripts::{self, Confirm, PASSED};
use cityhub_core::seckill::{walk, Outcome};
use cityhub_core::vouchers::buckets;
use cityhub_core::{OrderId, Sale, UserId, VoucherId};
use cityhub_testkit::{fakes, invariants};
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::{accepted, eventually, Options, TestApp};

const DRAIN: Duration = Duration::from_secs(60);
/// Past the API's memory of a sold-out answer (`seckill.sold_out_cache_ms`, 200 ms).
const SOLD_OUT_MEMORY: Duration = Duration::from_millis(300);

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

/// What bucket `sale`'s buyers hash holds for `user`.
async fn mark(app: &TestApp, sale: Sale, user: UserId) -> Option<String> {
    app.kv.conn().hget(app.kv.keys.seckill_buyers(sale), user).await.unwrap()
}

/// A platform with its worker, whose reconciler runs only when a test asks
/// and judges a reservation late after `grace`; a voucher of 2 units in 2
/// buckets; and shoppers whose walk starts at bucket 0.
async fn two_buckets(grace: Duration) -> (TestApp, VoucherId, Vec<(UserId, String)>) {
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.reconcile.grace_secs = grace;
        s.reconcile.every_secs = Duration::from_secs(3600);
    })
    .await;
    let voucher = bucketed(&app, 2, 2).await;
    let users = app.users(16).await;
    let at_home = users.into_iter().filter(|(u, _)| buckets::home(*u, 2) == 0).collect();
    (app, voucher, at_home)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyer_who_walked_past_an_empty_bucket_cannot_buy_there_when_a_release_or_a_rebuild_refills_it() {
    let (app, voucher, at_home) = two_buckets(Duration::from_secs(1)).await;
    let [first, walker, loser, late] = [&at_home[0], &at_home[1], &at_home[2], &at_home[3]];
    let sale = Sale { voucher_id: voucher, bucket: 0 };

    // `first` takes bucket 0's one unit; `walker` finds it empty and buys in bucket 1;
    // `loser` finds both empty.
    let bought = app.stored_orders(voucher, std::slice::from_ref(first)).await;
    let walked = app.stored_orders(voucher, std::slice::from_ref(walker)).await;
    assert_eq!((bucket_of(&app, bought[0].2).await, bucket_of(&app, walked[0].2).await), (0, 1));
    let (status, err) = app.seckill(&loser.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("sold_out")), "{err}");
    tokio::time::sleep(SOLD_OUT_MEMORY).await;

    // `first`'s order is closed: its unit goes back to bucket 0.
    let (status, body) = app.admin_close(Some(&app.admin_token()), bought[0].2).await;
    assert_eq!(status, 200, "{body}");
    eventually(Duration::from_secs(30), || async { bucket_stock(&app, voucher, 0).await == Some(1) }).await;
    let (status, err) = app.seckill(&walker.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("already_bought")), "{err}");
    // `loser` passed bucket 0 and may not take its unit: sold out for them,
    // not for the voucher; the next shopper of bucket 0 gets it at once.
    let (status, err) = app.seckill(&loser.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("sold_out")), "{err}");
    let third = app.stored_orders(voucher, std::slice::from_ref(late)).await;
    assert_eq!(bucket_of(&app, third[0].2).await, 0);

    // `first` comes back to an empty bucket 0: its release tombstone gives
    // way to a pass mark, and a late copy of its closed order is refused
    // there, not written back as a live buyer.
    let (status, err) = app.seckill(&first.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("sold_out")), "{err}");
    assert_eq!(mark(&app, sale, first.0).await.as_deref(), Some(PASSED));
    let late_copy = scripts::confirm(&app.kv, sale, &[(first.0, bought[0].2)]).await.unwrap();
    assert_eq!(late_copy, [Confirm::Revoked]);

    // Bucket 0's keys are lost and rebuilt from MySQL: the walker's mark comes back with them.
    let _: () =
        app.kv.conn().del(&[app.kv.keys.seckill_voucher(sale), app.kv.keys.seckill_buyers(sale)]).await.unwrap();
    tokio::time::sleep(SOLD_OUT_MEMORY).await;
    let (status, err) = app.seckill(&loser.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("sale_paused")), "bucket 0 is paused: {err}");
    let report = rebuilt(&app, voucher).await;
    assert!(matches!(report.verdict.as_str(), "repaired" | "consistent"), "{report:?}");
    assert_eq!(bucket_stock(&app, voucher, 0).await, Some(0));
    assert_eq!(mark(&app, sale, walker.0).await.as_deref(), Some(PASSED), "the rebuild marks the walker passed again");
    let (status, err) = app.seckill(&walker.1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (409, Some("already_bought")), "{err}");

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

/// Runs the reconciler on `voucher` until no bucket is paused (90 s at most).
async fn rebuilt(app: &TestApp, voucher: VoucherId) -> cityhub_core::reconcile::Report {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        // Rebuilt by this run or, a moment before, by the worker's own reconciler.
        let report = app.state.reconciler.run(voucher).await.unwrap();
        if report.verdict.as_str() != "paused" || tokio::time::Instant::now() >= deadline {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rebuilt_bucket_marks_a_buyer_whose_reservation_further_along_is_not_stored_yet() {
    // A long grace: the reservations below are never re-published, so they
    // live in Redis only (an API that died before publishing).
    let (app, voucher, at_home) = two_buckets(Duration::from_secs(3600)).await;
    let (holder, ghost) = (at_home[0].0, at_home[1].0);
    // Ids issued now (a reservation's age is its id's), on a node no API holds.
    let walked = |user, seq| walk::reserve(&app.kv, voucher, 2, user, fakes::order_id(77, seq), &[]);
    let first = walked(holder, 1).await.unwrap();
    let second = walked(ghost, 2).await.unwrap();
    assert_eq!((first.sale.bucket, first.outcome), (0, Outcome::Accepted));
    assert_eq!((second.sale.bucket, second.outcome), (1, Outcome::Accepted), "the ghost walked past bucket 0");

    let sale = Sale { voucher_id: voucher, bucket: 0 };
    let _: () =
        app.kv.conn().del(&[app.kv.keys.seckill_voucher(sale), app.kv.keys.seckill_buyers(sale)]).await.unwrap();
    let report = rebuilt(&app, voucher).await;
    assert!(matches!(report.verdict.as_str(), "repaired" | "consistent"), "{report:?}");
    assert_eq!(report.live_orders, 0, "nothing was stored: {report:?}");
    assert_eq!(
        mark(&app, sale, ghost).await.as_deref(),
        Some(PASSED),
        "bucket 1's live reservation marks the ghost in bucket 0"
    );
    let again = walked(ghost, 3).await.unwrap();
    assert_eq!((again.sale.bucket, again.outcome), (1, Outcome::AlreadyBought));
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
