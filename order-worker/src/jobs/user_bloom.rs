//! The user Bloom filter job: at start and every `auth.user_bloom_check_secs`
//! (tokio-cron-scheduler), builds the filter of user ids from MySQL if Redis
//! does not hold a complete one (a new deployment, or Redis lost its data).
//! Until then reads about made-up user ids fall back to MySQL. Several
//! workers may build it at once: building only sets bits.

use std::sync::Arc;
use std::time::Duration;

use cityhub_core::auth::KnownUsers;
use cityhub_core::Services;
use cityhub_platform::jobs::{every, Job, OnExit};
use tokio_util::sync::CancellationToken;

/// The filter the job keeps, and how often it checks.
pub struct UserBloomJob {
    known: KnownUsers,
    every: Duration,
}

impl UserBloomJob {
    pub fn new(services: &Services) -> Self {
        Self { known: services.auth.known().clone(), every: services.settings.auth.user_bloom_check_secs }
    }
}

impl Job for UserBloomJob {
    const NAME: &'static str = "user_bloom";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        ensure(&self.known).await;
        let period = self.every;
        every(period, stop, move || {
            let job = Arc::clone(&self);
            async move { ensure(&job.known).await }
        })
        .await
    }
}

async fn ensure(known: &KnownUsers) {
    if let Err(err) = known.ensure().await {
        tracing::warn!(error = %err, "cannot check or build the user Bloom filter; the next run retries");
    }
}
