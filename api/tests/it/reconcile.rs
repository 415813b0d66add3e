//! The reconciler against real services: a reservation a dying API left
//! without a message becomes an order; a voucher whose Redis keys vanished
//! mid-sale pauses (503) until the rebuild and then sells exactly its
//! remaining stock; runs during a live stampede repair nothing.

use std::time::Duration;

use cityhub_core::reconcile::Verdict;
use cityhub_core::seckill::{scripts, Outcome};
use cityhub_platform::ids::OrderIds;
use redis::AsyncCommands;
use serde_json::Value;

use crate::app::{accepted, Options, TestApp};

fn quick(s: &mut cityhub_core::config::Settings) {
    s.reconcile.grace_secs = 1;
    s.mq.lag_sample_ms = 200;
}

async fn reconcile(app: &TestApp, voucher: u64) -> Value {
    let r = app
        .http
        .post(app.url(&format!("/admin/reconcile/{voucher}")))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reservation_left_without_a_message_becomes_an_order_after_one_run_past_the_grace_period() {
    let app = TestApp::spawn_with(Options { worker: true }, quick).await;
    let voucher = app.on_sale(5).await;
    let users = app.users(1).await;
    let user = users[0].0;
    // What a dying API leaves: the script ran, the message never went out.
    let order = OrderIds::unleased(77).next_id().unwrap();
    assert_eq!(scripts::reserve(&app.kv, voucher, user, order, &[]).await.unwrap().0, Outcome::Accepted);

    let early = reconcile(&app, voucher).await;
    assert_eq!((early["verdict"].as_str(), early["in_flight"].as_i64()), (Some("consistent"), Some(1)), "{early}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let report = reconcile(&app, voucher).await;
    assert_eq!(report["verdict"], "repaired", "{report}");
    assert_eq!(report["differences"][0]["kind"], "unconfirmed_reservation");
    assert_eq!(report["differences"][0]["order_ids"][0], order);
    assert_eq!(app.wait_for_orders(voucher, 1, Duration::from_secs(30)).await, 1);
    assert_eq!(app.order_status(order).await.as_deref(), Some("unpaid"));
    app.assert_stock_agrees(voucher).await;
    let kept = app
        .http
        .get(app.url(&format!("/admin/reconcile/{voucher}")))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .unwrap();
    assert_eq!(kept.json::<Value>().await.unwrap(), report, "the last report is kept");
    assert_eq!(reconcile(&app, voucher).await["verdict"], "consistent");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_voucher_whose_keys_vanished_pauses_until_the_rebuild_then_sells_exactly_its_remaining_stock() {
    let app = TestApp::spawn_with(Options { worker: true }, quick).await;
    let voucher = app.on_sale(20).await;
    let users = app.users(45).await;
    let first = app.stored_orders(voucher, &users[..5]).await;
    let _: () = app
        .kv
        .conn()
        .del(&[
            cityhub_core::kv::CityKeys::seckill_voucher(&app.kv.keys, voucher),
            cityhub_core::kv::CityKeys::seckill_buyers(&app.kv.keys, voucher),
        ])
        .await
        .unwrap();
    let (status, err) = app.seckill(&users[5].1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("sale_paused")), "{err}");
    assert_eq!(app.seckill(&first[0].1, voucher).await.0, 503, "nothing is decided while paused");

    // The worker reports its lag; once it is zero, a run rebuilds.
    let mut report = reconcile(&app, voucher).await;
    for _ in 0..50 {
        if report["verdict"] != "paused" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        report = reconcile(&app, voucher).await;
    }
    assert_eq!(report["verdict"], "repaired", "{report}");
    assert_eq!(report["differences"][0]["kind"], "keys_missing", "{report}");
    assert_eq!((report["redis_stock"].as_i64(), report["live_buyers"].as_i64()), (Some(15), Some(5)));
    app.assert_stock_agrees(voucher).await;

    // A buyer from before cannot buy twice; 40 new shoppers get exactly the 15 left.
    assert_eq!(app.seckill(&first[0].1, voucher).await.0, 409);
    let rest = &users[5..];
    let answers = futures::future::join_all(rest.iter().map(|(_, t)| app.seckill(t, voucher))).await;
    let mut won = accepted(rest, &answers);
    assert_eq!(won.len(), 15, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    assert_eq!(app.wait_for_orders(voucher, 20, Duration::from_secs(30)).await, 20);
    won.extend(
        first.iter().map(|(user_id, _, order_id)| cityhub_core::invariants::Accepted {
            order_id: *order_id,
            user_id: *user_id,
        }),
    );
    app.assert_invariants(voucher, &won).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runs_during_a_live_stampede_find_and_repair_nothing() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(150).await;
    let users = app.users(300).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let runs = tokio::spawn({
        let (reconciler, stop) = (app.state.reconciler.clone(), stop.clone());
        async move {
            let mut reports = Vec::new();
            while !stop.is_cancelled() {
                reports.push(reconciler.run(voucher).await.unwrap());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            reports
        }
    });
    let answers = futures::future::join_all(users.iter().map(|(_, t)| app.seckill(t, voucher))).await;
    let won = accepted(&users, &answers);
    assert_eq!(won.len(), 150);
    assert_eq!(app.wait_for_orders(voucher, 150, Duration::from_secs(30)).await, 150);
    stop.cancel();
    let reports = runs.await.unwrap();
    assert!(reports.len() >= 2, "only {} runs overlapped the stampede", reports.len());
    for r in &reports {
        assert_eq!((r.verdict, &r.differences), (Verdict::Consistent, &Vec::new()), "{r:?}");
    }
    app.assert_invariants(voucher, &won).await;
    let last = app.state.reconciler.run(voucher).await.unwrap();
    assert_eq!((last.verdict, last.live_buyers, last.in_flight), (Verdict::Consistent, 150, 0));
    app.shutdown().await;
}
