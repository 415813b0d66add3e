//! The order consumer over RocketMQ: idempotent on redelivery, parks only
//! what a rule refuses (and what fails to its last delivery), retries every
//! other failure, never writes an order whose reservation was released, and
//! stores accepted orders even when Redis lost their reservations.

use std::collections::HashSet;
use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::seckill::scripts::BuyerEntry;
use cityhub_core::seckill::scripts::{self, Revoke};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::seckill::{Outcome, SeckillError};
use cityhub_core::{OrderId, UserId, VoucherId};
use cityhub_platform::mq::progress::Progress;
use cityhub_testkit::{eventually, fakes, logs, mq_client};

use crate::harness::{Harness, DRAIN};
use crate::outage::Outage;

fn order(order_id: OrderId, user_id: UserId, voucher_id: VoucherId) -> OrderMessage {
    OrderMessage {
        order_id,
        user_id,
        voucher_id,
        bucket: 0,
        pay_amount: 5000,
        created_at_ms: cityhub_platform::now_ms(),
        request_id: None,
    }
}

/// `cityhub_accepted_orders_parked_total` over every kind, from this test's
/// process (each test runs in a process of its own).
fn parked_after_202() -> f64 {
    cityhub_testkit::metric(cityhub_core::metrics::PARKED_ACCEPTED_ORDERS, &[])
}

/// [`parked_after_202`] once a parked row was seen: the counter moves just
/// after the row commits, so it is read once it moved (or after 10 s).
async fn parked_after_202_counted() -> f64 {
    eventually(Duration::from_secs(10), || async { parked_after_202() > 0.0 }).await;
    parked_after_202()
}

/// Makes every insert into `orders` fail with a non-transient error
/// (SQLSTATE 45000, MySQL error 1644).
async fn break_order_inserts(h: &Harness) {
    sqlx::raw_sql(
        "CREATE TRIGGER orders_broken BEFORE INSERT ON orders FOR EACH ROW \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected fault'",
    )
    .execute(&h.db)
    .await
    .unwrap();
}

async fn repair_order_inserts(h: &Harness) {
    sqlx::raw_sql("DROP TRIGGER orders_broken").execute(&h.db).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_order_message_twice_stores_one_row_and_decrements_stock_once() {
    let h = Harness::start(true, |_| {}).await;
    let voucher = h.voucher(10).await;
    let user = h.users(1).await[0];
    let won = h.buy(user, voucher).await.unwrap();
    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    let redelivered_before = h.env.order_messages("redelivered");

    let replay = stored_message(&h, won.order_id, user, voucher).await;
    let publisher = h.publisher().await;
    for _ in 0..2 {
        publisher.publish(won.order_id.to_string(), serde_json::to_vec(&replay).unwrap()).await.unwrap();
    }

    let replayed = || async { h.env.order_messages("redelivered") >= redelivered_before + 2 };
    assert!(eventually(DRAIN, replayed).await, "the worker never saw the replayed messages");
    assert_eq!(h.order_count(voucher).await, 1);
    assert_eq!(h.db_stock(voucher).await, 9);
    assert_eq!(h.env.order_messages("stored"), 1);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_new_redelivered_conflicting_and_doubled_ids_stores_each_new_id_once_and_takes_only_their_stock() {
    use cityhub_core::orders::store::{store_batch, StoreError, Stored};
    let h = Harness::start(false, |_| {}).await;
    let (voucher, other) = (h.voucher(10).await, h.voucher(10).await);
    let u = h.users(6).await;
    let ids: Vec<OrderId> = (0..7).map(|n| fakes::order_id(91, n)).collect();
    let id = |n: usize| ids[n];

    // All new: the whole batch in one INSERT.
    let first = [order(id(1), u[0], voucher), order(id(2), u[1], voucher)];
    let stored = store_batch(&h.db, &first).await.unwrap();
    assert_eq!(stored, Stored { inserted: HashSet::from([id(1), id(2)]), ..Stored::default() });
    assert_eq!(h.db_stock(voucher).await, 8);

    // A redelivery, an id stored for another buyer, an id twice in the batch
    // (the second copy another buyer's) and two new orders on two vouchers.
    let mixed = [
        order(id(1), u[0], voucher),
        order(id(2), u[2], voucher),
        order(id(3), u[3], voucher),
        order(id(3), u[4], voucher),
        order(id(4), u[5], other),
    ];
    let stored = store_batch(&h.db, &mixed).await.unwrap();
    assert_eq!(stored.inserted, HashSet::from([id(3), id(4)]));
    assert_eq!(stored.duplicates, 1);
    assert_eq!(stored.conflicts, HashSet::from([(id(2), u[2], voucher), (id(3), u[4], voucher)]));
    assert_eq!((h.order_count(voucher).await, h.db_stock(voucher).await), (3, 7));
    assert_eq!((h.order_count(other).await, h.db_stock(other).await), (1, 9));

    // A buyer's second live order is a refusal, and the batch writes nothing.
    let again = [order(id(5), u[5], other), order(id(6), u[0], voucher)];
    assert!(matches!(store_batch(&h.db, &again).await, Err(StoreError::DuplicateBuyer)));
    assert_eq!((h.order_count(other).await, h.db_stock(other).await), (1, 9));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_given_overlapping_batches_at_once_store_each_order_once_and_take_its_unit_once() {
    use cityhub_core::orders::store::StoreError;
    use cityhub_order_worker::combiner::Combiner;
    let h = Harness::start(false, |_| {}).await;
    let voucher = h.voucher(200).await;
    let users = h.users(120).await;
    let orders: Vec<OrderMessage> =
        users.iter().enumerate().map(|(n, &u)| order(fakes::order_id(92, n as u64), u, voucher)).collect();
    // 40 batches of 30 orders from a sliding window: each order is in ten
    // batches, and the batches of both writers' transactions overlap.
    let batches: Vec<Vec<OrderMessage>> =
        (0..40).map(|i| orders.iter().cycle().skip(i * 3).take(30).cloned().collect()).collect();
    let combiner = Combiner::spawn(h.db.clone(), 64, 2);
    let store = |batch: &Vec<OrderMessage>| {
        let (combiner, batch) = (&combiner, batch.clone());
        async move {
            // As the order handler does: a database error (a deadlock
            // between the two writers) is tried again.
            loop {
                match combiner.store(batch.clone()).await {
                    Err(StoreError::Db(_)) => tokio::time::sleep(Duration::from_millis(20)).await,
                    other => return other.unwrap(),
                }
            }
        }
    };
    let outcomes = futures::future::join_all(batches.iter().map(store)).await;

    let mut inserted: Vec<OrderId> = outcomes.iter().flat_map(|s| s.inserted.iter().copied()).collect();
    let duplicates: usize = outcomes.iter().map(|s| s.duplicates).sum();
    assert!(outcomes.iter().all(|s| s.conflicts.is_empty()));
    inserted.sort();
    let credited = inserted.len();
    inserted.dedup();
    assert_eq!((credited, inserted.len()), (120, 120), "every order is credited to exactly one batch");
    assert_eq!(duplicates, 40 * 30 - 120);
    assert_eq!((h.order_count(voucher).await, h.db_stock(voucher).await), (120, 80));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_messages_are_parked_and_do_not_block_the_queue() {
    let h = Harness::start(true, |_| {}).await;
    let voucher = h.voucher(10).await;
    let publisher = h.publisher().await;
    // Unparsable, and an order whose reservation was released (its shopper got 503).
    publisher.publish("junk".into(), b"{not json".to_vec()).await.unwrap();
    assert_eq!(scripts::reserve(&h.kv, voucher, UserId(7), OrderId(42), &[]).await.unwrap().0, Outcome::Accepted);
    assert_eq!(scripts::revoke(&h.kv, voucher, UserId(7), OrderId(42)).await.unwrap(), Revoke::Revoked);
    publisher.publish("42".into(), serde_json::to_vec(&order(OrderId(42), UserId(7), voucher)).unwrap()).await.unwrap();
    // A real order after them still goes through.
    let user = h.users(1).await[0];
    assert!(h.buy(user, voucher).await.is_ok());

    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    assert!(eventually(DRAIN, || async { h.parked().await.len() == 2 }).await);
    let mut rows = h.parked().await;
    rows.sort_by(|a, b| a.kind.cmp(&b.kind));
    assert_eq!((rows[0].kind.as_str(), rows[0].order_id, rows[0].accepted), ("revoked", Some(42), false));
    assert_eq!(rows[1].kind, "unparsable", "{rows:?}");
    let forged_rows: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE id = 42").fetch_one(&h.db).await.unwrap();
    assert_eq!(forged_rows, 0);
    assert_eq!(h.db_stock(voucher).await, 9);
    assert_eq!(parked_after_202(), 0.0, "neither parked message had been accepted");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_message_of_an_order_told_503_is_revoked_even_after_its_buyer_bought_again() {
    let h = Harness::start(true, |_| {}).await;
    let voucher = h.voucher(10).await;
    let user = h.users(1).await[0];
    let (told_503, bought_again) = (fakes::order_id(79, 0), fakes::order_id(79, 1));
    // The publish of the first order failed as far as the API knew (503),
    // the shopper bought again, and the broker delivers the first one late.
    assert_eq!(scripts::reserve(&h.kv, voucher, user, told_503, &[]).await.unwrap().0, Outcome::Accepted);
    assert_eq!(scripts::revoke(&h.kv, voucher, user, told_503).await.unwrap(), Revoke::Revoked);
    assert_eq!(scripts::reserve(&h.kv, voucher, user, bought_again, &[]).await.unwrap().0, Outcome::Accepted);
    let publisher = h.publisher().await;
    for id in [bought_again, told_503] {
        publisher.publish(id.to_string(), serde_json::to_vec(&order(id, user, voucher)).unwrap()).await.unwrap();
    }

    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    assert!(eventually(DRAIN, || async { h.parked().await.len() == 1 }).await, "{:?}", h.parked().await);
    let rows = h.parked().await;
    assert_eq!((rows[0].kind.as_str(), rows[0].order_id, rows[0].accepted), ("revoked", Some(told_503.get()), false));
    let stored: Vec<OrderId> =
        sqlx::query_scalar("SELECT id FROM orders WHERE voucher_id = ?").bind(voucher).fetch_all(&h.db).await.unwrap();
    assert_eq!(stored, vec![bought_again]);
    assert_eq!(parked_after_202(), 0.0, "the parked order's shopper was told 503");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_whose_insert_fails_after_confirm_is_stored_once_the_fault_clears() {
    let h = Harness::start(true, |s| s.worker.db_attempts = 2).await;
    let voucher = h.voucher(5).await;
    let user = h.users(1).await[0];
    break_order_inserts(&h).await;

    let won = h.buy(user, voucher).await.unwrap();
    let held = || async { h.env.held_batches() >= 1 };
    assert!(eventually(DRAIN, held).await, "the failed batch was not tried again");
    assert!(
        matches!(h.buyers(voucher).await[&user], BuyerEntry::Confirmed(_)),
        "the reservation was confirmed before the insert"
    );
    assert_eq!(h.order_count(voucher).await, 0);
    assert!(h.parked().await.is_empty(), "a database error is not a reason to park");

    repair_order_inserts(&h).await;
    assert_eq!(h.wait_for_orders(voucher, 1, Duration::from_secs(90)).await, 1, "a try in place stored it");
    h.assert_invariants(voucher, &[won]).await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_failing_to_its_last_delivery_is_parked_counted_and_replayed_once_fixed() {
    let h = Harness::start(true, |s| {
        s.worker.db_attempts = 1;
        s.mq.give_up_after_secs = Duration::from_secs(2);
    })
    .await;
    let voucher = h.voucher(5).await;
    let user = h.users(1).await[0];
    break_order_inserts(&h).await;

    let won = h.buy(user, voucher).await.unwrap();
    let landed = || async { !h.parked().await.is_empty() };
    assert!(eventually(Duration::from_secs(90), landed).await, "the message never reached the parking lot");
    let rows = h.parked().await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].kind.as_str(), rows[0].order_id, rows[0].accepted),
        ("gave_up", Some(won.order_id.get()), true)
    );
    assert!(rows[0].reason.contains("injected fault"), "{}", rows[0].reason);
    assert_eq!(parked_after_202_counted().await, 1.0, "an accepted order parked is counted for alerting");

    repair_order_inserts(&h).await;
    let producer = cityhub_platform::mq::start_producer(&mq_client(), &h.env.settings.mq, "replay").await.unwrap();
    cityhub_platform::parking::replay(&h.db, &producer, rows[0].id).await.unwrap();
    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    assert!(h.parked().await[0].replayed_at.is_some());
    assert!(cityhub_platform::parking::replay(&h.db, &producer, rows[0].id).await.is_err(), "replayed only once");
    h.assert_invariants(voucher, &[won]).await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyers_hash_lost_while_orders_are_in_flight_loses_no_accepted_order_and_oversells_nothing() {
    let mut h = Harness::start(false, |_| {}).await;
    let voucher = h.voucher(20).await;
    let users = h.users(30).await;
    let tries = futures::future::join_all(users.iter().map(|&u| h.buy(u, voucher))).await;
    let sold: Vec<_> = tries.into_iter().filter_map(Result::ok).collect();
    assert_eq!(sold.len(), 20);

    // Redis loses the buyers (evicted, flushed, failed over) before the worker ran.
    let _: () = redis::AsyncCommands::del(&mut h.kv.conn(), h.kv.keys.seckill_buyers(voucher)).await.unwrap();
    h.start_worker().await;

    assert_eq!(h.wait_for_orders(voucher, 20, DRAIN).await, 20);
    let restored = || async { h.buyers(voucher).await.len() == 20 };
    assert!(eventually(Duration::from_secs(30), restored).await, "buyer entries were not written back");
    h.assert_invariants(voucher, &sold).await;
    // The written-back entries still stop a second purchase: the entry is
    // checked before stock, so a buyer without one would be told sold out.
    let again = h.buy(sold[0].user_id, voucher).await;
    assert!(matches!(again, Err(SeckillError::Refused(Outcome::AlreadyBought))), "{again:?}");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_orders_forced_onto_one_id_are_both_visible_one_stored_one_parked_as_a_conflict() {
    let h = Harness::start(true, |_| {}).await;
    let voucher = h.voucher(5).await;
    let users = h.users(2).await;
    let (a, b) = (users[0], users[1]);
    // A fresh id: the worker's reconciler leaves reservations younger than
    // its grace period alone (an ancient one it would publish again).
    let id = fakes::order_id(77, 0);
    assert_eq!(scripts::reserve(&h.kv, voucher, a, id, &[]).await.unwrap().0, Outcome::Accepted);
    assert_eq!(scripts::reserve(&h.kv, voucher, b, id, &[]).await.unwrap().0, Outcome::Accepted);
    let publisher = h.publisher().await;
    publisher.publish(id.to_string(), serde_json::to_vec(&order(id, a, voucher)).unwrap()).await.unwrap();
    publisher.publish(id.to_string(), serde_json::to_vec(&order(id, b, voucher)).unwrap()).await.unwrap();

    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    assert!(eventually(DRAIN, || async { h.parked().await.len() == 1 }).await);
    let owner: UserId =
        sqlx::query_scalar("SELECT user_id FROM orders WHERE id = ?").bind(id).fetch_one(&h.db).await.unwrap();
    let rows = h.parked().await;
    assert_eq!((rows[0].kind.as_str(), rows[0].order_id, rows[0].accepted), ("id_conflict", Some(id.get()), true));
    let parked_order: OrderMessage = serde_json::from_slice(&rows[0].body).unwrap();
    assert_eq!(HashSet::from([owner, parked_order.user_id]), HashSet::from([a, b]), "both orders are accounted for");
    assert_eq!(parked_after_202_counted().await, 1.0);
    assert_eq!(h.db_stock(voucher).await, 4, "the conflict took no stock");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_that_cannot_reach_redis_stays_with_the_worker_until_redis_answers() {
    let mut h = Harness::start(false, |_| {}).await;
    let voucher = h.voucher(5).await;
    let user = h.users(1).await[0];
    let mut through = h.env.settings.redis.clone();
    let outage = Outage::start(through.url.expose().trim_start_matches("redis://").trim_end_matches('/').into()).await;
    through.url = cityhub_core::config::Secret::new(format!("redis://{}", outage.addr));
    h.start_worker_on(cityhub_core::connect_redis(&through).await.unwrap()).await;

    let s = &h.env.settings.mq;
    let progress = Progress::start(&mq_client(), s, &s.order_consumer_group, &s.order_topic).await.unwrap();

    // Redis is gone for the worker (not for the seckill rules) when the order arrives.
    outage.cut();
    let won = h.buy(user, voucher).await.unwrap();
    let mark = progress.mark().await.unwrap().expect("the order topic's queues");
    let tried = || async { logs::contains(&["unreachable; trying the batch again"]) };
    assert!(eventually(DRAIN, tried).await, "the worker never tried the batch");
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Handed back, it would wait in the broker's schedule topic where the
    // group's committed offsets do not count it, and a rebuild of lost keys could resell its unit.
    assert!(h.env.held_batches() >= 1, "the batch was not held in place");
    assert_eq!(h.order_count(voucher).await, 0);
    // The "nothing in flight" signal sees the held message, well past the
    // client's offset flush (5 s).
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(progress.behind(&mark).await.unwrap(), 1, "the group committed past a message it has not stored");

    outage.restore();
    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    let caught_up = || async { progress.behind(&mark).await.unwrap() == 0 };
    assert!(eventually(DRAIN, caught_up).await, "the group never committed the stored order");
    h.assert_invariants(voucher, &[won]).await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_copy_of_a_stored_order_whose_buyer_holds_another_order_is_not_parked() {
    late_copy_of_a_stored_order_is_not_parked(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_copy_of_a_stored_order_released_after_it_was_stored_is_not_parked() {
    // Stored in a pause (MySQL's guards decided), then released by its API.
    late_copy_of_a_stored_order_is_not_parked(true).await;
}

/// Stores an order, moves its buyer's entry on (to another order, or to the
/// order's release), and delivers a late copy: counted as redelivered.
async fn late_copy_of_a_stored_order_is_not_parked(released: bool) {
    let h = Harness::start(true, |_| {}).await;
    let voucher = h.voucher(10).await;
    let user = h.users(1).await[0];
    let won = h.buy(user, voucher).await.unwrap();
    assert_eq!(h.wait_for_orders(voucher, 1, DRAIN).await, 1);
    let redelivered_before = h.env.order_messages("redelivered");
    let mut conn = h.kv.conn();
    let entry = if released {
        // What seckill_revoke.lua writes: the tombstone, and the id in the revoked set.
        let revoked = h.kv.keys.seckill_revoked(voucher);
        let _: () = redis::AsyncCommands::sadd(&mut conn, revoked, won.order_id).await.unwrap();
        BuyerEntry::Released(won.order_id).to_string()
    } else {
        // The buyer's entry holds another order (theirs was closed and they bought again).
        BuyerEntry::Confirmed(fakes::order_id(78, 0)).to_string()
    };
    let _: () = redis::AsyncCommands::hset(&mut conn, h.kv.keys.seckill_buyers(voucher), user, entry).await.unwrap();

    let late = stored_message(&h, won.order_id, user, voucher).await;
    h.publisher().await.publish(won.order_id.to_string(), serde_json::to_vec(&late).unwrap()).await.unwrap();

    let seen = || async { h.env.order_messages("redelivered") > redelivered_before };
    assert!(eventually(DRAIN, seen).await, "the worker never counted the late copy");
    assert!(h.parked().await.is_empty(), "a stored order was parked: {:?}", h.parked().await);
    assert_eq!(parked_after_202(), 0.0);
    h.shutdown().await;
}

/// The message of a stored order, as its API published it.
async fn stored_message(h: &Harness, order_id: OrderId, user: UserId, voucher: VoucherId) -> OrderMessage {
    let (pay_amount, created_at): (u64, chrono::DateTime<chrono::Utc>) =
        sqlx::query_as("SELECT pay_amount, created_at FROM orders WHERE id = ?")
            .bind(order_id)
            .fetch_one(&h.db)
            .await
            .unwrap();
    OrderMessage { created_at_ms: created_at.timestamp_millis() as u64, pay_amount, ..order(order_id, user, voucher) }
}
