//! The reconciler against real services: a reservation a dying API left
//! without a message becomes an order; a voucher whose Redis keys vanished
//! mid-sale, or whose Redis came back from an older snapshot, pauses (503)
//! until the rebuild and then sells exactly its remaining stock; a second
//! rebuild changes nothing; an entry holding another user's order is
//! reported; runs during a live stampede repair nothing.

use std::time::Duration;

use cityhub_core::config::Secret;
use cityhub_core::reconcile::Verdict;
use cityhub_core::seckill::{scripts, Outcome};
use cityhub_core::{Sale, UserId, VoucherId};
use cityhub_platform::ids::beats;
use cityhub_testkit::{fakes, logs, PrivateRedis};
use redis::AsyncCommands;
use serde_json::Value;

use crate::app::{accepted, Options, TestApp};

fn quick(s: &mut cityhub_core::config::Settings) {
    s.reconcile.grace_secs = Duration::from_secs(1);
    // Only the tests' own runs reconcile.
    s.reconcile.every_secs = Duration::from_secs(3600);
}

/// `node`'s last beat is a lease TTL old: its holder has stopped.
async fn stop_beating(app: &TestApp, node: u16) {
    let ttl = app.env.settings.ids.lease_ttl_ms;
    beats::record(&app.kv, node, cityhub_platform::now_ms() - ttl.as_millis() as u64 - 1).await.unwrap();
}

/// Whether the reconciler forgot stopped `node` within `within` (it does
/// after a full pass that ran every due voucher).
async fn forgotten(app: &TestApp, node: u16, within: Duration) -> bool {
    crate::app::eventually(within, || async {
        let score: Option<u64> = app.kv.conn().zscore(app.kv.keys.id_node_beats(), node).await.unwrap();
        score.is_none()
    })
    .await
}

/// The sale's Redis state vanishes, as when Redis loses it.
async fn lose_sale_keys(app: &TestApp, voucher: VoucherId) {
    let keys = [
        cityhub_core::kv::CityKeys::seckill_voucher(&app.kv.keys, voucher),
        cityhub_core::kv::CityKeys::seckill_buyers(&app.kv.keys, voucher),
    ];
    let _: () = app.kv.conn().del(&keys).await.unwrap();
}

async fn reconcile(app: &TestApp, voucher: VoucherId) -> Value {
    post_reconcile(app, &format!("/admin/reconcile/{voucher}")).await
}

async fn post_reconcile(app: &TestApp, path: &str) -> Value {
    let r = app.http.post(app.url(path)).bearer_auth(app.admin_token()).send().await.unwrap();
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
    let order = fakes::order_id(77, 0);
    assert_eq!(scripts::reserve(&app.kv, voucher, user, order, &[]).await.unwrap().0, Outcome::Accepted);

    let early = reconcile(&app, voucher).await;
    assert_eq!((early["verdict"].as_str(), early["in_flight"].as_i64()), (Some("consistent"), Some(1)), "{early}");
    tokio::time::sleep(Duration::from_millis(1100)).await;

    // A dry run finds it, names the repair and changes nothing.
    let dry = post_reconcile(&app, &format!("/admin/reconcile/{voucher}?dry_run=true")).await;
    assert_eq!((dry["verdict"].as_str(), dry["differences"][0]["repaired"].as_bool()), (Some("drift"), Some(false)));
    assert!(dry["differences"][0]["detail"].as_str().unwrap().contains("would re-publish"), "{dry}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(app.order_count(voucher).await, 0, "a dry run published the order");

    let report = reconcile(&app, voucher).await;
    assert_eq!(report["verdict"], "repaired", "{report}");
    assert_eq!(report["differences"][0]["kind"], "unconfirmed_reservation");
    assert_eq!(report["differences"][0]["order_ids"][0], order.to_string());
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

/// What a killed API leaves (a reservation, no message) is re-published as
/// soon as its order-id node has gone the lease TTL without a beat, by the
/// worker's own reconciler job, not after the grace period; a reservation
/// of a node still beating waits, and the stopped node is then forgotten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_apis_reservation_is_republished_once_its_node_stops_beating_not_after_the_grace_period() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.reconcile.grace_secs = Duration::from_secs(3600);
        s.reconcile.every_secs = Duration::from_secs(3600);
    })
    .await;
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;
    let (gone, alive) = (fakes::order_id(77, 0), fakes::order_id(78, 0));
    for ((user, _), order) in users.iter().zip([gone, alive]) {
        assert_eq!(scripts::reserve(&app.kv, voucher, *user, order, &[]).await.unwrap().0, Outcome::Accepted);
    }
    // Node 78's holder keeps beating; node 77's last beat is a TTL old.
    let kv = app.kv.clone();
    let beating = tokio::spawn(async move {
        loop {
            beats::record(&kv, 78, cityhub_platform::now_ms()).await.unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    stop_beating(&app, 77).await;

    assert_eq!(app.wait_for_orders(voucher, 1, Duration::from_secs(30)).await, 1, "the orphan was not re-published");
    assert_eq!(app.order_status(gone).await.as_deref(), Some("unpaid"));
    assert_eq!(app.order_status(alive).await, None, "a reservation of a beating node was re-published");
    assert!(forgotten(&app, 77, Duration::from_secs(10)).await, "the stopped node is still listed");
    beating.abort();
    app.shutdown().await;
}

/// A sale that began after the worker's reconciler last listed the due
/// vouchers (its full passes are an hour apart here) is watched all the
/// same: the loss of its Redis copy is rebuilt by the worker's own job
/// within seconds, with no admin run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_that_began_after_the_workers_last_full_pass_is_rebuilt_by_its_job_within_seconds_of_a_loss() {
    let app = TestApp::spawn_with(Options { worker: true }, quick).await;
    // A node silent for the lease TTL makes the job run a full pass at once,
    // and forget the node after it.
    stop_beating(&app, 77).await;
    assert!(forgotten(&app, 77, Duration::from_secs(30)).await, "the worker's reconciler made no full pass");
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;
    app.stored_orders(voucher, &users[..1]).await;
    lose_sale_keys(&app, voucher).await;
    let (status, err) = app.seckill(&users[1].1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("sale_paused")), "{err}");

    let lost = std::time::Instant::now();
    let rebuilt = crate::app::eventually(Duration::from_secs(8), || async {
        scripts::is_current(&app.kv, Sale::from(voucher)).await.unwrap_or(false)
    })
    .await;
    assert!(rebuilt, "the worker did not rebuild the sale within {:?}", lost.elapsed());
    let (status, body) = app.seckill(&users[1].1, voucher).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(app.wait_for_orders(voucher, 2, Duration::from_secs(30)).await, 2);
    app.assert_stock_agrees(voucher).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_voucher_whose_keys_vanished_pauses_until_the_rebuild_then_sells_exactly_its_remaining_stock() {
    let app = TestApp::spawn_with(Options { worker: true }, quick).await;
    let voucher = app.on_sale(20).await;
    let users = app.users(45).await;
    let first = app.stored_orders(voucher, &users[..5]).await;
    lose_sale_keys(&app, voucher).await;
    let (status, err) = app.seckill(&users[5].1, voucher).await;
    assert_eq!((status, err["code"].as_str()), (503, Some("sale_paused")), "{err}");
    assert_eq!(app.seckill(&first[0].1, voucher).await.0, 503, "nothing is decided while paused");

    // Once no answer of a reservation on the lost copy can come (0.5 s after
    // the pause was seen) and the group committed past the topic's offsets
    // of then, a run rebuilds: not after every send that may be in flight.
    let paused = std::time::Instant::now();
    let report = reconcile_until_unpaused(&app, voucher, Duration::from_secs(90)).await;
    let took = paused.elapsed();
    assert_rebuilt(&report, voucher, "keys_missing");
    assert!(took < Duration::from_millis(4400), "the rebuild came {took:?} after the pause");
    assert_eq!((report["redis_stock"].as_i64(), report["live_buyers"].as_i64()), (Some(15), Some(5)));
    app.assert_stock_agrees(voucher).await;

    // A buyer from before cannot buy twice; 40 new shoppers get exactly the 15 left.
    assert_eq!(app.seckill(&first[0].1, voucher).await.0, 409);
    let rest = &users[5..];
    let answers = futures::future::join_all(rest.iter().map(|(_, t)| app.seckill(t, voucher))).await;
    let mut won = accepted(rest, &answers);
    assert_eq!(won.len(), 15, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    assert_eq!(app.wait_for_orders(voucher, 20, Duration::from_secs(30)).await, 20);
    won.extend(first.iter().map(|(user_id, _, order_id)| cityhub_testkit::invariants::Accepted {
        order_id: *order_id,
        user_id: *user_id,
    }));
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

/// Reconciles until the voucher's pause ends (or `timeout`), answering the
/// last report.
async fn reconcile_until_unpaused(app: &TestApp, voucher: VoucherId, timeout: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let report = reconcile(app, voucher).await;
        if report["verdict"] != "paused" || tokio::time::Instant::now() >= deadline {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The pause ended with a rebuild of `kind`: by this run, or by the worker's
/// reconciler (which looks at paused vouchers every 250 ms) just before it.
fn assert_rebuilt(report: &Value, voucher: VoucherId, kind: &str) {
    match report["verdict"].as_str() {
        Some("repaired") => assert_eq!(report["differences"][0]["kind"], kind, "{report}"),
        Some("consistent") => {
            let needles = ["reconciler difference", &format!("voucher_id={voucher}"), kind, "repaired=true"];
            assert!(logs::contains(&needles), "no rebuild of {kind} was logged: {report}");
        }
        _ => panic!("still paused or drifting: {report}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_restored_from_an_older_snapshot_pauses_the_sale_until_rebuilt_and_sells_no_unit_twice() {
    let mut redis = PrivateRedis::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        quick(s);
        s.redis.url = Secret::new(url);
        s.redis.cluster_nodes.clear();
    })
    .await;
    let voucher = app.on_sale(20).await;
    let users = app.users(30).await;
    let early = app.stored_orders(voucher, &users[..10]).await;
    redis.snapshot().await;
    let late = app.stored_orders(voucher, &users[10..15]).await;
    redis.restart_from_snapshot().await;

    // The copy holds the voucher as it was before the late orders: selling
    // from it would sell their units again and let their buyers buy twice.
    let mut paused = 0;
    for (_, token, _) in &late {
        let (status, body) = app.seckill(token, voucher).await;
        assert_ne!(status, 202, "a buyer won twice on a stale copy of Redis: {body}");
        paused += usize::from(body["code"] == "sale_paused");
    }
    assert!(paused >= 1, "no shopper was told the sale is paused");

    let report = reconcile_until_unpaused(&app, voucher, Duration::from_secs(90)).await;
    assert_rebuilt(&report, voucher, "stale_copy");
    assert_eq!((report["redis_stock"].as_i64(), report["live_buyers"].as_i64()), (Some(5), Some(15)), "{report}");

    for (_, token, _) in late.iter().chain(&early) {
        assert_eq!(app.seckill(token, voucher).await.1["code"], "already_bought");
    }
    let rest = &users[15..];
    let answers = futures::future::join_all(rest.iter().map(|(_, t)| app.seckill(t, voucher))).await;
    let mut won = accepted(rest, &answers);
    assert_eq!(won.len(), 5, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    assert_eq!(app.wait_for_orders(voucher, 20, Duration::from_secs(30)).await, 20);
    won.extend(early.iter().chain(&late).map(|(user_id, _, order_id)| cityhub_testkit::invariants::Accepted {
        order_id: *order_id,
        user_id: *user_id,
    }));
    app.assert_invariants(voucher, &won).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_rebuild_from_an_earlier_reading_changes_nothing_and_keeps_what_was_sold_since() {
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(10).await;
    let keys = [
        cityhub_core::kv::CityKeys::seckill_voucher(&app.kv.keys, voucher),
        cityhub_core::kv::CityKeys::seckill_buyers(&app.kv.keys, voucher),
    ];
    let _: () = app.kv.conn().del(&keys).await.unwrap();
    let now = cityhub_platform::now_ms() as i64;
    // What two reconcilers read from MySQL before either wrote: no order yet.
    let state = scripts::SaleState {
        stock: 10,
        begin_ms: now - 1_000,
        end_ms: now + 600_000,
        pay_value: 100,
        buyers: vec![],
        passed: vec![],
    };
    assert!(scripts::rebuild(&app.kv, voucher, &state).await.unwrap(), "the first rebuild writes");
    let order = fakes::order_id(78, 0);
    assert_eq!(scripts::reserve(&app.kv, voucher, UserId(7), order, &[]).await.unwrap().0, Outcome::Accepted);

    assert!(!scripts::rebuild(&app.kv, voucher, &state).await.unwrap(), "the second one must find it rebuilt");
    assert_eq!(
        app.buyers(voucher).await.get(&UserId(7)),
        Some(&cityhub_core::seckill::scripts::BuyerEntry::Reserved(order)),
        "the sale since was wiped"
    );
    assert_eq!(app.redis_stock(voucher).await, 9);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buyer_entry_holding_an_order_stored_for_another_user_is_reported() {
    let app = TestApp::spawn_with(Options { worker: true }, quick).await;
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;
    let (a, b) = (users[0].0, users[1].0);
    // Two buyers holding one order id (a collision of ids); only one order can be stored.
    let id = fakes::order_id(79, 0);
    assert_eq!(scripts::reserve(&app.kv, voucher, a, id, &[]).await.unwrap().0, Outcome::Accepted);
    assert_eq!(scripts::reserve(&app.kv, voucher, b, id, &[]).await.unwrap().0, Outcome::Accepted);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    reconcile(&app, voucher).await; // re-publishes both reservations
    assert_eq!(app.wait_for_orders(voucher, 1, Duration::from_secs(30)).await, 1);

    let found = || async {
        let report = reconcile(&app, voucher).await;
        report["differences"].as_array().unwrap().iter().any(|d| d["kind"] == "owner_mismatch")
    };
    assert!(cityhub_testkit::eventually(Duration::from_secs(30), found).await, "the collision went unseen");
    let report = reconcile(&app, voucher).await;
    assert_eq!(report["verdict"], "drift", "{report}");
    app.shutdown().await;
}

/// Re-publishing is paced: an order sent within `reconcile.republish_quiet_secs`
/// is not sent again while its copy may still be on its way (here no worker
/// stores it, as when a worker drains a long backlog), and one pass sends at
/// most `reconcile.republish_max`; the counts say what each pass did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_publishing_is_paced_and_bounded_per_pass() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        quick(s);
        s.reconcile.republish_max = 2;
    })
    .await;
    let voucher = app.on_sale(10).await;
    let users = app.users(5).await;
    for (i, (user, _)) in users.iter().enumerate() {
        let order = fakes::order_id(78, i as u64);
        assert_eq!(scripts::reserve(&app.kv, voucher, *user, order, &[]).await.unwrap().0, Outcome::Accepted);
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let republished = |result: &str| {
        cityhub_testkit::metric(cityhub_core::metrics::RECONCILER_REPUBLISHED, &[&format!("result=\"{result}\"")])
    };
    let mut verdicts = Vec::new();
    for _ in 0..4 {
        verdicts.push(reconcile(&app, voucher).await["verdict"].as_str().unwrap().to_owned());
    }
    assert_eq!(republished("sent"), 5.0, "each order was sent once, however many passes ran");
    assert_eq!(republished("paced"), 2.0 + 4.0 + 5.0, "orders sent lately were left alone");
    assert_eq!(republished("deferred"), 3.0 + 1.0, "the rest waited for the next pass");
    assert_eq!(verdicts[0], "drift", "a pass that could not send all is not repaired: {verdicts:?}");
    assert_eq!(verdicts[2], "repaired", "{verdicts:?}");
    app.shutdown().await;
}
