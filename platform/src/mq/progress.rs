//! A consumer group's progress on a topic, as the broker has it: for each
//! queue of the topic, its max offset (the next message's) and the offset
//! the group committed (everything below it was acked).
//!
//! This is the "nothing in flight" signal a decision can wait on: take a
//! [`Mark`] of the max offsets, then wait until [`Progress::behind`] answers 0: the
//! group's committed offsets are at or past it on every queue. It reads the
//! broker, never a consumer's memory or a report, so it covers queues no
//! instance holds (a killed worker's, a fresh one before its first
//! rebalance) and batches still in some worker's hands. It holds only while
//! consumers ack a message after its effect is durable and never move it out
//! of the topic (no hand-back to the broker's retry topic, no consume
//! timeout): the order worker keeps to that (see its module doc). Committed
//! offsets reach the broker with the client's next pull or offset flush (at
//! most ~5 s), so the signal may come late, never early.

use std::collections::BTreeMap;
use std::sync::Arc;

use rocketmq_client_rust::{ClientRuntime, DefaultMQAdminExt, MQAdminReadExt};
use tokio::sync::{mpsc, oneshot};

use super::MqError;
use crate::config::MqSettings;

/// Max offsets of every queue of a topic at one moment: (broker, queue id) -> offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark(pub BTreeMap<(String, i32), i64>);

/// Reads one group's progress on one topic from the brokers. The admin
/// client lives in a task of its own, so holders of a `Progress` do not
/// carry its (very deep) type.
#[derive(Clone)]
pub struct Progress {
    asks: mpsc::Sender<oneshot::Sender<Result<Offsets, MqError>>>,
}

/// One queue's two offsets.
struct QueueOffsets {
    max: i64,
    committed: i64,
}

type Offsets = BTreeMap<(String, i32), QueueOffsets>;

impl Progress {
    /// Starts an admin client on `client` for `group` on `topic`; it stops
    /// when the last clone of the `Progress` is dropped.
    pub async fn start(
        client: &Arc<ClientRuntime>,
        settings: &MqSettings,
        group: &str,
        topic: &str,
    ) -> Result<Self, MqError> {
        let mut admin = DefaultMQAdminExt::with_admin_ext_group(Arc::clone(client), super::instance_name("admin"));
        *admin.client_config_mut() = super::client_config("admin", settings);
        admin.set_namesrv_addr(settings.namesrv_addr.clone());
        // Boxed: the client's start future is deep enough to overflow the
        // compiler's layout limit in callers.
        Box::pin(admin.start()).await?;
        let (asks, mut questions) = mpsc::channel::<oneshot::Sender<Result<Offsets, MqError>>>(16);
        let (group, topic) = (group.to_owned(), topic.to_owned());
        tokio::spawn(async move {
            while let Some(answer) = questions.recv().await {
                let _ = answer.send(read(&admin, &group, &topic).await);
            }
            admin.shutdown().await;
        });
        Ok(Self { asks })
    }

    async fn read(&self) -> Result<Offsets, MqError> {
        let (answer, answered) = oneshot::channel();
        let gone = || MqError::internal("read consumer progress", std::io::Error::other("the admin task stopped"));
        self.asks.send(answer).await.map_err(|_| gone())?;
        answered.await.map_err(|_| gone())?
    }

    /// The topic's max offsets now; `None` when the brokers report no queue
    /// of it for the group (nothing could be shown to have reached a mark).
    pub async fn mark(&self) -> Result<Option<Mark>, MqError> {
        let queues = self.read().await?;
        Ok((!queues.is_empty()).then(|| Mark(queues.into_iter().map(|(queue, o)| (queue, o.max)).collect())))
    }

    /// Messages of `mark` the group has not committed yet (0: every message
    /// below the mark was acked). A queue of the mark the brokers no longer
    /// report counts as not reached.
    pub async fn behind(&self, mark: &Mark) -> Result<i64, MqError> {
        let queues = self.read().await?;
        Ok(mark
            .0
            .iter()
            .map(|(queue, &target)| match queues.get(queue) {
                Some(o) => (target - o.committed.max(0)).max(0),
                None => target.max(1),
            })
            .sum())
    }
}

/// Both offsets of every queue of `topic` for `group`, from the brokers.
async fn read(admin: &DefaultMQAdminExt, group: &str, topic: &str) -> Result<Offsets, MqError> {
    let stats = admin.examine_consume_stats(group.into(), Some(topic.into()), None, None, None).await?;
    Ok(stats
        .get_offset_table()
        .iter()
        .filter(|(queue, _)| queue.topic_str() == topic)
        .map(|(queue, offsets)| {
            (
                (queue.broker_name().to_string(), queue.queue_id()),
                QueueOffsets { max: offsets.get_broker_offset(), committed: offsets.get_consumer_offset() },
            )
        })
        .collect())
}
