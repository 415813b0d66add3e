//! The parking lot: messages a consumer cannot use are stored in
//! `parked_messages` with the reason, then acked, so one bad message never
//! blocks a queue and nothing is silently dropped.

use sqlx::MySqlPool;

use super::consumer::Delivery;

/// Stores `delivery` with `reason`.
pub async fn park(db: &MySqlPool, delivery: &Delivery, reason: &str) -> Result<(), sqlx::Error> {
    tracing::warn!(msg_id = %delivery.msg_id, topic = %delivery.topic, reason, "parking message");
    sqlx::query("INSERT INTO parked_messages (topic, msg_id, reason, body) VALUES (?, ?, ?, ?)")
        .bind(&delivery.topic)
        .bind(&delivery.msg_id)
        .bind(reason.chars().take(255).collect::<String>())
        .bind(delivery.body.as_ref())
        .execute(db)
        .await?;
    Ok(())
}
