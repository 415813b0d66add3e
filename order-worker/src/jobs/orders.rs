//! The order consumer job: turns batches of order messages into stored
//! orders by the intake rules of [`cityhub_core::orders::intake`], which
//! decide each message's fate; this job reads what they need (Redis's
//! confirm state, MySQL's answer), and turns their verdicts into writes,
//! parked messages, acks, metrics and logs.
//!
//! Every failure that is not a rule's refusal is tried again **in place**
//! (the rules say how), never handed back to the broker. The batch is acked
//! only after every message is stored or parked. A worker that stops holding
//! a batch leaves it unacked: the queue's next owner gets it again from the
//! topic.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::{MqSettings, Settings, WorkerSettings};
use cityhub_core::kv::Kv;
use cityhub_core::orders::intake::{self, AfterStore, Retry, Triage};
use cityhub_core::orders::store::{StoreError, Stored};
use cityhub_core::orders::Refusal;
use cityhub_core::seckill::scripts::{self, Confirm};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::{OrderId, Sale, UserId};
use cityhub_platform::jobs::{Job, OnExit};
use cityhub_platform::metrics as m;
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::parking::{park, Parking};
use cityhub_platform::retry::Backoff;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

use crate::combiner::Combiner;

/// The running order consumer.
pub struct OrderConsumer {
    consumer: Consumer,
    /// Cancelled once the consumer is shut down: handlers still holding a
    /// batch let go of it unacked.
    closed: CancellationToken,
}

/// Makes sure the order topic exists, then starts consuming it.
pub async fn start(
    settings: &Settings,
    mq: &Arc<ClientRuntime>,
    db: MySqlPool,
    kv: Kv,
) -> anyhow::Result<OrderConsumer> {
    let (s, group, topic) = (&settings.mq, &settings.mq.order_consumer_group, &settings.mq.order_topic);
    let mut admin = cityhub_platform::mq::start_producer(mq, s, &format!("{group}_admin"))
        .await
        .context("start topic admin producer")?;
    cityhub_platform::mq::ensure_topic(&admin, topic, s.topic_queues).await;
    admin.shutdown().await;
    let closed = CancellationToken::new();
    let handler = Arc::new(OrderHandler::new(db, kv, &settings.worker, s, closed.clone()));
    let consumer = Consumer::start(mq, s, group, topic, handler).await.context("start order consumer")?;
    tracing::info!(%topic, %group, "order worker consuming");
    Ok(OrderConsumer { consumer, closed })
}

/// The order consumer as a job, run once: one that ends early stops the
/// process (its queues go to the group's other members, whose offsets are
/// what the reconciler trusts).
pub struct OrdersJob(tokio::sync::Mutex<Option<OrderConsumer>>);

impl OrdersJob {
    pub fn new(orders: OrderConsumer) -> Self {
        Self(tokio::sync::Mutex::new(Some(orders)))
    }
}

impl Job for OrdersJob {
    const NAME: &'static str = "orders";
    const ON_EXIT: OnExit = OnExit::StopProcess;

    /// Consumes until `stop`, then shuts the consumer down: in-flight batches
    /// that finish within the client's grace are acked; one still held is let
    /// go unacked and its messages stay in the topic for the queue's next owner.
    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        let orders = self.0.lock().await.take().context("the order consumer was shut down already")?;
        stop.cancelled().await;
        orders.consumer.shutdown().await;
        orders.closed.cancel();
        Ok(())
    }
}

/// Stores order messages; see the module doc.
pub struct OrderHandler {
    db: MySqlPool,
    writer: Combiner,
    kv: Kv,
    attempts: u32,
    topic: String,
    /// How long a message may keep failing with an error (not an outage)
    /// before it is parked as `gave_up`.
    give_up_after: Duration,
    /// The consumer is closed: a batch still held is left unacked, for the
    /// queue's next owner to get from the topic.
    closed: CancellationToken,
}

/// A batch failed in a way that trying again may fix; `outage` when Redis
/// or MySQL could not be reached at all.
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

/// The longest pause between two in-place tries of a failing batch.
const BACKOFF_MAX: Duration = Duration::from_secs(2);

impl OrderHandler {
    pub fn new(db: MySqlPool, kv: Kv, worker: &WorkerSettings, mq: &MqSettings, closed: CancellationToken) -> Self {
        let topic = mq.order_topic.clone();
        for result in ["stored", "redelivered", "parked"] {
            metrics::counter!(m::CONSUMER_MESSAGES, "topic" => topic.clone(), "result" => result).increment(0);
        }
        for refusal in Refusal::ALL.into_iter().filter(|r| r.had_202()) {
            metrics::counter!(cityhub_core::metrics::PARKED_ACCEPTED_ORDERS, "topic" => topic.clone(), "kind" => refusal.label())
                .increment(0);
        }
        metrics::counter!(m::CONSUMER_HELD_BATCHES, "topic" => topic.clone()).increment(0);
        let writer = Combiner::spawn(db.clone(), worker.combine_max_rows.max(1), worker.writers);
        Self {
            db,
            writer,
            kv,
            attempts: worker.db_attempts.max(1),
            topic,
            give_up_after: mq.give_up_after_secs,
            closed,
        }
    }

    fn count(&self, result: &'static str, n: u64) {
        metrics::counter!(m::CONSUMER_MESSAGES, "topic" => self.topic.clone(), "result" => result).increment(n);
    }

    fn record(&self, stored: &Stored, orders: &[OrderMessage]) {
        self.count("stored", stored.inserted.len() as u64);
        self.count("redelivered", stored.duplicates as u64);
        for order in orders.iter().filter(|o| stored.inserted.contains(&o.order_id)) {
            tracing::info!(
                order_id = %order.order_id,
                request_id = order.request_id.as_deref().unwrap_or("-"),
                "order in MySQL"
            );
        }
    }

    async fn park(
        &self,
        delivery: &Delivery,
        refusal: Refusal,
        order_id: Option<OrderId>,
        detail: &str,
    ) -> Result<(), Failure> {
        let why = Parking {
            kind: refusal.label(),
            order_id: order_id.map(OrderId::get),
            accepted: refusal.had_202(),
            detail,
        };
        let new = park(&self.db, delivery, &why).await.map_err(|err| Failure::db("cannot park a message", &err))?;
        if !new {
            return Ok(());
        }
        self.count("parked", 1);
        if refusal.had_202() {
            metrics::counter!(cityhub_core::metrics::PARKED_ACCEPTED_ORDERS, "topic" => self.topic.clone(), "kind" => refusal.label())
                .increment(1);
            tracing::error!(order_id = ?order_id.map(OrderId::get), kind = refusal.label(), detail, "an accepted order was parked, not stored");
        }
        Ok(())
    }

    /// Stores `orders`; a rule's refusal comes back as `Ok(Err(..))`, any
    /// other error is retried with backoff, then is a [`Failure`].
    async fn store_with_retry(&self, orders: &[OrderMessage]) -> Result<Result<Stored, StoreError>, Failure> {
        let mut backoff = Backoff::new(Duration::from_millis(50), BACKOFF_MAX);
        let what = format!("storing orders failed {} times", self.attempts);
        let mut last = Failure { why: what.clone(), outage: false };
        for attempt in 1..=self.attempts {
            match self.writer.store(orders.to_vec()).await {
                // A DB error may pass on a retry; every other error is a rule's refusal.
                Err(StoreError::Db(err)) => {
                    tracing::warn!(attempt, error = %err, "error storing orders; retrying");
                    last = Failure::db(&what, &err);
                    if attempt < self.attempts {
                        backoff.sleep().await;
                    }
                }
                other => return Ok(other),
            }
        }
        Err(last)
    }

    /// Carries out [`intake::after_store`] for the orders of a committed
    /// batch: parks the conflicts, writes back the Redis entries of the
    /// orders Redis had none for.
    async fn after_store(
        &self,
        stored: &Stored,
        entries: &[(&Delivery, OrderMessage, Confirm)],
    ) -> Result<(), Failure> {
        let mut restore: BTreeMap<Sale, Vec<(UserId, OrderId)>> = BTreeMap::new();
        for (delivery, order, state) in entries {
            match intake::after_store(order, *state, stored) {
                AfterStore::Done => {}
                AfterStore::Conflict => {
                    let detail = format!("order id {} is stored for another user or voucher", order.order_id);
                    self.park(delivery, Refusal::IdConflict, Some(order.order_id), &detail).await?;
                }
                AfterStore::WriteBack => restore.entry(order.sale()).or_default().push((order.user_id, order.order_id)),
            }
        }
        for (sale, pairs) in restore {
            let voucher_id = sale.voucher_id;
            let restored = scripts::restore(&self.kv, sale, &pairs)
                .await
                .map_err(|err| Failure::redis("cannot restore buyer entries", &err))?;
            if restored.short > 0 {
                tracing::error!(%voucher_id, short = restored.short, "stored orders whose unit Redis had already sold");
            }
            tracing::warn!(%voucher_id, orders = pairs.len(), ?restored, "stored orders Redis had no entry for");
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

        // One confirm call per voucher bucket in the batch.
        let mut by_sale: BTreeMap<Sale, Vec<usize>> = BTreeMap::new();
        for (i, (_, order)) in parsed.iter().enumerate() {
            by_sale.entry(order.sale()).or_default().push(i);
        }
        let mut states = vec![Confirm::Unknown; parsed.len()];
        for (sale, members) in &by_sale {
            let pairs: Vec<(UserId, OrderId)> =
                members.iter().map(|&i| (parsed[i].1.user_id, parsed[i].1.order_id)).collect();
            let answers = scripts::confirm(&self.kv, *sale, &pairs)
                .await
                .map_err(|err| Failure::redis("cannot confirm reservations", &err))?;
            for (&i, state) in members.iter().zip(answers) {
                states[i] = state;
            }
        }
        let mut entries = Vec::with_capacity(parsed.len());
        for ((delivery, order), state) in parsed.into_iter().zip(states) {
            match intake::triage(state) {
                Triage::Store => entries.push((delivery, order, state)),
                Triage::ParkUnlessStored { .. } if self.stored_as_is(&order).await? => {
                    // A redelivery of an order stored already, whose buyer
                    // has bought again since (or whose release came after
                    // it was stored in a pause): nothing to do, nothing lost.
                    self.count("redelivered", 1);
                }
                Triage::ParkUnlessStored { refusal, detail } => {
                    self.park(delivery, refusal, Some(order.order_id), detail).await?
                }
            }
        }

        let orders: Vec<OrderMessage> = entries.iter().map(|(_, o, _)| o.clone()).collect();
        match self.store_with_retry(&orders).await? {
            Ok(stored) => {
                self.record(&stored, &orders);
                self.after_store(&stored, &entries).await
            }
            Err(err) => {
                tracing::warn!(error = %err, size = orders.len(), "batch refused; storing orders one by one");
                for entry in &entries {
                    let one = std::slice::from_ref(&entry.1);
                    match self.store_with_retry(one).await? {
                        Ok(stored) => {
                            self.record(&stored, one);
                            self.after_store(&stored, std::slice::from_ref(entry)).await?;
                        }
                        Err(err) => {
                            self.park(entry.0, intake::refused(&err), Some(entry.1.order_id), &err.to_string()).await?
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Whether `order` is stored already, for its own user and voucher.
    async fn stored_as_is(&self, order: &OrderMessage) -> Result<bool, Failure> {
        let found: Option<OrderId> =
            sqlx::query_scalar("SELECT id FROM orders WHERE id = ? AND user_id = ? AND voucher_id = ?")
                .bind(order.order_id)
                .bind(order.user_id)
                .bind(order.voucher_id)
                .fetch_optional(&self.db)
                .await
                .map_err(|err| Failure::db("cannot look up a late order", &err))?;
        Ok(found.is_some())
    }

    /// The backoff of in-place tries.
    fn backoff() -> Backoff {
        Backoff::new(Duration::from_millis(100), BACKOFF_MAX)
    }

    /// A batch failed with an error: each message is tried alone, in place,
    /// until it settles or the rules give up on it ([`Retry::GiveUp`]: it is
    /// parked). Answers `Retry` only when the consumer closed first (the
    /// client then drops the answer and the message stays in the topic).
    async fn one_by_one(&self, batch: &[Delivery]) -> Ack {
        for delivery in batch {
            let (first_failure, mut backoff) = (std::time::Instant::now(), Self::backoff());
            loop {
                let Err(Failure { why, outage }) = self.process(std::slice::from_ref(delivery)).await else {
                    break;
                };
                let failing_for = first_failure.elapsed();
                if intake::after_message_failure(outage, failing_for, self.give_up_after) == Retry::GiveUp {
                    let order_id = serde_json::from_slice::<OrderMessage>(&delivery.body).ok().map(|o| o.order_id);
                    let detail = format!("gave up after {failing_for:?} of failures: {why}");
                    match self.park(delivery, Refusal::GaveUp, order_id, &detail).await {
                        Ok(()) => break,
                        Err(Failure { why, .. }) => {
                            tracing::error!(error = %why, msg_id = %delivery.msg_id, "cannot park a message")
                        }
                    }
                }
                tracing::warn!(error = %why, outage, msg_id = %delivery.msg_id, "an order message failed; trying it again");
                if !backoff.wait(&self.closed).await {
                    return Ack::Retry;
                }
            }
        }
        Ack::Done
    }
}

impl BatchHandler for OrderHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let started = std::time::Instant::now();
        metrics::histogram!(m::CONSUMER_BATCH_SIZE, "topic" => self.topic.clone()).record(batch.len() as f64);
        let mut backoff = Self::backoff();
        let mut held = false;
        let ack = loop {
            match self.process(&batch).await {
                Ok(()) => break Ack::Done,
                Err(failure) => {
                    if !held {
                        held = true;
                        metrics::counter!(m::CONSUMER_HELD_BATCHES, "topic" => self.topic.clone()).increment(1);
                    }
                    if intake::after_batch_failure(failure.outage) == Retry::OneByOne {
                        tracing::warn!(error = %failure.why, size = batch.len(), "batch failed; trying its messages one by one");
                        break self.one_by_one(&batch).await;
                    }
                    // Kept here, in sight of the group's committed offsets (see the intake rules).
                    tracing::warn!(error = %failure.why, size = batch.len(), "Redis or MySQL unreachable; trying the batch again");
                    if !backoff.wait(&self.closed).await {
                        break Ack::Retry;
                    }
                }
            }
        };
        metrics::histogram!(m::CONSUMER_BATCH_DURATION, "topic" => self.topic.clone())
            .record(started.elapsed().as_secs_f64());
        ack
    }
}
