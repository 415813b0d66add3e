//! The RocketMQ client runtime. The client crate runs its own Tokio runtime
//! (a [`RuntimeOwner`]); consumer listeners run on its `metadata_io` blocking
//! lane, whose default 16-deep queue overflows under a backlog
//! (`runtime.capacity.exhausted`, each message retried 10 s later), so the
//! lane is widened here as measured.
//!
//! The lane also gives up on a task that waited 5 s for a thread or ran for
//! 30 s (its default `queue_timeout` and `task_timeout`). For a listener that
//! means "consume later": the client sends the batch to the retry topic and
//! commits its offset while the handler still holds it, so the group's
//! committed offsets would claim a batch applied that is not (see
//! `progress`). The lane therefore never gives up ([`NEVER`]); a handler
//! decides itself how long it holds a batch.

use std::sync::Arc;
use std::time::Duration;

use rocketmq_client_rust::{ClientRuntime, ClientRuntimeConfig, TelemetryHandle};
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};

use super::MqError;

/// A year: a timeout that, in effect, never fires.
pub const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// Owns the client runtime; shut it down with [`MqRuntime::shutdown`].
pub struct MqRuntime {
    owner: RuntimeOwner,
    client: Arc<ClientRuntime>,
}

impl MqRuntime {
    /// Builds the runtime with a consumer-friendly blocking lane.
    pub fn new(name: &str) -> Result<Self, MqError> {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        let mut cfg = RuntimeConfig::for_parallelism(format!("{name}-mq"), threads);
        cfg.max_blocking_threads = 40;
        cfg.blocking_lane_policies.metadata_io.max_queue_depth = 8192;
        cfg.blocking_lane_policies.metadata_io.max_concurrency = 32;
        cfg.blocking_lane_policies.metadata_io.queue_timeout = NEVER;
        cfg.blocking_lane_policies.metadata_io.task_timeout = NEVER;
        let owner = RuntimeOwner::plan(cfg)
            .map_err(|e| MqError::internal("plan mq runtime", e))?
            .build()
            .map_err(|e| MqError::internal("build mq runtime", e))?;
        let client = ClientRuntime::try_new(
            owner.root_context().component("mq"),
            ClientRuntimeConfig::default(),
            TelemetryHandle::noop(),
        )?;
        Ok(Self { owner, client })
    }

    pub fn client(&self) -> Arc<ClientRuntime> {
        Arc::clone(&self.client)
    }

    /// Stops client tasks, then the runtime's own threads.
    pub async fn shutdown(self) {
        self.client.shutdown().await;
        self.owner.shutdown_tasks().await;
        self.owner.shutdown_background();
    }
}
