//! Consumer lag, as this process sees it: for each queue of the topic that
//! this consumer holds, the broker's max offset minus the offset this
//! consumer has consumed up to, summed into the
//! [`CONSUMER_LAG`](crate::metrics::CONSUMER_LAG) gauge every few seconds.
//!
//! Each instance reports the queues it holds, so the group's lag is the sum
//! over instances. Offsets are read from the consumer's memory, never
//! re-read from the broker: the client's "read from store" overwrites the
//! in-memory offset, which would move a live consumer backwards. A failed
//! sample keeps the last value and is logged; it never stops the probe.

use std::sync::Arc;
use std::time::Duration;

use rocketmq_client_rust::DefaultMQPushConsumer;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::MqError;
use crate::metrics as m;

/// Messages on `topic` past this consumer's consumed offsets.
pub async fn sample(consumer: &Mutex<DefaultMQPushConsumer>, topic: &str) -> Result<i64, MqError> {
    let mut consumer = consumer.lock().await;
    let Some(store) = consumer.offset_store() else {
        return Ok(0);
    };
    let mut lag = 0;
    for (queue, consumed) in store.clone_offset_table(topic).await {
        let stored = consumer.max_offset(&queue).await?;
        lag += (stored - consumed.max(0)).max(0);
    }
    Ok(lag)
}

/// Samples every `every` until `stop` is cancelled.
pub(super) async fn run(
    consumer: Arc<Mutex<DefaultMQPushConsumer>>,
    group: String,
    topic: String,
    every: Duration,
    stop: CancellationToken,
) {
    let gauge = metrics::gauge!(m::CONSUMER_LAG, "topic" => topic.clone(), "group" => group.clone());
    gauge.set(0.0);
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = ticks.tick() => match sample(&consumer, &topic).await {
                Ok(lag) => gauge.set(lag as f64),
                Err(err) => tracing::debug!(error = %err, %topic, %group, "consumer lag not sampled"),
            },
        }
    }
}
