//! The order consumer job: turns batches of order messages into stored orders.
//!
//! For each batch: unparsable messages are parked; each parsed order is
//! confirmed in Redis (`seckill_confirm.lua`). Revoked orders (released: the
//! shopper was told 503) and superseded ones (the buyer holds another order)
//! are parked. Confirmed orders, and orders Redis has no entry for at all
//! (Redis lost it: MySQL's stock guard and unique key decide), are stored in
//! one transaction; the entries of the unknown ones that got stored are then
//! written back to Redis as confirmed. If a rule refuses the batch (DB stock,
//! one order per user), each order is stored alone and only the refused ones
//! are parked; an order id stored for someone else is parked as a conflict.
//!
//! Only those refusals park. Every other failure (MySQL or Redis errors of
//! any kind) is retried: in place with backoff, then by redelivery. While
//! Redis or MySQL cannot be reached at all (an outage, not an error of this
//! batch), the batch is not handed back: it is tried again in place until
//! they answer (or the worker stops). A batch handed back waits in the
//! broker's schedule topic, where the group's lag does not count it, and the
//! reconciler rebuilds a voucher's lost Redis keys only when that lag is
//! zero: an order out of sight then would be sold a second time. A message
//! on its last delivery is parked as `gave_up` with the error instead of
//! going to the broker's dead-letter queue, which nothing reads (if parking
//! itself fails, the broker moves it there). The batch is acked only after
//! every message is stored or parked.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::{MqSettings, Settings, WorkerSettings};
use cityhub_core::kv::Kv;
use cityhub_core::orders::store::{StoreError, Stored};
use cityhub_core::orders::{OrderMessage, Refusal};
use cityhub_core::seckill::scripts::{self, Confirm};
use cityhub_platform::metrics as m;
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::lag::LagBoard;
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::parking::{park, Parking};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

use crate::combiner::Combiner;

/// Makes sure the order topic exists, then starts consuming it.
pub async fn start(
    settings: &Settings,
    mq: &Arc<ClientRuntime>,
    db: MySqlPool,
    kv: Kv,
    stats: Arc<WorkerStats>,
    stop: CancellationToken,
) -> anyhow::Result<Consumer> {
    let (s, group, topic) = (&settings.mq, &settings.mq.order_consumer_group, &settings.mq.order_topic);
    let mut admin = cityhub_platform::mq::start_producer(mq, s, &format!("{group}_admin"))
        .await
        .context("start topic admin producer")?;
    cityhub_platform::mq::ensure_topic(&admin, topic, s.topic_queues).await;
    admin.shutdown().await;
    let handler = Arc::new(OrderHandler::new(db, kv, stats, &settings.worker, s, stop));
    let consumer = Consumer::start(mq, s, group, topic, handler).await.context("start order consumer")?;
    tracing::info!(%topic, %group, "order worker consuming");
    Ok(consumer)
}

/// Consumes until `stop`, reporting this instance's lag to the group's
/// [`LagBoard`] every `mq.lag_sample_ms` (the reconciler rebuilds lost Redis
/// keys only when the whole group's lag is zero); then lets in-flight
/// batches finish.
pub async fn run(consumer: Consumer, settings: &Settings, kv: &Kv, stop: CancellationToken) -> anyhow::Result<()> {
    let every = Duration::from_millis(settings.mq.lag_sample_ms);
    let board = LagBoard::new(kv, &settings.mq.order_consumer_group, every);
    let topic = settings.mq.order_topic.clone();
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = ticks.tick() => match consumer.lag(&topic).await {
                Ok(lag) => {
                    if let Err(err) = board.report(lag).await {
                        tracing::debug!(error = %err, "lag not reported");
                    }
                }
                Err(err) => tracing::debug!(error = %err, "lag not sampled"),
            },
        }
    }
    board.leave().await;
    consumer.shutdown().await;
    Ok(())
}

/// Counters of what the worker did since it started.
#[derive(Debug, Default)]
pub struct WorkerStats {
    /// Orders inserted.
    pub stored: AtomicU64,
    /// Messages whose order was already stored (redeliveries).
    pub redelivered: AtomicU64,
    /// Messages parked (see [`Refusal`]).
    pub parked: AtomicU64,
    /// Batches handed back to the broker after failures a retry may fix.
    pub retried_batches: AtomicU64,
}

/// Stores order messages; see the module doc.
pub struct OrderHandler {
    db: MySqlPool,
    writer: Combiner,
    kv: Kv,
    stats: Arc<WorkerStats>,
    attempts: u32,
    topic: String,
    max_redeliveries: i32,
    /// The worker is stopping: an outage no longer keeps a batch here.
    stop: CancellationToken,
}

/// A batch failed in a way that retrying later may fix; `outage` when
/// Redis or MySQL could not be reached at all.
#[derive(Debug)]
struct Failure {
    why: String,
    outage: bool,
}

impl Failure {
    fn db(what: &str, err: &sqlx::Error) -> Self {
        Self { why: format!("{what}: {err}"), outage: cityhub_platform::db::is_unreachable(err) }
    }

    fn redis(what: &str, err: &cityhub_platform::kv::RedisError) -> Self {
        Self { why: format!("{what}: {err}"), outage: cityhub_platform::kv::is_unreachable(err) }
    }
}

/// The longest pause between in-place tries during an outage.
const OUTAGE_BACKOFF_MAX: Duration = Duration::from_secs(2);

impl OrderHandler {
    pub fn new(
        db: MySqlPool,
        kv: Kv,
        stats: Arc<WorkerStats>,
        worker: &WorkerSettings,
        mq: &MqSettings,
        stop: CancellationToken,
    ) -> Self {
        let topic = mq.order_topic.clone();
        for result in ["stored", "redelivered", "parked"] {
            metrics::counter!(m::CONSUMER_MESSAGES, "topic" => topic.clone(), "result" => result).increment(0);
        }
        for refusal in Refusal::ALL.into_iter().filter(|r| r.had_202()) {
            metrics::counter!(cityhub_core::metrics::PARKED_ACCEPTED_ORDERS, "topic" => topic.clone(), "kind" => refusal.label())
                .increment(0);
        }
        metrics::counter!(m::CONSUMER_RETRIED_BATCHES, "topic" => topic.clone()).increment(0);
        let writer = Combiner::spawn(db.clone(), worker.combine_max_rows.max(1));
        Self {
            db,
            writer,
            kv,
            stats,
            attempts: worker.db_attempts.max(1),
            topic,
            max_redeliveries: mq.max_redeliveries,
            stop,
        }
    }

    fn count(&self, result: &'static str, n: u64) {
        metrics::counter!(m::CONSUMER_MESSAGES, "topic" => self.topic.clone(), "result" => result).increment(n);
    }

    fn record(&self, stored: &Stored, orders: &[OrderMessage]) {
        self.stats.stored.fetch_add(stored.inserted.len() as u64, Ordering::Relaxed);
        self.stats.redelivered.fetch_add(stored.duplicates as u64, Ordering::Relaxed);
        self.count("stored", stored.inserted.len() as u64);
        self.count("redelivered", stored.duplicates as u64);
        for order in orders.iter().filter(|o| stored.inserted.contains(&o.order_id)) {
            tracing::info!(
                order_id = order.order_id,
                request_id = order.request_id.as_deref().unwrap_or("-"),
                "order in MySQL"
            );
        }
    }

    async fn park(
        &self,
        delivery: &Delivery,
        refusal: Refusal,
        order_id: Option<u64>,
        detail: &str,
    ) -> Result<(), Failure> {
        let why = Parking { kind: refusal.label(), order_id, accepted: refusal.had_202(), detail };
        let new = park(&self.db, delivery, &why).await.map_err(|err| Failure::db("cannot park a message", &err))?;
        if !new {
            return Ok(());
        }
        self.stats.parked.fetch_add(1, Ordering::Relaxed);
        self.count("parked", 1);
        if refusal.had_202() {
            metrics::counter!(cityhub_core::metrics::PARKED_ACCEPTED_ORDERS, "topic" => self.topic.clone(), "kind" => refusal.label())
                .increment(1);
            tracing::error!(order_id, kind = refusal.label(), detail, "an accepted order was parked, not stored");
        }
        Ok(())
    }

    /// Stores `orders`; a rule's refusal comes back as `Ok(Err(..))`, any
    /// other error is retried with exponential backoff, then is a [`Failure`].
    async fn store_with_retry(&self, orders: &[OrderMessage]) -> Result<Result<Stored, StoreError>, Failure> {
        let mut delay = Duration::from_millis(50);
        let what = format!("storing orders failed {} times", self.attempts);
        let mut last = Failure { why: what.clone(), outage: false };
        for attempt in 1..=self.attempts {
            match self.writer.store(orders.to_vec()).await {
                // A DB error may pass on a retry; every other error is a rule's refusal.
                Err(StoreError::Db(err)) => {
                    tracing::warn!(attempt, error = %err, "error storing orders; retrying");
                    last = Failure::db(&what, &err);
                    if attempt < self.attempts {
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(Duration::from_secs(2));
                    }
                }
                other => return Ok(other),
            }
        }
        Err(last)
    }

    /// Parks the conflicts of a stored batch and writes back the Redis
    /// entries of its `unknown` orders that are now in MySQL.
    async fn settle(&self, stored: &Stored, entries: &[(&Delivery, OrderMessage, Confirm)]) -> Result<(), Failure> {
        let mut restore: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
        for (delivery, order, state) in entries {
            if stored.conflicts.contains(&(order.order_id, order.user_id, order.voucher_id)) {
                let detail = format!("order id {} is stored for another user or voucher", order.order_id);
                self.park(delivery, Refusal::IdConflict, Some(order.order_id), &detail).await?;
            } else if *state == Confirm::Unknown {
                restore.entry(order.voucher_id).or_default().push((order.user_id, order.order_id));
            }
        }
        for (voucher_id, pairs) in restore {
            let written = scripts::restore(&self.kv, voucher_id, &pairs)
                .await
                .map_err(|err| Failure::redis("cannot restore buyer entries", &err))?;
            tracing::warn!(voucher_id, orders = pairs.len(), written, "stored orders Redis had no entry for");
        }
        Ok(())
    }

    async fn process(&self, batch: &[Delivery]) -> Result<(), Failure> {
        let mut parsed = Vec::with_capacity(batch.len());
        for delivery in batch {
            match serde_json::from_slice::<OrderMessage>(&delivery.body) {
                Ok(order) => parsed.push((delivery, order)),
                Err(err) => {
                    self.park(delivery, Refusal::Unparsable, None, &format!("not an order message: {err}")).await?
                }
            }
        }

        // One confirm call per voucher in the batch.
        let mut by_voucher: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (i, (_, order)) in parsed.iter().enumerate() {
            by_voucher.entry(order.voucher_id).or_default().push(i);
        }
        let mut states = vec![Confirm::Unknown; parsed.len()];
        for (voucher_id, members) in &by_voucher {
            let pairs: Vec<(u64, u64)> = members.iter().map(|&i| (parsed[i].1.user_id, parsed[i].1.order_id)).collect();
            let answers = scripts::confirm(&self.kv, *voucher_id, &pairs)
                .await
                .map_err(|err| Failure::redis("cannot confirm reservations", &err))?;
            for (&i, state) in members.iter().zip(answers) {
                states[i] = state;
            }
        }
        let mut entries = Vec::with_capacity(parsed.len());
        for ((delivery, order), state) in parsed.into_iter().zip(states) {
            match state {
                Confirm::Revoked => {
                    let detail = "the reservation was released before the order was stored";
                    self.park(delivery, Refusal::Revoked, Some(order.order_id), detail).await?
                }
                Confirm::Superseded => {
                    let detail = "the buyer holds another order of this voucher";
                    self.park(delivery, Refusal::Superseded, Some(order.order_id), detail).await?
                }
                Confirm::Confirmed | Confirm::Unknown => entries.push((delivery, order, state)),
            }
        }

        let orders: Vec<OrderMessage> = entries.iter().map(|(_, o, _)| o.clone()).collect();
        match self.store_with_retry(&orders).await? {
            Ok(stored) => {
                self.record(&stored, &orders);
                self.settle(&stored, &entries).await
            }
            Err(err) => {
                tracing::warn!(error = %err, size = orders.len(), "batch refused; storing orders one by one");
                for entry in &entries {
                    let one = std::slice::from_ref(&entry.1);
                    match self.store_with_retry(one).await? {
                        Ok(stored) => {
                            self.record(&stored, one);
                            self.settle(&stored, std::slice::from_ref(entry)).await?;
                        }
                        Err(err) => {
                            self.park(entry.0, Refusal::from(&err), Some(entry.1.order_id), &err.to_string()).await?
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// The batch failed and holds a message on its last delivery: each
    /// message is tried alone, and those on their last delivery that still
    /// fail are parked. Retry if anything is left unsettled.
    async fn last_chance(&self, batch: &[Delivery]) -> Ack {
        let mut ack = Ack::Done;
        for delivery in batch {
            let Err(Failure { why, .. }) = self.process(std::slice::from_ref(delivery)).await else {
                continue;
            };
            if delivery.reconsume_times < self.max_redeliveries {
                ack = Ack::Retry;
                continue;
            }
            let order_id = serde_json::from_slice::<OrderMessage>(&delivery.body).ok().map(|o| o.order_id);
            let detail = format!("gave up after {} deliveries: {why}", delivery.reconsume_times + 1);
            if let Err(Failure { why: err, .. }) = self.park(delivery, Refusal::GaveUp, order_id, &detail).await {
                tracing::error!(error = %err, msg_id = %delivery.msg_id, "cannot park a message on its last delivery");
                ack = Ack::Retry;
            }
        }
        ack
    }
}

impl BatchHandler for OrderHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let started = std::time::Instant::now();
        metrics::histogram!(m::CONSUMER_BATCH_SIZE, "topic" => self.topic.clone()).record(batch.len() as f64);
        let mut pause = Duration::from_millis(100);
        let ack = loop {
            match self.process(&batch).await {
                Ok(()) => break Ack::Done,
                // Kept here, in sight of the group's lag (see the module doc).
                Err(Failure { why, outage: true }) if !self.stop.is_cancelled() => {
                    tracing::warn!(error = %why, size = batch.len(), "Redis or MySQL unreachable; trying the batch again");
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = self.stop.cancelled() => {}
                    }
                    pause = (pause * 2).min(OUTAGE_BACKOFF_MAX);
                }
                Err(Failure { why, .. }) if batch.iter().any(|d| d.reconsume_times >= self.max_redeliveries) => {
                    tracing::warn!(error = %why, "batch failed on a last delivery; settling messages one by one");
                    break self.last_chance(&batch).await;
                }
                Err(Failure { why, .. }) => {
                    tracing::warn!(error = %why, size = batch.len(), "batch failed; it will be redelivered");
                    break Ack::Retry;
                }
            }
        };
        if ack == Ack::Retry {
            self.stats.retried_batches.fetch_add(1, Ordering::Relaxed);
            metrics::counter!(m::CONSUMER_RETRIED_BATCHES, "topic" => self.topic.clone()).increment(1);
        }
        metrics::histogram!(m::CONSUMER_BATCH_DURATION, "topic" => self.topic.clone())
            .record(started.elapsed().as_secs_f64());
        ack
    }
}
