//! The references the benchmark ratios divide by, each stage measured alone
//! in the same round: the seckill script on the accepted path, a batched
//! send, an empty consumer drain and a raw multi-row INSERT (P2's composed
//! stage limit, 1 / sum of 1/rate), and the worker's own drain rate (P4).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cityhub_core::config::Settings;
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::vouchers::buckets;
use cityhub_core::{OrderId, UserId, VoucherId};
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_platform::mq::ClientRuntime;
use futures::{StreamExt, TryStreamExt};
use sqlx::MySqlPool;

use super::Args;
use crate::flash_sale;

/// Each stage of the accepted path alone, per second.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Stages {
    pub evalsha: f64,
    pub send: f64,
    pub drain: f64,
    pub insert: f64,
}

impl Stages {
    /// What the stages allow in a row: 1 / sum of 1/rate.
    pub fn limit(&self) -> f64 {
        1.0 / [self.evalsha, self.send, self.drain, self.insert].iter().map(|r| 1.0 / r.max(1e-9)).sum::<f64>()
    }
}

/// EVALSHA/s of `seckill.lua` where every call is accepted: a voucher with
/// unbounded stock, a random user each call (redis-benchmark).
pub async fn accepted_evalsha(settings: &Settings, kv: &Kv, args: &Args) -> anyhow::Result<f64> {
    let voucher = VoucherId(u64::from(rand::random::<u32>()) + (1 << 40));
    let hash = kv.keys.seckill_voucher(voucher);
    buckets::preload(kv, voucher.into(), 1_000_000_000, (0, 4_102_444_800_000), 0).await?;
    let rate = super::tools::redis_benchmark(settings, kv, voucher, args).await;
    redis::cmd("DEL").arg(&hash).arg(kv.keys.seckill_buyers(voucher)).query_async::<()>(&mut kv.conn()).await?;
    rate
}

/// Counts what it is given and when the first and last batch came.
#[derive(Default)]
struct Count {
    seen: AtomicUsize,
    span: Mutex<Option<(Instant, Instant)>>,
}

struct Counter(Arc<Count>);

impl BatchHandler for Counter {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let now = Instant::now();
        let mut span = self.0.span.lock().unwrap_or_else(|p| p.into_inner());
        *span = Some(span.map_or((now, now), |(first, _)| (first, now)));
        self.0.seen.fetch_add(batch.len(), Ordering::Relaxed);
        Ack::Done
    }
}

/// Messages/s of order-sized messages through the batching publisher
/// (`concurrency` in flight), then through a consumer that does nothing:
/// (send, drain). Uses a topic and group of its own.
pub async fn send_and_drain(
    settings: &Settings,
    client: &Arc<ClientRuntime>,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, f64)> {
    let mq = &settings.mq;
    let stage = format!("{}_stage_{:08x}", mq.order_topic, rand::random::<u32>());
    let mut producer = cityhub_platform::mq::start_producer(client, mq, &format!("{stage}_p")).await?;
    cityhub_platform::mq::ensure_topic(&producer, &stage, mq.topic_queues).await;
    let publisher = BatchPublisher::spawn(producer.clone(), stage.clone(), BatchConfig::from(mq));
    let sample = OrderMessage {
        order_id: OrderId(u64::MAX >> 1),
        user_id: UserId(1_000_000),
        voucher_id: VoucherId(1_000),
        bucket: 0,
        pay_amount: 100,
        created_at_ms: cityhub_platform::now_ms(),
        request_id: None,
    };
    let body = serde_json::to_vec(&sample)?;
    let started = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| publisher.publish(i.to_string(), body.clone()))
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    let send = n as f64 / started.elapsed().as_secs_f64().max(0.001);

    let count = Arc::new(Count::default());
    let consumer =
        Consumer::start(client, mq, &format!("{stage}_c"), &stage, Arc::new(Counter(Arc::clone(&count)))).await?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while count.seen.load(Ordering::Relaxed) < n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the empty consumer drained {} of {n}",
            count.seen.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    consumer.shutdown().await;
    producer.shutdown().await;
    let (first, last) = count.span.lock().unwrap_or_else(|p| p.into_inner()).expect("batches came");
    Ok((send, n as f64 / (last - first).as_secs_f64().max(0.001)))
}

/// Rows/s the worker stores: from its first stored order of `voucher` to
/// the last, so consumer start-up does not count.
pub async fn drain_rate(db: &MySqlPool, voucher: VoucherId, expected: usize) -> anyhow::Result<f64> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let (mut first, mut base) = (None, 0);
    loop {
        let stored = flash_sale::order_count(db, voucher).await? as usize;
        if first.is_none() && stored > 0 {
            first = Some(Instant::now());
            base = stored;
        }
        if stored >= expected {
            let took = first.map_or(Duration::ZERO, |f| f.elapsed()).as_secs_f64().max(0.001);
            return Ok((expected - base) as f64 / took);
        }
        anyhow::ensure!(Instant::now() < deadline, "the worker stored {stored} of {expected} orders in 300 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

type OrderRow = (u64, u64, u64, String, u64, chrono::DateTime<chrono::Utc>);

/// Rows/s of plain multi-row INSERTs (1000 rows each, one connection) of the
/// same orders into a copy of the table.
pub async fn raw_insert_rate(db: &MySqlPool, voucher: VoucherId) -> anyhow::Result<f64> {
    let rows: Vec<OrderRow> = sqlx::query_as(
        "SELECT id, user_id, voucher_id, status, pay_amount, created_at FROM orders WHERE voucher_id = ?",
    )
    .bind(voucher)
    .fetch_all(db)
    .await?;
    sqlx::query("DROP TABLE IF EXISTS orders_raw").execute(db).await?;
    sqlx::query("CREATE TABLE orders_raw LIKE orders").execute(db).await?;
    let mut conn = db.acquire().await?;
    let started = Instant::now();
    for chunk in rows.chunks(1000) {
        let mut insert = sqlx::QueryBuilder::<sqlx::MySql>::new(
            "INSERT INTO orders_raw (id, user_id, voucher_id, status, pay_amount, created_at) ",
        );
        insert.push_values(chunk, |mut b, r| {
            b.push_bind(r.0).push_bind(r.1).push_bind(r.2).push_bind(&r.3).push_bind(r.4).push_bind(r.5);
        });
        insert.build().execute(&mut *conn).await?;
    }
    let took = started.elapsed().as_secs_f64().max(0.001);
    sqlx::query("DROP TABLE orders_raw").execute(db).await?;
    Ok(rows.len() as f64 / took)
}
