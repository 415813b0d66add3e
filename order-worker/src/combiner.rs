//! Group commit for order batches. The consumer hands over batches of at
//! most 32 messages (the broker's pull size), many at once; storing each in
//! its own transaction makes them queue on the voucher's stock row. The
//! combiner is the one writer: it takes every batch waiting when it starts a
//! transaction (up to `max_rows`) and stores them together.
//!
//! Invariant: each caller gets the outcome of its own orders. If a combined
//! transaction fails, each batch is retried alone, so one batch's conflict
//! never fails another's orders.

use std::collections::HashSet;

use cityhub_core::orders::store::{store_batch, StoreError, Stored};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::{OrderId, UserId, VoucherId};
use sqlx::MySqlPool;
use tokio::sync::{mpsc, oneshot};

struct Job {
    orders: Vec<OrderMessage>,
    done: oneshot::Sender<Result<Stored, StoreError>>,
}

/// Handle to the writer task.
pub struct Combiner {
    tx: mpsc::Sender<Job>,
}

impl Combiner {
    pub fn spawn(db: MySqlPool, max_rows: usize) -> Self {
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(run(rx, db, max_rows));
        Self { tx }
    }

    /// Stores `orders` (with whatever else is waiting) and returns their outcome.
    pub async fn store(&self, orders: Vec<OrderMessage>) -> Result<Stored, StoreError> {
        let (done, outcome) = oneshot::channel();
        let closed = || StoreError::Db(sqlx::Error::PoolClosed);
        self.tx.send(Job { orders, done }).await.map_err(|_| closed())?;
        outcome.await.map_err(|_| closed())?
    }
}

async fn run(mut rx: mpsc::Receiver<Job>, db: MySqlPool, max_rows: usize) {
    while let Some(first) = rx.recv().await {
        let mut rows = first.orders.len();
        let mut jobs = vec![first];
        while rows < max_rows {
            match rx.try_recv() {
                Ok(job) => {
                    rows += job.orders.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        if jobs.len() > 1 {
            let all: Vec<OrderMessage> = jobs.iter().flat_map(|j| j.orders.iter().cloned()).collect();
            if let Ok(stored) = store_batch(&db, &all).await {
                let mut inserted = stored.inserted;
                for job in jobs {
                    let _ = job.done.send(Ok(share(&mut inserted, &stored.conflicts, &job.orders)));
                }
                continue;
            }
        }
        for job in jobs {
            let outcome = store_batch(&db, &job.orders).await;
            let _ = job.done.send(outcome);
        }
    }
}

/// The part of a combined result that belongs to `orders`; an id inserted
/// once is credited to the first batch that carried it.
fn share(
    inserted: &mut HashSet<OrderId>,
    conflicts: &HashSet<(OrderId, UserId, VoucherId)>,
    orders: &[OrderMessage],
) -> Stored {
    let mine: HashSet<OrderId> = orders.iter().map(|o| o.order_id).filter(|id| inserted.remove(id)).collect();
    let keys = orders.iter().map(|o| (o.order_id, o.user_id, o.voucher_id));
    let conflicted = keys.clone().filter(|key| conflicts.contains(key)).count();
    let conflicts = keys.filter(|key| conflicts.contains(key)).collect();
    Stored { duplicates: orders.len() - mine.len() - conflicted, inserted: mine, conflicts }
}
