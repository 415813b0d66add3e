//! The close job and the stock-release consumer on real services: only
//! expired unpaid orders close, two sweeps at once close each order once,
//! and a release event delivered twice gives its unit back once.

use cityhub_core::orders::lifecycle::{Move, Moved, StockRelease};
use cityhub_core::{OrderId, Services, VoucherId};
use cityhub_order_worker::jobs::order_close::CloseJob;
use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_platform::outbox::Envelope;
use cityhub_testkit::{eventually, mq_client, sale};
use redis::AsyncCommands;

use crate::harness::{Harness, DRAIN};

async fn status(h: &Harness, order: OrderId) -> String {
    sqlx::query_scalar("SELECT status FROM orders WHERE id = ?").bind(order).fetch_one(&h.db).await.unwrap()
}

/// The value of `cityhub_stock_releases_total{result}` in this process.
fn releases(result: &str) -> u64 {
    let series = format!("{}{{result=\"{result}\"}} ", cityhub_core::metrics::STOCK_RELEASES);
    let rendered = cityhub_core::metrics::install().render();
    rendered.lines().find_map(|l| l.strip_prefix(&series)?.parse().ok()).unwrap_or(0)
}

async fn redis_stock(h: &Harness, voucher: VoucherId) -> i64 {
    h.kv.conn().hget(cityhub_core::kv::CityKeys::seckill_voucher(&h.kv.keys, voucher), "stock").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_close_sweeps_at_once_close_each_expired_unpaid_order_once_and_a_release_twice_gives_one_unit() {
    // Batches of 3, so a sweep reads several; the scheduled sweep stays out of the way.
    let h = Harness::start(true, |s| {
        s.orders.close_batch = 3;
        s.orders.close_cron = "0 0 0 1 1 *".into(); // not during the test
    })
    .await;
    let s = h.env.settings.clone();
    let voucher = h.voucher(10).await;
    let mut orders = Vec::new();
    for user in h.users(8).await {
        orders.push(h.buy(user, voucher).await.unwrap().order_id);
    }
    assert_eq!(h.wait_for_orders(voucher, 8, DRAIN).await, 8);
    // Five orders were stored an hour ago, one of them paid; three are fresh.
    for id in &orders[..5] {
        sqlx::query("UPDATE orders SET stored_at = stored_at - INTERVAL 1 HOUR WHERE id = ?")
            .bind(id)
            .execute(&h.db)
            .await
            .unwrap();
    }
    sqlx::query("UPDATE orders SET status = 'paid' WHERE id = ?").bind(orders[0]).execute(&h.db).await.unwrap();

    // Two workers' close jobs, each on services of its own.
    let worker = || CloseJob::new(&Services::on(&s, h.db.clone(), h.kv.clone()));
    let (a, b) = (worker(), worker());
    let (x, y) = tokio::join!(a.sweep(), b.sweep());
    assert_eq!(x.unwrap() + y.unwrap(), 4, "the optimistic UPDATE lets exactly one sweep close each order");
    assert_eq!(status(&h, orders[0]).await, "paid");
    for id in &orders[1..5] {
        assert_eq!(status(&h, *id).await, "closed");
    }
    for id in &orders[5..] {
        assert_eq!(status(&h, *id).await, "unpaid");
    }
    let events: Vec<(String,)> = sqlx::query_as("SELECT msg_key FROM outbox WHERE topic = ? ORDER BY msg_key")
        .bind(&s.orders.release_topic)
        .fetch_all(&h.db)
        .await
        .unwrap();
    let mut closed: Vec<String> = orders[1..5].iter().map(OrderId::to_string).collect();
    closed.sort();
    assert_eq!(events.into_iter().map(|(k,)| k).collect::<Vec<_>>(), closed, "one release event per closed order");
    assert_eq!(a.sweep().await.unwrap(), 0);
    sale::assert_stock_agrees(&h.db, &h.kv, voucher).await;
    assert_eq!(h.db_stock(voucher).await, 6);

    // A close whose process died right after its commit: only the relayed
    // event gives the unit back in Redis; a second copy changes nothing.
    let lifecycle = h.services.lifecycle.clone();
    let mut tx = h.db.begin().await.unwrap();
    let Moved::Done { release: Some(event) } = lifecycle.apply_in(&mut tx, orders[5], Move::Close).await.unwrap()
    else {
        panic!("the close did not change the order");
    };
    tx.commit().await.unwrap();
    assert_eq!(redis_stock(&h, voucher).await, 6, "not given back before the event arrives");
    assert!(eventually(DRAIN, || async { redis_stock(&h, voucher).await == 7 }).await, "the event never gave it back");
    // The four closes above gave back at once; their relayed events were duplicates.
    assert!(eventually(DRAIN, || async { releases("duplicate") == 4 }).await, "{}", releases("duplicate"));
    assert_eq!(releases("released"), 1);

    let producer = cityhub_platform::mq::start_producer(&mq_client(), &s.mq, &format!("{}_dup", s.mq.producer_group))
        .await
        .unwrap();
    let copy = BatchPublisher::spawn(producer, s.orders.release_topic.clone(), BatchConfig::from(&s.mq));
    let body =
        serde_json::to_vec(&Envelope::<StockRelease> { event_id: event.event_id, payload: event.payload }).unwrap();
    copy.publish(orders[5].to_string(), body).await.unwrap();
    assert!(eventually(DRAIN, || async { releases("duplicate") == 5 }).await, "{}", releases("duplicate"));
    assert_eq!(releases("released"), 1, "the copy gave nothing back");
    assert_eq!(redis_stock(&h, voucher).await, 7, "the copy gave nothing back");
    sale::assert_stock_agrees(&h.db, &h.kv, voucher).await;
    h.shutdown().await;
}
