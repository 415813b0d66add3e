//! The lite pull consumer's drain rate, the reference beside the push
//! consumer's (`stages::send_and_drain`): an empty consumer polls a backlog
//! and commits each batch's offsets once it is "handled", as the worker acks
//! only after its effects are durable.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cityhub_platform::config::MqSettings;
use cityhub_platform::mq::{ClientRuntime, DefaultLitePullConsumer};

/// Longest wait of one poll: the deadline is checked at least this often.
const POLL_MS: u64 = 1_000;

/// Messages/s a lite pull consumer of `group` drains from `topic` (from its first offset), polling
/// batches of up to `batch` and committing offsets after each batch; stops once `n` messages came.
/// Rate is measured from the first polled message to the last.
pub async fn drain(
    client: &Arc<ClientRuntime>,
    mq: &MqSettings,
    group: &str,
    topic: &str,
    n: usize,
    batch: u32,
) -> anyhow::Result<f64> {
    let consumer = cityhub_platform::mq::start_lite_pull(client, mq, group, topic, batch).await?;
    let rate = poll_all(&consumer, n).await;
    consumer.shutdown().await;
    rate
}

/// Polls and commits until `n` messages came, for up to 120 s: messages/s
/// from the first batch to the last.
async fn poll_all(consumer: &DefaultLitePullConsumer, n: usize) -> anyhow::Result<f64> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = 0;
    let mut span: Option<(Instant, Instant)> = None;
    while seen < n {
        anyhow::ensure!(Instant::now() < deadline, "the lite pull consumer drained {seen} of {n} in 120 s");
        let msgs = consumer.poll_with_timeout_zero_copy(POLL_MS).await;
        if msgs.is_empty() {
            continue;
        }
        let now = Instant::now();
        span = Some((span.map_or(now, |(first, _)| first), now));
        seen += msgs.len();
        consumer.commit_all().await?;
    }
    Ok(span.map_or(0.0, |(first, last)| seen as f64 / (last - first).as_secs_f64().max(0.001)))
}
