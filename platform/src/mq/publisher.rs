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
//! message; see docs/GUARANTEES.md on what a 202 guarantees).
//!
//! The window: a message waits at most `wait_max` for its send to start
//! (for its batch to fill and for one of `in_flight` sends to end); one that
//! waited longer is answered [`PublishError::Expired`] and never sent. So a
//! publish answered `Ok` was stored within [`BatchConfig::window`] of its
//! call, whatever the broker's speed: the bound the reconciler waits out
//! before it reads what was published before a Redis loss.
//!
//! Recovery: the RocketMQ client opens a circuit breaker per broker address
//! after 5 failed connects (CityHub sets how long it stays open,
//! `mq.reconnect_after_ms`). A publisher made with [`BatchPublisher::start`]
//! also replaces its producer (a new client instance) after
//! [`RENEW_AFTER_FAILURES`] failed batches in a row, at most once per
//! [`RENEW_EVERY`], for a client left in a state it does not leave itself.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rocketmq_client_rust::{ClientRuntime, DefaultMQProducer};
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
    #[error("not sent: its send could not start within {0:?}")]
    Expired(Duration),
    #[error("publisher is shut down")]
    Closed,
}

struct Job {
    key: String,
    body: Vec<u8>,
    /// When `publish` was called: the start of the message's window.
    at: Instant,
    done: oneshot::Sender<Result<(), PublishError>>,
}

/// Batch settings, from [`MqSettings`].
#[derive(Debug, Clone, Copy)]
pub struct BatchConfig {
    pub max: usize,
    pub linger: Duration,
    pub in_flight: usize,
    pub timeout: Duration,
    /// The longest a message waits for its send to start.
    pub wait_max: Duration,
}

impl From<&MqSettings> for BatchConfig {
    fn from(s: &MqSettings) -> Self {
        Self {
            max: s.batch_max,
            linger: s.batch_linger_ms,
            in_flight: s.batch_in_flight,
            timeout: s.send_timeout_ms,
            wait_max: s.publish_wait_max_ms,
        }
    }
}

impl BatchConfig {
    /// How long after its `publish` call a message can reach the broker:
    /// its longest wait, the send's timeout and the margin that catches a
    /// send hanging past it ([`super::bounded_send`]). Past it, a message
    /// is either stored and answered, or answered an error.
    pub fn window(&self) -> Duration {
        self.wait_max + self.timeout + super::SEND_MARGIN
    }
}

/// Failed batches in a row after which a renewing publisher replaces its producer.
pub const RENEW_AFTER_FAILURES: u32 = 2;
/// The shortest time between two producer renewals.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);

/// How to start a fresh producer, for a publisher that renews its own.
struct Renewal {
    client: Arc<ClientRuntime>,
    settings: MqSettings,
    group: String,
    last: Mutex<Option<Instant>>,
}

/// The producer in use, and what the sends have seen of it.
struct Sender {
    producer: RwLock<DefaultMQProducer>,
    failures: AtomicU32,
    renewal: Option<Renewal>,
    /// Shut down: no producer is started any more.
    closed: AtomicBool,
}

impl Sender {
    fn producer(&self) -> DefaultMQProducer {
        self.producer.read().expect("producer lock").clone()
    }

    /// Counts a batch's outcome; after enough failures in a row, starts a
    /// fresh producer in the background and swaps it in.
    fn observe(self: &Arc<Self>, ok: bool) {
        if ok {
            self.failures.store(0, Ordering::Relaxed);
            return;
        }
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(renewal) = &self.renewal else { return };
        if failures < RENEW_AFTER_FAILURES || self.closed.load(Ordering::Relaxed) {
            return;
        }
        {
            let mut last = renewal.last.lock().expect("renewal lock");
            if last.is_some_and(|at| at.elapsed() < RENEW_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let Some(renewal) = &this.renewal else { return };
            let start = super::start_producer(&renewal.client, &renewal.settings, &renewal.group);
            match tokio::time::timeout(Duration::from_secs(5), start).await {
                Ok(Ok(fresh)) => {
                    // Swapped under the lock `shutdown` takes, so a publisher
                    // shut down meanwhile keeps no live producer.
                    let swapped = {
                        let mut current = this.producer.write().expect("producer lock");
                        if this.closed.load(Ordering::Relaxed) {
                            Err(fresh)
                        } else {
                            Ok(std::mem::replace(&mut *current, fresh))
                        }
                    };
                    let mut old = match swapped {
                        Ok(old) => old,
                        Err(mut unused) => return unused.shutdown().await,
                    };
                    this.failures.store(0, Ordering::Relaxed);
                    metrics::counter!(m::MQ_PRODUCER_RENEWALS).increment(1);
                    tracing::warn!(group = %renewal.group, failures, "publishes kept failing; producer replaced");
                    // In-flight sends hold clones of the old producer; let them finish first.
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    let _ = tokio::time::timeout(Duration::from_secs(5), old.shutdown()).await;
                }
                Ok(Err(err)) => tracing::warn!(error = %err, "cannot start a fresh producer yet"),
                Err(_) => tracing::warn!("a fresh producer did not start within 5 s"),
            }
        });
    }
}

/// Publishes to one topic in batches. Clones share the batching task and
/// the producer.
#[derive(Clone)]
pub struct BatchPublisher {
    tx: mpsc::Sender<Job>,
    sender: Arc<Sender>,
}

impl BatchPublisher {
    /// Starts the batching task on the current runtime, sending with
    /// `producer` for good (tests and tools that manage their producer).
    pub fn spawn(producer: DefaultMQProducer, topic: String, cfg: BatchConfig) -> Self {
        Self::run_with(
            Sender {
                producer: RwLock::new(producer),
                failures: AtomicU32::new(0),
                renewal: None,
                closed: AtomicBool::new(false),
            },
            topic,
            cfg,
        )
    }

    /// Starts a producer for `group` and the batching task, which replaces
    /// the producer when publishes keep failing (see the module doc).
    pub async fn start(
        client: &Arc<ClientRuntime>,
        settings: &MqSettings,
        group: &str,
        topic: String,
    ) -> Result<Self, MqError> {
        let producer = super::start_producer(client, settings, group).await?;
        let renewal = Renewal {
            client: Arc::clone(client),
            settings: settings.clone(),
            group: group.to_owned(),
            last: Mutex::new(None),
        };
        let sender = Sender {
            producer: RwLock::new(producer),
            failures: AtomicU32::new(0),
            renewal: Some(renewal),
            closed: AtomicBool::new(false),
        };
        Ok(Self::run_with(sender, topic, BatchConfig::from(settings)))
    }

    fn run_with(sender: Sender, topic: String, cfg: BatchConfig) -> Self {
        metrics::counter!(m::MQ_PUBLISHED, "topic" => topic.clone()).increment(0);
        metrics::counter!(m::MQ_PUBLISH_FAILURES, "topic" => topic.clone()).increment(0);
        metrics::counter!(m::MQ_PUBLISH_EXPIRED, "topic" => topic.clone()).increment(0);
        metrics::counter!(m::MQ_PRODUCER_RENEWALS).increment(0);
        let (tx, rx) = mpsc::channel(cfg.max * cfg.in_flight * 4);
        let sender = Arc::new(sender);
        tokio::spawn(run(rx, Arc::clone(&sender), Arc::from(topic), cfg));
        Self { tx, sender }
    }

    /// Shuts down the producer in use and starts no other: the owner's last
    /// step before the client runtime stops, whose shutdown otherwise waits
    /// out a live producer's tasks for 30 s. Publishes after it fail.
    pub async fn shutdown(&self) {
        let mut producer = {
            let current = self.sender.producer.write().expect("producer lock");
            self.sender.closed.store(true, Ordering::Relaxed);
            current.clone()
        };
        producer.shutdown().await;
    }

    /// Publishes `body` with message key `key`; resolves once the broker
    /// stored it, or with the reason it did not.
    pub async fn publish(&self, key: String, body: Vec<u8>) -> Result<(), PublishError> {
        let (done, answer) = oneshot::channel();
        self.tx.send(Job { key, body, at: Instant::now(), done }).await.map_err(|_| PublishError::Closed)?;
        answer.await.unwrap_or(Err(PublishError::Closed))
    }
}

async fn run(mut rx: mpsc::Receiver<Job>, sender: Arc<Sender>, topic: Arc<str>, cfg: BatchConfig) {
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
        let batch = without_expired(batch, cfg.wait_max, &topic);
        if batch.is_empty() {
            continue;
        }
        let (sender, topic) = (Arc::clone(&sender), Arc::clone(&topic));
        tokio::spawn(async move {
            let ok = send(&sender.producer(), &topic, batch, cfg.timeout).await;
            sender.observe(ok);
            drop(permit);
        });
    }
}

/// Answers [`PublishError::Expired`] to the jobs that waited past
/// `wait_max` (their send would end past their window) and keeps the rest.
fn without_expired(batch: Vec<Job>, wait_max: Duration, topic: &str) -> Vec<Job> {
    let (fresh, expired): (Vec<Job>, Vec<Job>) = batch.into_iter().partition(|job| job.at.elapsed() <= wait_max);
    if !expired.is_empty() {
        metrics::counter!(m::MQ_PUBLISH_EXPIRED, "topic" => topic.to_owned()).increment(expired.len() as u64);
        tracing::warn!(
            topic,
            expired = expired.len(),
            ?wait_max,
            "messages waited too long to be sent; answered unsent"
        );
    }
    for job in expired {
        let _ = job.done.send(Err(PublishError::Expired(wait_max)));
    }
    fresh
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

/// Sends one batch and answers its waiters; true when the broker stored it.
async fn send(producer: &DefaultMQProducer, topic: &str, batch: Vec<Job>, timeout: Duration) -> bool {
    let started = Instant::now();
    let size = batch.len();
    let (messages, waiters): (Vec<Message>, Vec<_>) = batch
        .into_iter()
        .map(|job| {
            let msg = Message::builder().topic(topic).key(job.key).body(job.body).build_unchecked();
            (msg, job.done)
        })
        .unzip();
    let outcome = match super::bounded_send(
        timeout,
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
    let ok = outcome.is_ok();
    for waiter in waiters {
        let _ = waiter.send(outcome.clone());
    }
    ok
}
