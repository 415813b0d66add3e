//! The parking lot: messages a consumer will not use (a rule refused them,
//! they cannot be parsed, or they kept failing until their last delivery) are
//! stored in `parked_messages` with what they were and why, then acked, so one
//! bad message never blocks a queue and nothing is silently dropped. An
//! operator lists them and replays them (`cityhub parked`) once the cause is
//! fixed; a replayed row keeps its record with `replayed_at` set.

use chrono::{DateTime, Utc};
use sqlx::MySqlPool;

use crate::mq::consumer::Delivery;

/// What the consumer knows of a message it parks.
#[derive(Debug, Clone)]
pub struct Parking<'a> {
    /// A stable label of the refusal (`revoked`, `stock_exhausted`, ...).
    pub kind: &'a str,
    /// The order the message carried, if it parsed.
    pub order_id: Option<u64>,
    /// The shopper of that order was told 202.
    pub accepted: bool,
    /// For humans.
    pub detail: &'a str,
}

/// Stores `delivery` as parked; false when it was parked already (a
/// redelivery of a parked message).
pub async fn park(db: &MySqlPool, delivery: &Delivery, why: &Parking<'_>) -> Result<bool, sqlx::Error> {
    tracing::warn!(
        msg_id = %delivery.msg_id, topic = %delivery.topic, kind = why.kind, order_id = ?why.order_id,
        accepted = why.accepted, detail = why.detail, "parking message"
    );
    // A plain insert: the unique key says "parked already". (`ON DUPLICATE
    // KEY UPDATE` cannot tell: the driver counts found rows as affected.)
    let inserted = sqlx::query(
        "INSERT INTO parked_messages (topic, msg_id, kind, order_id, accepted, reason, body) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&delivery.topic)
    .bind(&delivery.msg_id)
    .bind(why.kind)
    .bind(why.order_id)
    .bind(why.accepted)
    .bind(why.detail.chars().take(255).collect::<String>())
    .bind(delivery.body.as_ref())
    .execute(db)
    .await;
    match inserted {
        Ok(_) => Ok(true),
        Err(err) if crate::db::violated_unique_key(&err).as_deref() == Some("uk_parked_msg") => Ok(false),
        Err(err) => Err(err),
    }
}

/// One parked message.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Parked {
    pub id: u64,
    pub topic: String,
    pub msg_id: String,
    pub kind: String,
    pub order_id: Option<u64>,
    pub accepted: bool,
    pub reason: String,
    pub body: Vec<u8>,
    pub created_at: DateTime<Utc>,
    pub replayed_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "id, topic, msg_id, kind, order_id, accepted, reason, body, created_at, replayed_at";

/// Parked messages, oldest first: only those not replayed yet unless `all`.
pub async fn list(db: &MySqlPool, all: bool, limit: u32) -> Result<Vec<Parked>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM parked_messages WHERE (? OR replayed_at IS NULL) ORDER BY id LIMIT ?");
    sqlx::query_as(&sql).bind(all).bind(limit).fetch_all(db).await
}

/// Parked message `id`.
pub async fn get(db: &MySqlPool, id: u64) -> Result<Option<Parked>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM parked_messages WHERE id = ?")).bind(id).fetch_optional(db).await
}

/// Records that `id` was published again.
pub async fn mark_replayed(db: &MySqlPool, id: u64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE parked_messages SET replayed_at = CURRENT_TIMESTAMP(3) WHERE id = ?")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Why a parked message was not replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("no parked message {0}")]
    Unknown(u64),
    #[error("parked message {0} was replayed already")]
    AlreadyReplayed(u64),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error("the broker did not take it: {0}")]
    Broker(#[from] crate::mq::MqError),
}

/// Publishes parked message `id` again, unchanged, to its topic (consumers
/// are idempotent, so a replay of something already handled changes
/// nothing), then marks it replayed.
pub async fn replay(db: &MySqlPool, producer: &crate::mq::DefaultMQProducer, id: u64) -> Result<(), ReplayError> {
    let parked = get(db, id).await?.ok_or(ReplayError::Unknown(id))?;
    if parked.replayed_at.is_some() {
        return Err(ReplayError::AlreadyReplayed(id));
    }
    let key = parked.order_id.map_or_else(|| format!("parked-{id}"), |o| o.to_string());
    let message = rocketmq_model::common::message::message_single::Message::builder()
        .topic(parked.topic.as_str())
        .key(key)
        .body(parked.body)
        .build_unchecked();
    producer.send(message).await?;
    mark_replayed(db, id).await?;
    Ok(())
}
