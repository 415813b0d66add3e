//! The order consumer: turns a batch of order messages into stored orders.
//!
//! For each batch: unparsable messages are parked; each parsed order is
//! confirmed in Redis (`seckill_confirm.lua`), and orders whose reservation
//! was released (the API answered 503) are parked as revoked; the rest are
//! stored in one transaction. If the batch conflicts with a rule (DB stock,
//! one order per user), each order is retried alone and only the offending
//! ones are parked. Transient DB errors are retried with backoff, then the
//! batch goes back to the broker. The batch is acked only after every
//! message is stored or parked.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cityhub_core::config::WorkerSettings;
use cityhub_core::kv::{scripts, Kv};
use cityhub_core::metrics as m;
use cityhub_core::mq::consumer::{Ack, BatchHandler, Delivery};
use cityhub_core::mq::parked::park;
use cityhub_core::orders::store::{StoreError, Stored};

use crate::combiner::Combiner;
use cityhub_core::orders::OrderMessage;
use sqlx::MySqlPool;

/// Counters of what the worker did since it started.
#[derive(Debug, Default)]
pub struct WorkerStats {
    /// Orders inserted.
    pub stored: AtomicU64,
    /// Messages whose order was already stored (redeliveries).
    pub redelivered: AtomicU64,
    /// Messages parked (unparsable, revoked or refused by a rule).
    pub parked: AtomicU64,
    /// Batches handed back to the broker after transient failures.
    pub retried_batches: AtomicU64,
}

impl WorkerStats {
    fn add(&self, stored: &Stored) {
        self.stored.fetch_add(stored.inserted.len() as u64, Ordering::Relaxed);
        self.redelivered.fetch_add(stored.duplicates as u64, Ordering::Relaxed);
        messages("stored").increment(stored.inserted.len() as u64);
        messages("redelivered").increment(stored.duplicates as u64);
    }

    fn parked(&self) {
        self.parked.fetch_add(1, Ordering::Relaxed);
        messages("parked").increment(1);
    }

    fn retried(&self) {
        self.retried_batches.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(m::CONSUMER_RETRIED_BATCHES, "topic" => "orders").increment(1);
    }
}

fn messages(result: &'static str) -> metrics::Counter {
    metrics::counter!(m::CONSUMER_MESSAGES, "topic" => "orders", "result" => result)
}

/// Stores order messages; see the module doc.
pub struct OrderHandler {
    db: MySqlPool,
    writer: Combiner,
    kv: Kv,
    stats: Arc<WorkerStats>,
    attempts: u32,
}

/// A batch failed in a way that retrying later may fix.
struct Transient;

impl OrderHandler {
    pub fn new(db: MySqlPool, kv: Kv, stats: Arc<WorkerStats>, settings: &WorkerSettings) -> Self {
        for result in ["stored", "redelivered", "parked"] {
            messages(result).increment(0);
        }
        metrics::counter!(m::CONSUMER_RETRIED_BATCHES, "topic" => "orders").increment(0);
        let writer = Combiner::spawn(db.clone(), settings.combine_max_rows.max(1));
        Self { db, writer, kv, stats, attempts: settings.db_attempts.max(1) }
    }

    async fn park(&self, delivery: &Delivery, reason: &str) -> Result<(), Transient> {
        park(&self.db, delivery, reason).await.map_err(|err| {
            tracing::error!(error = %err, "cannot park message");
            Transient
        })?;
        self.stats.parked();
        Ok(())
    }

    /// Stores `orders`, retrying transient errors with exponential backoff.
    async fn store_with_retry(&self, orders: &[OrderMessage]) -> Result<Result<Stored, StoreError>, Transient> {
        let mut delay = Duration::from_millis(50);
        for attempt in 1..=self.attempts {
            match self.writer.store(orders.to_vec()).await {
                Err(err) if err.is_transient() => {
                    tracing::warn!(attempt, error = %err, "transient error storing orders");
                    if attempt < self.attempts {
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(Duration::from_secs(2));
                    }
                }
                other => return Ok(other),
            }
        }
        Err(Transient)
    }

    async fn process(&self, batch: Vec<Delivery>) -> Result<(), Transient> {
        let mut parsed = Vec::with_capacity(batch.len());
        for delivery in &batch {
            match serde_json::from_slice::<OrderMessage>(&delivery.body) {
                Ok(order) => parsed.push((delivery, order)),
                Err(err) => self.park(delivery, &format!("unparsable order message: {err}")).await?,
            }
        }

        // One confirm call per voucher in the batch.
        let mut by_voucher: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (i, (_, order)) in parsed.iter().enumerate() {
            by_voucher.entry(order.voucher_id).or_default().push(i);
        }
        let mut claimed = vec![false; parsed.len()];
        for (voucher_id, members) in &by_voucher {
            let pairs: Vec<(u64, u64)> = members.iter().map(|&i| (parsed[i].1.user_id, parsed[i].1.order_id)).collect();
            let flags = scripts::confirm(&self.kv, *voucher_id, &pairs).await.map_err(|err| {
                tracing::warn!(error = %err, "cannot confirm reservations");
                Transient
            })?;
            for (&i, flag) in members.iter().zip(flags) {
                claimed[i] = flag;
            }
        }
        let mut confirmed = Vec::with_capacity(parsed.len());
        for ((delivery, order), claimed) in parsed.into_iter().zip(claimed) {
            if claimed {
                confirmed.push((delivery, order));
            } else {
                self.park(delivery, "revoked: the reservation was released before the order was stored").await?;
            }
        }

        let orders: Vec<OrderMessage> = confirmed.iter().map(|(_, o)| o.clone()).collect();
        match self.store_with_retry(&orders).await? {
            Ok(stored) => {
                self.stats.add(&stored);
                for order in &orders {
                    tracing::info!(
                        order_id = order.order_id,
                        request_id = order.request_id.as_deref().unwrap_or("-"),
                        "order in MySQL"
                    );
                }
                Ok(())
            }
            Err(err) => {
                tracing::warn!(error = %err, size = orders.len(), "batch refused; storing orders one by one");
                for (delivery, order) in confirmed {
                    match self.store_with_retry(std::slice::from_ref(&order)).await? {
                        Ok(stored) => self.stats.add(&stored),
                        Err(err) => self.park(delivery, &format!("refused: {err}")).await?,
                    }
                }
                Ok(())
            }
        }
    }
}

impl BatchHandler for OrderHandler {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let started = std::time::Instant::now();
        metrics::histogram!(m::CONSUMER_BATCH_SIZE, "topic" => "orders").record(batch.len() as f64);
        let ack = match self.process(batch).await {
            Ok(()) => Ack::Done,
            Err(Transient) => {
                self.stats.retried();
                Ack::Retry
            }
        };
        metrics::histogram!(m::CONSUMER_BATCH_DURATION, "topic" => "orders").record(started.elapsed().as_secs_f64());
        ack
    }
}
