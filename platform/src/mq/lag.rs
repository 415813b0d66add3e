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

/// The lag of a whole consumer group, for decisions that must wait until
/// nothing is in flight: each instance reports the lag of the queues it
/// holds into one Redis hash (`mq:lag:<group>`, field per instance, value
/// `<lag>:<ms>`); the group's lag is the sum of the fresh reports, and
/// unknown (`None`) when no instance reported lately. A report older than
/// three sample periods is an instance that went away; its queues move to
/// the others at the next rebalance, which then report them.
#[derive(Clone)]
pub struct LagBoard {
    kv: crate::kv::Kv,
    key: String,
    instance: String,
    fresh_for: Duration,
}

impl LagBoard {
    pub fn new(kv: &crate::kv::Kv, group: &str, sample_every: Duration) -> Self {
        Self {
            kv: kv.clone(),
            key: kv.keys.key(format_args!("mq:lag:{group}")),
            instance: format!("{}-{:08x}", std::process::id(), rand::random::<u32>()),
            fresh_for: sample_every * 3 + Duration::from_secs(1),
        }
    }

    /// Records this instance's lag now.
    pub async fn report(&self, lag: i64) -> redis::RedisResult<()> {
        let value = format!("{lag}:{}", crate::now_ms());
        redis::pipe()
            .hset(&self.key, &self.instance, value)
            .ignore()
            .pexpire(&self.key, self.fresh_for.as_millis() as i64 * 10)
            .ignore()
            .query_async(&mut self.kv.conn())
            .await
    }

    /// The sum of the fresh reports; `None` when there are none.
    pub async fn group_lag(&self) -> redis::RedisResult<Option<i64>> {
        let reports: std::collections::HashMap<String, String> =
            redis::cmd("HGETALL").arg(&self.key).query_async(&mut self.kv.conn()).await?;
        let oldest = crate::now_ms().saturating_sub(self.fresh_for.as_millis() as u64);
        let fresh: Vec<i64> = reports
            .values()
            .filter_map(|v| v.split_once(':'))
            .filter_map(|(lag, at)| Some((lag.parse::<i64>().ok()?, at.parse::<u64>().ok()?)))
            .filter(|(_, at)| *at >= oldest)
            .map(|(lag, _)| lag)
            .collect();
        Ok((!fresh.is_empty()).then(|| fresh.iter().sum()))
    }

    /// Withdraws this instance's report (on shutdown).
    pub async fn leave(&self) {
        let _: redis::RedisResult<()> =
            redis::cmd("HDEL").arg(&self.key).arg(&self.instance).query_async(&mut self.kv.conn()).await;
    }
}
