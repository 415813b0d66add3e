//! Push consumption with async handlers and ack-after-durable semantics.
//!
//! The RocketMQ client calls listeners synchronously on a blocking thread of
//! its own runtime; `Listener` hands each batch to the application's runtime
//! and waits for the handler's verdict. [`Ack::Done`] acks the batch,
//! [`Ack::Retry`] sends it back for redelivery. Delivery is at-least-once:
//! handlers must be idempotent.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use rocketmq_client_rust::{
    ClientResult, ClientRuntime, ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus, DefaultMQPushConsumer,
    MQPushConsumer, MessageListenerConcurrently,
};
use rocketmq_model::common::consumer::consume_from_where::ConsumeFromWhere;
use rocketmq_model::common::message::message_ext::MessageExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::MqError;
use crate::config::MqSettings;

/// One delivered message, owned.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub msg_id: String,
    pub topic: String,
    pub body: Bytes,
    /// 0 on first delivery (more for a message the broker's retry topic
    /// delivers again, or a consumer that handed it back).
    pub reconsume_times: i32,
    /// The message queue of the topic it was stored in, and its offset there.
    pub queue_id: i32,
    pub queue_offset: i64,
}

/// A handler's verdict on a whole batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    /// Every effect is durable (or the message was parked): ack.
    Done,
    /// A transient failure: redeliver later.
    Retry,
}

/// Processes batches of messages.
pub trait BatchHandler: Send + Sync + 'static {
    fn handle(&self, batch: Vec<Delivery>) -> impl Future<Output = Ack> + Send;
}

struct Listener<H> {
    handler: Arc<H>,
    app: tokio::runtime::Handle,
}

impl<H: BatchHandler> MessageListenerConcurrently for Listener<H> {
    fn consume_message(
        &self,
        msgs: &[&MessageExt],
        _context: &ConsumeConcurrentlyContext,
    ) -> ClientResult<ConsumeConcurrentlyStatus> {
        let batch: Vec<Delivery> = msgs
            .iter()
            .map(|m| Delivery {
                msg_id: m.msg_id().to_string(),
                topic: m.topic().to_string(),
                body: m.body().unwrap_or_default(),
                reconsume_times: m.reconsume_times(),
                queue_id: m.queue_id(),
                queue_offset: m.queue_offset(),
            })
            .collect();
        let handler = Arc::clone(&self.handler);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.app.spawn(async move {
            let _ = tx.send(handler.handle(batch).await);
        });
        Ok(match rx.blocking_recv() {
            Ok(Ack::Done) => ConsumeConcurrentlyStatus::ConsumeSuccess,
            _ => ConsumeConcurrentlyStatus::ReconsumeLater,
        })
    }
}

/// How often the broker's retry topic delivers a message handed back before
/// its dead-letter queue (handlers that never answer `Retry` never see it).
const MAX_RECONSUME_TIMES: i32 = 16;

/// How much longer than the broker's hold a consumer waits for a pull's answer.
const PULL_ANSWER_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The client's consume timeout, in minutes: in effect never.
const CONSUME_TIMEOUT_MINUTES: u64 = super::runtime::NEVER.as_secs() / 60;

/// A running push consumer, with its lag probe.
pub struct Consumer {
    inner: Arc<Mutex<DefaultMQPushConsumer>>,
    stop_probe: CancellationToken,
    probe: tokio::task::JoinHandle<()>,
}

impl Consumer {
    /// Subscribes `group` to `topic` (from the first offset for a new group)
    /// and starts delivering batches of up to `settings.consume_batch_max`
    /// to `handler` on the current runtime; samples its lag every
    /// `settings.lag_sample_ms`.
    pub async fn start<H: BatchHandler>(
        client: &Arc<ClientRuntime>,
        settings: &MqSettings,
        group: &str,
        topic: &str,
        handler: Arc<H>,
    ) -> Result<Self, MqError> {
        let hold = settings.pull_hold_ms.as_millis() as u64;
        let mut inner = DefaultMQPushConsumer::builder(Arc::clone(client))
            .client_config(super::client_config("consumer", settings))
            .name_server_addr(settings.namesrv_addr.clone())
            .consumer_group(group.to_owned())
            .consume_from_where(ConsumeFromWhere::ConsumeFromFirstOffset)
            .consume_message_batch_max_size(settings.consume_batch_max)
            .pull_batch_size(settings.consume_batch_max.max(32))
            .consume_thread_min(settings.consume_threads)
            .consume_thread_max(settings.consume_threads)
            .max_reconsume_times(MAX_RECONSUME_TIMES)
            .pull_time_delay_millis_when_exception(settings.pull_backoff_ms.as_millis() as u64)
            .long_polling_millis(hold, hold + PULL_ANSWER_MARGIN.as_millis() as u64)
            // Never give a batch back for being slow: a message handed back
            // leaves the topic (see `progress`). A handler holds what it cannot
            // finish yet; the client's 15-minute default would move it anyway
            // (as would its blocking lane's deadlines, lifted in `runtime`).
            .consume_timeout(CONSUME_TIMEOUT_MINUTES)
            .await_termination_millis_when_shutdown(5_000)
            .build();
        inner.subscribe(topic.to_owned(), "*").await?;
        inner.register_message_listener_concurrently(Listener { handler, app: tokio::runtime::Handle::current() });
        inner.start().await?;
        let inner = Arc::new(Mutex::new(inner));
        let stop_probe = CancellationToken::new();
        let probe = tokio::spawn(super::lag::run(
            Arc::clone(&inner),
            group.to_owned(),
            topic.to_owned(),
            settings.lag_sample_ms,
            stop_probe.clone(),
        ));
        Ok(Self { inner, stop_probe, probe })
    }

    /// Messages on `topic` past this consumer's consumed offsets, now.
    pub async fn lag(&self, topic: &str) -> Result<i64, MqError> {
        super::lag::sample(&self.inner, topic).await.map(|s| s.lag)
    }

    /// Stops pulling and waits for in-flight batches to finish.
    pub async fn shutdown(self) {
        self.stop_probe.cancel();
        let _ = self.probe.await;
        self.inner.lock().await.shutdown().await;
    }
}
