//! The count correction job: every `social.count_check_secs`, rechecks the
//! follower and following counts of the users whose relations changed in the
//! last `social.count_recent_secs`, plus the next `social.count_sweep_batch`
//! users in id order (so every user is rechecked, slowly, round after
//! round), and repairs MySQL and Redis where they differ from the projection
//! (see [`CountCheck`]), and drops follow lists in Redis that drifted from
//! it (its next reader rebuilds each). What it fixed goes to the log, to
//! `cityhub_follow_counts_fixed_total{store}` and to
//! `cityhub_follow_lists_dropped_total`. It also forgets applied-event
//! records past `social.dedup_retention_days`.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cityhub_core::config::{Settings, SocialSettings};
use cityhub_core::kv::Kv;
use cityhub_core::metrics::{FOLLOW_COUNTS_FIXED, FOLLOW_LISTS_DROPPED};
use cityhub_core::social::{Correction, CountCheck, SocialError};
use cityhub_core::UserId;
use cityhub_platform::jobs::{every, Job, OnExit};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// The job's state. Share it in an `Arc`.
pub struct CountJob {
    check: CountCheck,
    settings: SocialSettings,
    /// The last user id the slow sweep checked (0: start over).
    swept_to: AtomicU64,
}

impl CountJob {
    pub fn new(settings: &Settings, db: MySqlPool, kv: Kv) -> Self {
        for store in ["mysql", "redis"] {
            metrics::counter!(FOLLOW_COUNTS_FIXED, "store" => store).increment(0);
        }
        metrics::counter!(FOLLOW_LISTS_DROPPED).increment(0);
        let check = CountCheck::new(db, kv, settings.social.list_sample);
        Self { check, settings: settings.social.clone(), swept_to: AtomicU64::new(0) }
    }

    /// One round (see the module doc).
    pub async fn round(&self) -> Result<Correction, SocialError> {
        let mut users = self.check.recently_changed(self.settings.count_recent_secs).await?;
        let after = UserId(self.swept_to.load(Ordering::Relaxed));
        let sweep = self.check.users_after(after, self.settings.count_sweep_batch).await?;
        let next = if sweep.len() < self.settings.count_sweep_batch as usize {
            UserId(0)
        } else {
            sweep.last().copied().unwrap_or_default()
        };
        self.swept_to.store(next.get(), Ordering::Relaxed);
        users.extend(sweep);
        users.sort_unstable();
        users.dedup();
        let done = self.check.correct(&users).await?;
        metrics::counter!(FOLLOW_COUNTS_FIXED, "store" => "mysql").increment(done.fixed_mysql as u64);
        metrics::counter!(FOLLOW_COUNTS_FIXED, "store" => "redis").increment(done.fixed_redis as u64);
        metrics::counter!(FOLLOW_LISTS_DROPPED).increment(done.dropped_lists as u64);
        if done.fixed_mysql + done.fixed_redis + done.dropped_lists > 0 {
            tracing::warn!(
                checked = done.checked,
                mysql = done.fixed_mysql,
                redis = done.fixed_redis,
                lists = done.dropped_lists,
                "follow counts repaired"
            );
        } else {
            tracing::debug!(checked = done.checked, "follow counts agree");
        }
        let purged = self.check.purge_consumed(self.settings.dedup_retention_days).await?;
        if purged > 0 {
            tracing::info!(purged, "old applied-event records forgotten");
        }
        Ok(done)
    }
}

impl Job for CountJob {
    const NAME: &'static str = "follow_counts";
    const ON_EXIT: OnExit = OnExit::Restart;

    /// Runs rounds on schedule until `stop`.
    fn run(self: Arc<Self>, stop: CancellationToken) -> impl Future<Output = anyhow::Result<()>> + Send {
        let period = self.settings.count_check_secs;
        every(period, stop, move || {
            let job = Arc::clone(&self);
            async move {
                if let Err(err) = job.round().await {
                    tracing::warn!(error = %err, "follow count correction failed; the next round retries");
                }
            }
        })
    }
}
