//! Batching publisher: callers publish one message and await its fate; a
//! background task gathers messages for up to `linger` or `max` messages,
//! whichever comes first, and sends them with one `send_batch`. The broker
//! takes ~1.5k single sends/s here but tens of thousands of messages/s in
//! batches, so this is what lets the seckill path go past 1.5k orders/s.
//!
//! Invariant: every `publish` call gets exactly one answer; `Ok` only after
//! the broker stored the batch holding its message. Every send status the
//! broker answers means stored: `SendOk`, and also `FlushDiskTimeout`,
//! `FlushSlaveTimeout` and `SlaveNotAvailable`, which say only that a
//! synchronous flush or replica did not confirm in time (the master holds the
//! message; see the README on what a 202 guarantees).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rocketmq_client_rust::DefaultMQProducer;
use rocketmq_model::common::message::message_single::Message;
use rocketmq_model::result::SendStatus;
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::MqError;
use crate::config::MqSettings;
use crate::metrics as m;

/// Why a message was not published.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PublishError {
    #[error("broker did not store the batch: {0}")]
    Broker(String),
    #[error("broker did not answer within {0:?}")]
    Timeout(Duration),
    #[error("publisher is shut down")]
    Closed,
}

struct Job {
    key: String,
    body: Vec<u8>,
    done: oneshot::Sender<Result<(), PublishError>>,
}

/// Batch settings, from [`MqSettings`].
#[derive(Debug, Clone, Copy)]
pub struct BatchConfig {
    pub max: usize,
    pub linger: Duration,
    pub in_flight: usize,
    pub timeout: Duration,
}

impl From<&MqSettings> for BatchConfig {
    fn from(s: &MqSettings) -> Self {
        Self {
            max: s.batch_max,
            linger: Duration::from_millis(s.batch_linger_ms),
            in_flight: s.batch_in_flight,
            timeout: Duration::from_millis(s.send_timeout_ms),
        }
    }
}

/// Publishes to one topic in batches. Clones share the batching task.
#[derive(Clone)]
pub struct BatchPublisher {
    tx: mpsc::Sender<Job>,
}

impl BatchPublisher {
    /// Starts the batching task on the current runtime.
    pub fn spawn(producer: DefaultMQProducer, topic: String, cfg: BatchConfig) -> Self {
        metrics::counter!(m::MQ_PUBLISHED, "topic" => topic.clone()).increment(0);
        metrics::counter!(m::MQ_PUBLISH_FAILURES, "topic" => topic.clone()).increment(0);
        let (tx, rx) = mpsc::channel(cfg.max * cfg.in_flight * 4);
        tokio::spawn(run(rx, producer, Arc::from(topic), cfg));
        Self { tx }
    }

    /// Publishes `body` with message key `key`; resolves once the broker
    /// stored it, or with the reason it did not.
    pub async fn publish(&self, key: String, body: Vec<u8>) -> Result<(), PublishError> {
        let (done, answer) = oneshot::channel();
        self.tx.send(Job { key, body, done }).await.map_err(|_| PublishError::Closed)?;
        answer.await.unwrap_or(Err(PublishError::Closed))
    }
}

async fn run(mut rx: mpsc::Receiver<Job>, producer: DefaultMQProducer, topic: Arc<str>, cfg: BatchConfig) {
    let permits = Arc::new(Semaphore::new(cfg.in_flight));
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + cfg.linger;
        while batch.len() < cfg.max {
            tokio::select! {
                biased;
                job = rx.recv() => match job {
                    Some(job) => batch.push(job),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            break;
        };
        let (producer, topic) = (producer.clone(), Arc::clone(&topic));
        tokio::spawn(async move {
            send(&producer, &topic, batch, cfg.timeout).await;
            drop(permit);
        });
    }
}

/// The client hides the broker's remark, so the response code is all a log
/// can say of why the broker refused (a broker whose store was deleted under
/// it answers 2).
fn describe(err: &MqError) -> String {
    match err.broker_response_code() {
        Some(code) => format!("{err} (broker response code {code})"),
        None => err.to_string(),
    }
}

async fn send(producer: &DefaultMQProducer, topic: &str, batch: Vec<Job>, timeout: Duration) {
    let started = Instant::now();
    let size = batch.len();
    let (messages, waiters): (Vec<Message>, Vec<_>) = batch
        .into_iter()
        .map(|job| {
            let msg = Message::builder().topic(topic).key(job.key).body(job.body).build_unchecked();
            (msg, job.done)
        })
        .unzip();
    // The client has its own timeout; ours bounds the whole call in case it hangs.
    let outcome = match tokio::time::timeout(
        timeout + Duration::from_millis(500),
        producer.send_batch_with_timeout(messages, timeout.as_millis() as u64),
    )
    .await
    {
        Ok(Ok(result)) => {
            if result.send_status != SendStatus::SendOk {
                tracing::warn!(topic, size, status = ?result.send_status, "batch stored without flush or replica confirmation");
            }
            Ok(())
        }
        Ok(Err(err)) => Err(PublishError::Broker(describe(&err))),
        Err(_) => Err(PublishError::Timeout(timeout)),
    };
    metrics::histogram!(m::MQ_PUBLISH_BATCH_SIZE, "topic" => topic.to_owned()).record(size as f64);
    metrics::histogram!(m::MQ_PUBLISH_DURATION, "topic" => topic.to_owned()).record(started.elapsed().as_secs_f64());
    match &outcome {
        Ok(()) => metrics::counter!(m::MQ_PUBLISHED, "topic" => topic.to_owned()).increment(size as u64),
        Err(_) => metrics::counter!(m::MQ_PUBLISH_FAILURES, "topic" => topic.to_owned()).increment(1),
    }
    if let Err(err) = &outcome {
        tracing::warn!(topic, size, error = %err, "batch publish failed");
    }
    for waiter in waiters {
        let _ = waiter.send(outcome.clone());
    }
}
