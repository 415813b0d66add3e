//! The shop Bloom filter job: at start and every `shops.index_check_secs`
//! (tokio-cron-scheduler), builds the filter of shop ids from MySQL if Redis
//! does not hold a complete one (a new deployment, or Redis lost its data).
//! Until then shop reads run without it (the cached "none" still guards
//! MySQL). Several workers may build it at once: building only sets bits.

use std::sync::Arc;
use std::time::Duration;

use cityhub_core::shops::Shops;
use cityhub_core::Services;
use cityhub_platform::jobs::{every, Job, OnExit};
use tokio_util::sync::CancellationToken;

/// The shop reads whose filter the job keeps, and how often it checks.
pub struct BloomJob {
    shops: Shops,
    every: Duration,
}

impl BloomJob {
    pub fn new(services: &Services) -> Self {
        Self { shops: services.shops.clone(), every: services.settings.shops.index_check_secs }
    }
}

impl Job for BloomJob {
    const NAME: &'static str = "shop_bloom";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        ensure(&self.shops).await;
        let period = self.every;
        every(period, stop, move || {
            let job = Arc::clone(&self);
            async move { ensure(&job.shops).await }
        })
        .await
    }
}

async fn ensure(shops: &Shops) {
    if let Err(err) = shops.ensure_bloom().await {
        tracing::warn!(error = %err, "cannot check or build the shop Bloom filter; the next run retries");
    }
}
