//! The transactional outbox, shared by every flow that must announce a
//! change (a closed order releasing stock, a follow): [`enqueue`] writes the
//! event in the caller's own database transaction, so the change and its
//! announcement commit or roll back together; the [`relay`] publishes what
//! committed to RocketMQ, by polling the table or, with `outbox.relay =
//! "binlog"`, from MariaDB's binlog ([`binlog`]).
//!
//! Guarantees: every committed event is published at least once (a relay
//! that dies after publishing and before marking publishes again, so
//! consumers deduplicate by event id); events of one key are published to
//! the same message queue of their topic, in the order they were enqueued
//! (the poll relay) or committed (the binlog relay).

pub mod binlog;
pub mod relay;

use serde::Serialize;
use sqlx::MySqlConnection;

/// An event to announce.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Envelope<T> {
    /// The outbox row id: unique, increasing; consumers deduplicate by it.
    pub event_id: u64,
    pub payload: T,
}

/// Why an event was not enqueued.
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error("event payload does not serialize: {0}")]
    Payload(#[from] serde_json::Error),
}

/// Writes `payload` for `topic` under `key` inside the caller's transaction;
/// returns its event id. Nothing is published unless the transaction commits.
pub async fn enqueue<T: Serialize>(
    tx: &mut MySqlConnection,
    topic: &str,
    key: &str,
    payload: &T,
) -> Result<u64, OutboxError> {
    let body = serde_json::to_string(payload)?;
    let id = sqlx::query("INSERT INTO outbox (topic, msg_key, payload) VALUES (?, ?, ?)")
        .bind(topic)
        .bind(key)
        .bind(body)
        .execute(&mut *tx)
        .await?
        .last_insert_id();
    Ok(id)
}

/// Events committed and not published yet.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    pub rows: i64,
    /// Age of the oldest one, seconds (0 with no backlog).
    pub oldest_secs: f64,
}

/// The backlog now: one indexed count of the unpublished rows.
pub async fn backlog(db: &sqlx::MySqlPool) -> Result<Backlog, sqlx::Error> {
    let (rows, age): (i64, Option<f64>) = sqlx::query_as(
        "SELECT COUNT(*), CAST(TIMESTAMPDIFF(MICROSECOND, MIN(created_at), CURRENT_TIMESTAMP(3)) AS DOUBLE) / 1e6 \
         FROM outbox WHERE published_at IS NULL",
    )
    .fetch_one(db)
    .await?;
    Ok(Backlog { rows, oldest_secs: age.unwrap_or(0.0).max(0.0) })
}
