//! Group commit for order batches. The consumer hands over batches of at
//! most 32 messages (the broker's pull size), many at once; storing each in
//! its own transaction makes them queue on the voucher's stock row. The
//! combiner's writers take every batch waiting when they start a transaction
//! (up to `max_rows`) and store them together.
//!
//! It runs `writers` of them (two by default): while one waits for its
//! commit, the next inserts its rows, and only their stock updates take the
//! voucher's row in turn (the update comes last, so it is held from there to
//! the commit). Two transactions holding one order id meet on its primary
//! key: the second waits for the first and then skips it as stored.
//!
//! Invariant: each caller gets the outcome of its own orders. If a combined
//! transaction fails, each batch is retried alone, so one batch's conflict
//! never fails another's orders.

use std::collections::HashSet;
use std::sync::Arc;

use cityhub_core::orders::store::{store_batch, StoreError, Stored};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::{OrderId, UserId, VoucherId};
use sqlx::MySqlPool;
use tokio::sync::{mpsc, oneshot, Mutex};

struct Job {
    orders: Vec<OrderMessage>,
    done: oneshot::Sender<Result<Stored, StoreError>>,
}

/// Handle to the writer task.
pub struct Combiner {
    tx: mpsc::Sender<Job>,
}

impl Combiner {
    /// Starts `writers` writer tasks (at least one) sharing one queue.
    pub fn spawn(db: MySqlPool, max_rows: usize, writers: usize) -> Self {
        let (tx, rx) = mpsc::channel(1024);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..writers.max(1) {
            tokio::spawn(run(Arc::clone(&rx), db.clone(), max_rows));
        }
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

/// Takes what is waiting (up to `max_rows`) when the queue is free, then
/// stores it while the next writer takes its own.
async fn take(rx: &Mutex<mpsc::Receiver<Job>>, max_rows: usize) -> Option<Vec<Job>> {
    let mut rx = rx.lock().await;
    let first = rx.recv().await?;
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
    Some(jobs)
}

async fn run(rx: Arc<Mutex<mpsc::Receiver<Job>>>, db: MySqlPool, max_rows: usize) {
    while let Some(jobs) = take(&rx, max_rows).await {
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
