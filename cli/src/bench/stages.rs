//! The references the benchmark ratios divide by, each stage measured alone
//! in the same round: the seckill script on the accepted path, a batched
//! send, an empty consumer drain and a raw multi-row INSERT (P2's composed
//! stage limit, 1 / sum of 1/rate), the worker's own drain rate (P4), and
//! each consumer mode's drain of the same backlog.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cityhub_core::config::{MqSettings, Settings};
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
        in_a_row(&[self.evalsha, self.send, self.drain, self.insert])
    }

    /// [`Stages::limit`] with one more stage in the row: `http`, the load
    /// generator and the API's HTTP with nothing behind them.
    pub fn limit_with_http(&self, http: f64) -> f64 {
        in_a_row(&[self.evalsha, self.send, self.drain, self.insert, http])
    }
}

/// What stages allow in a row: 1 / sum of 1/rate.
fn in_a_row(rates: &[f64]) -> f64 {
    1.0 / rates.iter().map(|r| 1.0 / r.max(1e-9)).sum::<f64>()
}

/// Requests/s of P2's load generator (its HTTP client, `n` requests,
/// `concurrency` in flight, a shopper's token on each) against the API's
/// most trivial route: the HTTP share of the accepted path on this machine.
pub async fn http_rate(api: &str, tokens: &[String], n: usize, concurrency: usize) -> anyhow::Result<f64> {
    let http = reqwest::Client::builder().pool_max_idle_per_host(concurrency).build()?;
    let url = format!("{api}/healthz");
    let started = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| {
            let request = http.get(&url).bearer_auth(&tokens[i % tokens.len()]);
            async move {
                let r = request.send().await?;
                anyhow::ensure!(r.status().is_success(), "GET /healthz answered {}", r.status());
                r.bytes().await?;
                Ok(())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(n as f64 / started.elapsed().as_secs_f64().max(0.001))
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

/// Messages/s each consumer mode drains from a backlog of the same number
/// of order-sized messages, with a group of its own, doing nothing with them.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ConsumerModes {
    /// Push, batches of `consume_batch_max` (the worker's mode; P2's drain stage).
    pub push: f64,
    /// Push, pull and consume batches four times as large.
    pub push_large: f64,
    /// Push, on a topic with twice the queues.
    pub push_more_queues: f64,
    /// Lite pull, polls of four times `consume_batch_max`, offsets committed after each.
    pub lite_pull: f64,
}

/// Messages/s of order-sized messages through the batching publisher
/// (`concurrency` in flight), then how fast each consumer mode drains them:
/// (send, modes). Uses topics and groups of its own.
pub async fn send_and_drain(
    settings: &Settings,
    client: &Arc<ClientRuntime>,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, ConsumerModes)> {
    let mq = &settings.mq;
    let stage = format!("{}_stage_{:08x}", mq.order_topic, rand::random::<u32>());
    let send = backlog(settings, client, &stage, mq.topic_queues, n, concurrency).await?;
    let push = push_drain(client, mq, &format!("{stage}_c"), &stage, n).await?;
    let large = MqSettings { consume_batch_max: mq.consume_batch_max * 4, ..mq.clone() };
    let push_large = push_drain(client, &large, &format!("{stage}_cl"), &stage, n).await?;
    let lite_pull =
        super::lite_pull::drain(client, mq, &format!("{stage}_lp"), &stage, n, large.consume_batch_max).await?;
    let wide = format!("{stage}_q");
    backlog(settings, client, &wide, mq.topic_queues * 2, n, concurrency).await?;
    let push_more_queues = push_drain(client, mq, &format!("{wide}_c"), &wide, n).await?;
    Ok((send, ConsumerModes { push, push_large, push_more_queues, lite_pull }))
}

/// Publishes `n` order-sized messages to `topic` (made with `queues`
/// queues), `concurrency` in flight; answers messages/s.
async fn backlog(
    settings: &Settings,
    client: &Arc<ClientRuntime>,
    topic: &str,
    queues: u32,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<f64> {
    let mq = &settings.mq;
    let mut producer = cityhub_platform::mq::start_producer(client, mq, &format!("{topic}_p")).await?;
    cityhub_platform::mq::ensure_topic(&producer, topic, queues).await;
    let publisher = BatchPublisher::spawn(producer.clone(), topic.to_owned(), BatchConfig::from(mq));
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
    producer.shutdown().await;
    Ok(send)
}

/// Messages/s a push consumer of `group` with `mq`'s batch sizes drains
/// from `topic`, doing nothing with them: from its first batch to its last.
async fn push_drain(
    client: &Arc<ClientRuntime>,
    mq: &MqSettings,
    group: &str,
    topic: &str,
    n: usize,
) -> anyhow::Result<f64> {
    let count = Arc::new(Count::default());
    let consumer = Consumer::start(client, mq, group, topic, Arc::new(Counter(Arc::clone(&count)))).await?;
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
    let (first, last) = count.span.lock().unwrap_or_else(|p| p.into_inner()).expect("batches came");
    Ok(n as f64 / (last - first).as_secs_f64().max(0.001))
}

/// Where a worker's order transactions spent their time, per transaction
/// (ms), and how many rows each stored: read from its
/// `cityhub_order_store_step_seconds` histograms, so from a freshly started
/// worker it covers exactly what it drained.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TxSplit {
    pub rows: f64,
    pub begin_ms: f64,
    pub insert_ms: f64,
    pub stock_ms: f64,
    pub commit_ms: f64,
}

impl TxSplit {
    pub fn total_ms(&self) -> f64 {
        self.begin_ms + self.insert_ms + self.stock_ms + self.commit_ms
    }
}

/// The [`TxSplit`] of the worker on `metrics_addr` that stored `rows` rows.
pub async fn tx_split(metrics_addr: &str, rows: usize) -> anyhow::Result<TxSplit> {
    use cityhub_core::orders::store::Step;
    let name = cityhub_core::metrics::ORDER_STORE_STEP;
    let (sum, count) = (format!("{name}_sum"), format!("{name}_count"));
    let mut ms = [0.0; 4];
    let mut transactions = 0.0;
    for (i, step) in Step::ALL.into_iter().enumerate() {
        let label = format!(r#"step="{}""#, step.label());
        let n = crate::platform::scrape(metrics_addr, &count, &[&label]).await?.unwrap_or(0.0);
        let secs = crate::platform::scrape(metrics_addr, &sum, &[&label]).await?.unwrap_or(0.0);
        ms[i] = 1000.0 * secs / n.max(1.0);
        if step == Step::Commit {
            transactions = n;
        }
    }
    let [begin_ms, insert_ms, stock_ms, commit_ms] = ms;
    Ok(TxSplit { rows: rows as f64 / transactions.max(1.0), begin_ms, insert_ms, stock_ms, commit_ms })
}

/// Rows/s a freshly started worker stores: `expected` orders over the time
/// from its last poll that saw none stored to the first that saw them all,
/// so consumer start-up does not count (and a drain quicker than one poll is
/// still timed). Read from its own counter (`cityhub_consumer_messages_total`,
/// result "stored") on its ops listener at `metrics_addr` every 10 ms, so
/// measuring puts no load on MySQL (a `COUNT(*)` every few ms did).
pub async fn drain_rate(metrics_addr: &str, expected: usize) -> anyhow::Result<f64> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut none_yet = Instant::now();
    loop {
        let polled = Instant::now();
        let name = cityhub_platform::metrics::CONSUMER_MESSAGES;
        let stored =
            crate::platform::scrape(metrics_addr, name, &[r#"result="stored""#]).await?.unwrap_or(0.0) as usize;
        if stored == 0 {
            none_yet = polled;
        } else if stored >= expected {
            return Ok(expected as f64 / none_yet.elapsed().as_secs_f64().max(0.001));
        }
        if Instant::now() >= deadline {
            anyhow::bail!(
                "the worker stored {stored} of {expected} orders in 300 s; {}",
                stall_report(metrics_addr).await
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What a stalled worker's consumer says of itself: its other results, the
/// queues it holds, its lag and the batches it held back.
async fn stall_report(metrics_addr: &str) -> String {
    use cityhub_platform::metrics as m;
    let mut said = Vec::new();
    for (family, labels) in [
        (m::CONSUMER_MESSAGES, &[r#"result="redelivered""#][..]),
        (m::CONSUMER_MESSAGES, &[r#"result="parked""#]),
        (m::CONSUMER_QUEUES, &[]),
        (m::CONSUMER_LAG, &[]),
        (m::CONSUMER_HELD_BATCHES, &[]),
    ] {
        let value = crate::platform::scrape(metrics_addr, family, labels).await;
        said.push(format!("{family}{{{}}} = {value:?}", labels.join(",")));
    }
    said.join(", ")
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
