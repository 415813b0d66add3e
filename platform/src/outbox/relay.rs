//! The outbox relay: claims due, unpublished rows (`FOR UPDATE SKIP LOCKED`,
//! so several relays share the work), publishes them in batches, one batch
//! per message queue, and marks them published in the same transaction.
//!
//! - Per-key order: a key's events go to one queue of their topic (a stable
//!   hash of the key) in id order. A claimed row waits while an older row of
//!   its key is not in this claim (another relay holds it, or it is backing
//!   off), and after a failed row the later rows of its key wait too.
//! - At least once: the relay marks rows only after the broker stored them; a
//!   relay that dies in between leaves them unmarked (its transaction rolls
//!   back) and they are published again.
//! - A failed publish backs off exponentially (`attempts`, `next_attempt_at`).
//!   A topic's first send creates it, in one short try, so that with no
//!   broker up each failing send ends within a few send timeouts.
//! - Published rows are purged after the retention period.
//! - The relay's transaction is READ COMMITTED: it holds its claimed rows
//!   across a publish, and under REPEATABLE READ its scans would also hold
//!   gap locks that block (and deadlock with) the business transactions
//!   inserting new events meanwhile.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use rocketmq_model::common::message::message_queue::MessageQueue;
use rocketmq_model::common::message::message_single::Message;
use sqlx::{MySql, MySqlPool, QueryBuilder};
use tokio_util::sync::CancellationToken;

use crate::config::{MqSettings, OutboxSettings};
use crate::metrics as m;
use crate::mq::DefaultMQProducer;

/// What one relay round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub published: usize,
    pub failed: usize,
    /// Claimed but left for later to keep their key's order.
    pub held_back: usize,
}

#[derive(Debug, sqlx::FromRow)]
struct Row {
    id: u64,
    topic: String,
    msg_key: String,
    payload: String,
    attempts: u32,
}

/// An event as published: (event id, key, payload).
type Event<'a> = (u64, &'a str, &'a str);

/// An outbox event on its way to the broker (the binlog relay's rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub id: u64,
    pub topic: String,
    pub msg_key: String,
    pub payload: String,
}

/// Publishes the outbox; share one per process.
pub struct Relay {
    db: MySqlPool,
    producer: DefaultMQProducer,
    settings: OutboxSettings,
    /// Queues per topic when the relay creates one.
    topic_queues: u32,
    /// The longest a send may take before it counts as failed.
    send_timeout: Duration,
    topics: tokio::sync::Mutex<HashSet<String>>,
}

/// The queue of `key` among `queues` (at least one): FNV-1a of the key, so
/// the same key picks the same queue in every process, build and relay.
fn queue_of(key: &str, queues: usize) -> usize {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    (hash % queues.max(1) as u64) as usize
}

impl Relay {
    /// A relay sending with `producer`, creating topics with
    /// `mq.topic_queues` queues and giving a send `mq.send_timeout_ms`.
    pub fn new(db: MySqlPool, producer: DefaultMQProducer, settings: OutboxSettings, mq: &MqSettings) -> Self {
        // The binlog relay's alert reads these in either mode.
        metrics::counter!(m::OUTBOX_SWEPT).increment(0);
        metrics::gauge!(m::OUTBOX_RELAY_POLLING).set(0.0);
        Self {
            db,
            producer,
            settings,
            topic_queues: mq.topic_queues,
            send_timeout: mq.send_timeout_ms,
            topics: tokio::sync::Mutex::new(HashSet::new()),
        }
    }

    /// One round: claim, publish, mark (see the module doc).
    pub async fn run_once(&self) -> Result<Round, sqlx::Error> {
        self.round(Duration::ZERO).await
    }

    /// One round over the rows written at least `older_than` ago: the
    /// binlog relay's safety net; answers how many it published.
    pub async fn sweep(&self, older_than: Duration) -> Result<usize, sqlx::Error> {
        Ok(self.round(older_than).await?.published)
    }

    async fn round(&self, older_than: Duration) -> Result<Round, sqlx::Error> {
        let mut conn = self.db.acquire().await?;
        sqlx::Executor::execute(&mut *conn, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED").await?;
        let mut tx = sqlx::Connection::begin(&mut *conn).await?;
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, topic, msg_key, payload, attempts FROM outbox \
             WHERE published_at IS NULL AND next_attempt_at <= CURRENT_TIMESTAMP(3) \
             AND created_at <= CURRENT_TIMESTAMP(3) - INTERVAL ? MICROSECOND \
             ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED",
        )
        .bind(older_than.as_micros() as u64)
        .bind(self.settings.batch_max as u64)
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            tx.commit().await?;
            return Ok(Round::default());
        }
        let waiting = self.older_unclaimed(&mut tx, &rows).await?;
        let mut round = Round::default();
        let mut blocked: HashSet<String> = HashSet::new();
        let mut groups: BTreeMap<(String, usize), Vec<&Row>> = BTreeMap::new();
        let mut routes: HashMap<String, Result<Vec<MessageQueue>, String>> = HashMap::new();
        for row in &rows {
            if waiting.get(&row.msg_key).is_some_and(|older| *older < row.id) {
                round.held_back += 1;
                continue;
            }
            if !routes.contains_key(&row.topic) {
                routes.insert(row.topic.clone(), self.queues(&row.topic).await);
            }
            let count = routes[&row.topic].as_ref().map_or(1, Vec::len);
            let queue = queue_of(&row.msg_key, count);
            groups.entry((row.topic.clone(), queue)).or_default().push(row);
        }
        let mut published = Vec::new();
        for ((topic, queue), group) in groups {
            // After a failure, a key's later rows wait for the next round.
            let group: Vec<&Row> = group.into_iter().filter(|r| !blocked.contains(&r.msg_key)).collect();
            let sent = match &routes[&topic] {
                Ok(queues) => {
                    let events: Vec<Event<'_>> =
                        group.iter().map(|r| (r.id, r.msg_key.as_str(), r.payload.as_str())).collect();
                    self.publish(&topic, queues[queue].clone(), &events).await
                }
                Err(no_route) => Err(no_route.clone()),
            };
            match sent {
                Ok(()) => {
                    metrics::counter!(m::OUTBOX_PUBLISHED, "topic" => topic.clone()).increment(group.len() as u64);
                    published.extend(group.iter().map(|r| r.id));
                }
                Err(err) => {
                    tracing::warn!(%topic, queue, rows = group.len(), error = %err, "outbox publish failed; backing off");
                    metrics::counter!(m::OUTBOX_FAILURES, "topic" => topic.clone()).increment(1);
                    for row in &group {
                        blocked.insert(row.msg_key.clone());
                        self.back_off(&mut tx, row, &err).await?;
                    }
                    round.failed += group.len();
                }
            }
        }
        if !published.is_empty() {
            let mut mark =
                QueryBuilder::<MySql>::new("UPDATE outbox SET published_at = CURRENT_TIMESTAMP(3) WHERE id IN (");
            let mut ids = mark.separated(", ");
            for id in &published {
                ids.push_bind(id);
            }
            mark.push(")");
            mark.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        round.published = published.len();
        Ok(round)
    }

    /// For each claimed key, the smallest id of an unpublished row of that
    /// key that this claim does not hold.
    async fn older_unclaimed(
        &self,
        tx: &mut sqlx::MySqlConnection,
        rows: &[Row],
    ) -> Result<HashMap<String, u64>, sqlx::Error> {
        let mut q = QueryBuilder::<MySql>::new(
            "SELECT msg_key, MIN(id) FROM outbox WHERE published_at IS NULL AND msg_key IN (",
        );
        let mut keys = q.separated(", ");
        for key in rows.iter().map(|r| &r.msg_key).collect::<HashSet<_>>() {
            keys.push_bind(key);
        }
        q.push(") AND id NOT IN (");
        let mut ids = q.separated(", ");
        for row in rows {
            ids.push_bind(row.id);
        }
        q.push(") GROUP BY msg_key");
        let found: Vec<(String, u64)> = q.build_query_as().fetch_all(&mut *tx).await?;
        Ok(found.into_iter().collect())
    }

    /// The write queues of `topic` (never empty), creating the topic the first time.
    async fn queues(&self, topic: &str) -> Result<Vec<MessageQueue>, String> {
        let mut created = self.topics.lock().await;
        // One short try: a failed send is tried again anyway, and a broker
        // outage must not hold each try for `ensure_topic`'s 30 s.
        if !created.contains(topic)
            && crate::mq::ensure_topic_within(&self.producer, topic, self.topic_queues, self.send_timeout).await
        {
            created.insert(topic.to_owned());
        }
        drop(created);
        let mut producer = self.producer.clone();
        match tokio::time::timeout(self.send_timeout, producer.fetch_publish_message_queues(topic)).await {
            Ok(Ok(queues)) if !queues.is_empty() => Ok(queues),
            Ok(Ok(_)) => Err(format!("topic {topic} has no writable queue")),
            Ok(Err(err)) => Err(format!("no route for topic {topic}: {err}")),
            Err(_) => Err(format!("no route for topic {topic} within {:?}", self.send_timeout)),
        }
    }

    /// Publishes `events` (id, key, payload) of `topic` to `target` in one batch.
    /// A send that outlasts `send_timeout` counts as failed (and is sent
    /// again by the caller).
    async fn publish(&self, topic: &str, target: MessageQueue, events: &[Event<'_>]) -> Result<(), String> {
        if events.is_empty() {
            return Ok(());
        }
        let messages: Vec<Message> = events
            .iter()
            .map(|(id, key, payload)| {
                let body = format!("{{\"event_id\":{id},\"payload\":{payload}}}");
                Message::builder().topic(topic).key(*key).body(body.into_bytes()).build_unchecked()
            })
            .collect();
        let timeout = self.send_timeout;
        let send = self.producer.send_batch_to_queue_with_timeout(messages, target, timeout.as_millis() as u64);
        match crate::mq::bounded_send(timeout, send).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err(format!("the broker did not answer within {timeout:?}")),
        }
    }

    /// Publishes `events` in their order, each key's to its queue (one
    /// batch per queue); fails at the first batch the broker did not store,
    /// so the caller sends them all again.
    pub async fn send(&self, events: &[Outgoing]) -> Result<(), String> {
        let mut groups: BTreeMap<(String, usize), Vec<Event<'_>>> = BTreeMap::new();
        let mut routes: HashMap<String, Vec<MessageQueue>> = HashMap::new();
        for e in events {
            if !routes.contains_key(&e.topic) {
                // No route is a failed attempt too: the name server drops a
                // broker's queues as soon as the broker's connection closes.
                let queues = self.queues(&e.topic).await.inspect_err(|_| {
                    metrics::counter!(m::OUTBOX_FAILURES, "topic" => e.topic.clone()).increment(1);
                })?;
                routes.insert(e.topic.clone(), queues);
            }
            let queue = queue_of(&e.msg_key, routes[&e.topic].len());
            groups.entry((e.topic.clone(), queue)).or_default().push((e.id, &e.msg_key, &e.payload));
        }
        for ((topic, queue), group) in groups {
            if let Err(err) = self.publish(&topic, routes[&topic][queue].clone(), &group).await {
                metrics::counter!(m::OUTBOX_FAILURES, "topic" => topic.clone()).increment(1);
                return Err(err);
            }
            metrics::counter!(m::OUTBOX_PUBLISHED, "topic" => topic).increment(group.len() as u64);
        }
        Ok(())
    }

    async fn back_off(&self, tx: &mut sqlx::MySqlConnection, row: &Row, err: &str) -> Result<(), sqlx::Error> {
        let delay =
            Duration::from_millis(200 * 2u64.saturating_pow(row.attempts.min(20))).min(self.settings.backoff_max_ms);
        sqlx::query(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ?, \
             next_attempt_at = CURRENT_TIMESTAMP(3) + INTERVAL ? MICROSECOND WHERE id = ?",
        )
        .bind(err.chars().take(255).collect::<String>())
        .bind(delay.as_micros() as u64)
        .bind(row.id)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    /// Deletes published rows older than the retention period; returns how many.
    pub async fn purge(&self) -> Result<u64, sqlx::Error> {
        let deleted = sqlx::query(
            "DELETE FROM outbox WHERE published_at IS NOT NULL \
             AND published_at < CURRENT_TIMESTAMP(3) - INTERVAL ? SECOND LIMIT 10000",
        )
        .bind(self.settings.retention_secs.as_secs())
        .execute(&self.db)
        .await?
        .rows_affected();
        Ok(deleted)
    }

    /// Samples the backlog and the age of the oldest unpublished row into
    /// their gauges.
    pub async fn sample(&self) -> Result<super::Backlog, sqlx::Error> {
        let backlog = super::backlog(&self.db).await?;
        metrics::gauge!(m::OUTBOX_BACKLOG).set(backlog.rows as f64);
        metrics::gauge!(m::OUTBOX_OLDEST_AGE).set(backlog.oldest_secs);
        Ok(backlog)
    }

    /// The upkeep both relays do on their own rhythm: samples the gauges,
    /// and purges if a minute has passed since `last_purge`.
    pub async fn keep(&self, last_purge: &mut tokio::time::Instant) {
        if let Err(err) = self.sample().await {
            tracing::debug!(error = %err, "outbox gauges not sampled");
        }
        if last_purge.elapsed() > Duration::from_secs(60) {
            *last_purge = tokio::time::Instant::now();
            if let Err(err) = self.purge().await {
                tracing::warn!(error = %err, "outbox purge failed");
            }
        }
    }

    /// Relays until `stop` (see [`Relay::poll`]), then stops the producer.
    pub async fn run(&self, stop: CancellationToken) -> anyhow::Result<()> {
        self.poll(&stop).await;
        self.shutdown().await;
        Ok(())
    }

    /// Stops the relay's producer.
    pub async fn shutdown(&self) {
        self.producer.clone().shutdown().await;
    }

    /// Relays until `stop`: a full round goes again at once, otherwise waits
    /// `poll_ms`; samples the gauges each round and purges once a minute.
    pub async fn poll(&self, stop: &CancellationToken) {
        let poll = self.settings.poll_ms;
        let mut last_purge = tokio::time::Instant::now();
        while !stop.is_cancelled() {
            let full = match self.run_once().await {
                Ok(round) => round.published + round.failed + round.held_back >= self.settings.batch_max,
                Err(err) => {
                    tracing::warn!(error = %err, "outbox relay round failed");
                    false
                }
            };
            self.keep(&mut last_purge).await;
            if !full {
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = tokio::time::sleep(poll) => {}
                }
            }
        }
    }
}
