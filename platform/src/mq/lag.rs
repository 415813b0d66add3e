//! Consumer lag, as this process sees it: for each queue of the topic that
//! this consumer holds, the broker's max offset minus the offset this
//! consumer has consumed up to, summed into the
//! [`CONSUMER_LAG`](crate::metrics::CONSUMER_LAG) gauge every few seconds,
//! beside [`CONSUMER_QUEUES`](crate::metrics::CONSUMER_QUEUES), the number of
//! queues it holds (zero until its first rebalance gives it some).
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

/// One reading of a consumer's place on a topic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// Messages past the consumed offsets of the queues it holds.
    pub lag: i64,
    /// Queues it holds.
    pub queues: usize,
}

/// Where the consumer stands on `topic`, now.
pub async fn sample(consumer: &Mutex<DefaultMQPushConsumer>, topic: &str) -> Result<Sample, MqError> {
    let mut consumer = consumer.lock().await;
    let Some(store) = consumer.offset_store() else {
        return Ok(Sample::default());
    };
    let table = store.clone_offset_table(topic).await;
    let mut sample = Sample { lag: 0, queues: table.len() };
    for (queue, consumed) in table {
        let stored = consumer.max_offset(&queue).await?;
        sample.lag += (stored - consumed.max(0)).max(0);
    }
    Ok(sample)
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
    let held = metrics::gauge!(m::CONSUMER_QUEUES, "topic" => topic.clone(), "group" => group.clone());
    gauge.set(0.0);
    held.set(0.0);
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = ticks.tick() => match sample(&consumer, &topic).await {
                Ok(sample) => {
                    gauge.set(sample.lag as f64);
                    held.set(sample.queues as f64);
                }
                Err(err) => tracing::debug!(error = %err, %topic, %group, "consumer lag not sampled"),
            },
        }
    }
}
