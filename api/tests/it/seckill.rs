//! The seckill path end to end: Redis decides, RocketMQ carries, MySQL stores.

use std::collections::HashSet;
use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::seckill::scripts::BuyerEntry;
use cityhub_core::{OrderId, UserId};
use cityhub_testkit::logs;
use futures::future::join_all;

use crate::app::{accepted, eventually, Options, TestApp};

const DRAIN: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stampede_of_200_users_on_50_units_sells_exactly_50_and_everything_agrees() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(50).await;
    let users = app.users(200).await;

    let answers = join_all(users.iter().map(|(_, token)| app.seckill(token, voucher))).await;

    let accepted_ids: Vec<OrderId> = answers
        .iter()
        .filter(|(status, _)| *status == 202)
        .map(|(_, body)| body["order_id"].as_str().unwrap().parse().unwrap())
        .collect();
    let sold_out = answers.iter().filter(|(s, b)| *s == 409 && b["code"] == "sold_out").count();
    assert_eq!(accepted_ids.len(), 50, "answers: {answers:?}");
    let others: Vec<_> = answers.iter().filter(|(s, b)| *s != 202 && b["code"] != "sold_out").collect();
    assert_eq!(sold_out, 150, "every other request is a clean sold-out: {others:?}");

    assert_eq!(app.wait_for_orders(voucher, 50, DRAIN).await, 50);
    let stored: Vec<(OrderId, UserId)> = sqlx::query_as("SELECT id, user_id FROM orders WHERE voucher_id = ?")
        .bind(voucher)
        .fetch_all(&app.db)
        .await
        .unwrap();
    let stored_ids: HashSet<OrderId> = stored.iter().map(|(id, _)| *id).collect();
    let stored_users: HashSet<UserId> = stored.iter().map(|(_, u)| *u).collect();
    assert_eq!(stored_ids, accepted_ids.iter().copied().collect(), "exactly the accepted orders are stored");
    assert_eq!(stored_users.len(), 50, "no user twice");
    assert_eq!(app.db_stock(voucher).await, 0);
    assert_eq!(app.redis_stock(voucher).await, 0);
    let buyers = app.buyers(voucher).await;
    assert_eq!(buyers.keys().copied().collect::<HashSet<_>>(), stored_users, "Redis buyers are the DB buyers");
    assert!(
        buyers.values().all(|v| matches!(v, BuyerEntry::Confirmed(_))),
        "every stored order was confirmed: {buyers:?}"
    );
    app.assert_invariants(voucher, &accepted(&users, &answers)).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_broker_is_unreachable_the_shopper_gets_503_and_can_buy_once_it_is_back() {
    // The app's name server address leads nowhere until a forwarder to the
    // real name server opens on it.
    let spot = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let namesrv_addr = spot.local_addr().unwrap().to_string();
    drop(spot);
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.mq.namesrv_addr = namesrv_addr.clone();
        s.mq.send_timeout_ms = Duration::from_millis(1000);
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (user, token) = app.users(1).await.pop().unwrap();

    let (status, body) = app.seckill(&token, voucher).await;

    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "order_queue_unavailable");
    assert!(body["message"].as_str().unwrap().len() > 10);
    assert_eq!(app.redis_stock(voucher).await, 5, "stock restored");
    let entry = app.buyers(voucher).await.remove(&user);
    assert!(
        matches!(entry, Some(BuyerEntry::Released(_))),
        "the reservation is a tombstone, not a live buyer: {entry:?}"
    );

    // The broker comes back: the same shopper buys, nothing blocks them.
    let real = std::env::var("CITYHUB_TEST_NAMESRV").unwrap_or_else(|_| "127.0.0.1:9876".into());
    let listener = tokio::net::TcpListener::bind(&namesrv_addr).await.unwrap();
    let _forwarder = crate::proxy::Proxy::start(listener, real, Vec::new()).await;
    let started = std::time::Instant::now();
    let last = loop {
        let answer = app.seckill(&token, voucher).await;
        if answer.0 == 202 || started.elapsed() > Duration::from_secs(60) {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(last.0, 202, "never accepted once the broker was back: {last:?}");
    assert_eq!(app.redis_stock(voucher).await, 4);
    let order_id: OrderId = last.1["order_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        app.buyers(voucher).await[&user],
        BuyerEntry::Reserved(order_id),
        "one live reservation, for the accepted order"
    );
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reserve_whose_reply_is_lost_leaves_no_stranded_unit() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redis = std::env::var("CITYHUB_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let redis = redis.trim_start_matches("redis://").trim_end_matches('/').to_owned();
    let sha = cityhub_core::seckill::scripts::reserve_sha().as_bytes().to_vec();
    let proxy = crate::proxy::Proxy::start(listener, redis, sha).await;
    let app = TestApp::spawn_with(Options { worker: true }, |s| {
        s.redis.url = cityhub_core::config::Secret::new(format!("redis://{}", proxy.addr));
        s.redis.cluster_nodes.clear();
    })
    .await;
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;

    proxy.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = app.seckill(&users[0].1, voucher).await;
    assert!(!proxy.armed.load(std::sync::atomic::Ordering::SeqCst), "the reserve call went through the proxy");

    assert_eq!((status, body["code"].as_str()), (503, Some("cache_unavailable")), "{body}");
    assert_eq!(app.redis_stock(voucher).await, 5, "the unit the lost reply reserved is back");
    let entry = app.buyers(voucher).await.remove(&users[0].0);
    assert!(entry.is_none_or(|e| e.live_order().is_none()), "no live reservation is left: {entry:?}");
    // Both shoppers can buy, and the sale adds up.
    let answers = vec![app.seckill(&users[0].1, voucher).await, app.seckill(&users[1].1, voucher).await];
    assert!(answers.iter().all(|(s, _)| *s == 202), "{answers:?}");
    assert_eq!(app.wait_for_orders(voucher, 2, DRAIN).await, 2);
    app.assert_invariants(voucher, &accepted(&users, &answers)).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_or_odd_request_ids_are_replaced_and_cannot_fail_a_batch() {
    let app = TestApp::spawn().await;
    let voucher = app.on_sale(20).await;
    let users = app.users(20).await;
    // A head of 400 KB is refused before it is read (`http.max_header_bytes`).
    let r = app.http.get(app.url("/healthz")).header("x-request-id", "a".repeat(400 * 1024)).send().await.unwrap();
    assert_eq!(r.status(), 431);
    let huge = "a".repeat(12 * 1024);

    // Twenty 12 KB ids in one publish window would put 240 KB of ids in a batch.
    let (app_ref, huge_ref) = (&app, &huge);
    let answers = join_all(users.iter().map(|(_, token)| async move {
        let (app, huge) = (app_ref, huge_ref);
        let r = app
            .http
            .post(app.url(&format!("/vouchers/{voucher}/seckill")))
            .bearer_auth(token)
            .header("x-request-id", huge)
            .send()
            .await
            .unwrap();
        let id = r.headers()["x-request-id"].to_str().unwrap().to_owned();
        (r.status().as_u16(), r.json::<serde_json::Value>().await.unwrap(), id)
    }))
    .await;

    for (status, body, id) in &answers {
        assert_eq!(*status, 202, "{body}");
        assert!(id.len() <= 64 && *id != huge, "a generated id replaces the client's");
    }
    let (status, _) = app.seckill(&users[0].1, voucher).await;
    assert_eq!(status, 409);
    for odd in ["has spaces", "semi;colon", &"x".repeat(65)] {
        let r = app.http.get(app.url("/healthz")).header("x-request-id", odd).send().await.unwrap();
        assert_ne!(r.headers()["x-request-id"], odd);
    }
    let kept = "abc-DEF_1.2";
    let r = app.http.get(app.url("/healthz")).header("x-request-id", kept).send().await.unwrap();
    assert_eq!(r.headers()["x-request-id"], kept, "a well-formed id is kept");

    assert_eq!(app.wait_for_orders(voucher, 20, DRAIN).await, 20);
    let (_, body, id) = &answers[0];
    let order = format!("order_id={}", body["order_id"].as_str().unwrap());
    assert!(
        eventually(DRAIN, || async { logs::contains(&[&order, &format!("request_id={id}")]) }).await,
        "the worker logs the replacement id"
    );
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
    let sold_out_for = app.env.settings.seckill.sold_out_cache_ms;
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
        s.mq.send_timeout_ms = Duration::from_millis(4000);
    })
    .await;
    let voucher = app.on_sale(5).await;
    let (_, token) = app.users(1).await.pop().unwrap();
    let impatient = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();

    let sent = impatient.post(app.url(&format!("/vouchers/{voucher}/seckill"))).bearer_auth(&token).send().await;
    assert!(sent.is_err_and(|e| e.is_timeout()), "the shopper hung up");
    assert_eq!(app.redis_stock(voucher).await, 4, "the unit is reserved while the publish is pending");

    let released = || async {
        app.redis_stock(voucher).await == 5 && app.buyers(voucher).await.values().all(|e| e.live_order().is_none())
    };
    assert!(eventually(Duration::from_secs(15), released).await, "the reservation was never released");
    app.shutdown().await;
}

/// The flood of the security review: 2,000 made-up voucher ids from one
/// token. Ids above the highest voucher id are refused before any lookup,
/// so MySQL sees a handful of small queries, while a real voucher still
/// sells.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_voucher_ids_do_not_reach_mysql() {
    use futures::StreamExt;
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(5).await;
    let users = app.users(1).await;
    let token = &users[0].1;
    let loads = || async {
        let text = app.http.get(app.ops_url("/metrics")).send().await.unwrap().text().await.unwrap();
        let rebuilds = ["ok", "failed"].iter().filter_map(|r| {
            let labels = [r#"cache="vouchers""#, &format!(r#"result="{r}""#)];
            cityhub_platform::metrics::sample(&text, "cityhub_cache_rebuilds_total", &labels)
        });
        let bound = cityhub_platform::metrics::sample(&text, "cityhub_voucher_id_bound_reads_total", &[]);
        rebuilds.chain(bound).sum::<f64>()
    };
    let before = loads().await;
    let ids: Vec<u64> =
        (1..=2000u64).map(|i| 1_000_000 + i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 1_000_000_000_000).collect();
    let shopper = &app;
    let statuses: Vec<u16> = futures::stream::iter(ids)
        .map(|id| async move { shopper.seckill(token, id).await.0 })
        .buffer_unordered(32)
        .collect()
        .await;
    assert!(statuses.iter().all(|s| *s == 404), "made-up ids are not found");
    let reached = loads().await - before;
    assert!(reached < 100.0, "{reached} made-up ids reached MySQL");
    let (status, body) = app.seckill(token, voucher).await;
    assert_eq!(status, 202, "{body}");
    app.shutdown().await;
}

/// A reservation is answered 202 only while the Redis copy it was made in
/// is still current: its message may be stored long after (a slow broker, a
/// full batch), and by then Redis may have been replaced and the sale
/// rebuilt from MySQL, which waits only `CONFIRMED_WITHIN` for such answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reservation_whose_redis_copy_was_replaced_before_its_message_was_stored_is_not_answered_202() {
    // Every message waits 2.5 s in its batch: longer than the confirmation
    // window, so each answer must confirm its copy again.
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.mq.batch_linger_ms = Duration::from_millis(2500);
        s.mq.publish_wait_max_ms = Duration::from_millis(5000);
    })
    .await;
    let voucher = app.on_sale(10).await;
    let users = app.users(2).await;

    // The copy stays: the slow answer is still a 202.
    let (status, body) = app.seckill(&users[0].1, voucher).await;
    assert_eq!(status, 202, "{body}");

    // The copy is replaced (as a restart's first caller adopts a fresh
    // generation) after the reservation and before its message is stored.
    let buyers = CityKeys::seckill_buyers(&app.kv.keys, voucher);
    let mark = app.kv.generation.mark_for(&CityKeys::seckill_voucher(&app.kv.keys, voucher));
    let user = users[1].0.to_string();
    let replace = async {
        let reserved = eventually(Duration::from_secs(20), || async {
            let entry: Option<String> = redis::AsyncCommands::hget(&mut app.kv.conn(), &buyers, &user).await.unwrap();
            entry.is_some()
        })
        .await;
        assert!(reserved, "the second shopper's unit was never reserved");
        let _: () = redis::AsyncCommands::hset(&mut app.kv.conn(), &mark, "gen", "replaced").await.unwrap();
    };
    let ((status, body), ()) = tokio::join!(app.seckill(&users[1].1, voucher), replace);
    assert_eq!((status, body["code"].as_str()), (503, Some("sale_paused")), "{body}");
    app.shutdown().await;
}
