//! A small job supervisor: named background jobs on one `JoinSet`, sharing
//! one cancellation token. A job runs until the token is cancelled, then
//! finishes its in-flight work and returns. [`Jobs::shutdown`] cancels and
//! waits for all; a job that fails or panics is logged and reported.
//! Periodic jobs run on tokio-cron-scheduler through [`every`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The running jobs of a process.
#[derive(Default)]
pub struct Jobs {
    set: JoinSet<(&'static str, anyhow::Result<()>)>,
    stop: CancellationToken,
}

impl Jobs {
    pub fn new() -> Self {
        Self::default()
    }

    /// The token every job watches; cancelled by [`Jobs::shutdown`].
    pub fn token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Starts `job` under `name`.
    pub fn spawn<F>(&mut self, name: &'static str, job: F)
    where
        F: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        tracing::info!(job = name, "job started");
        self.set.spawn(async move { (name, job.await) });
    }

    /// Cancels every job and waits for each to finish; the first failure
    /// (an error or a panic) is returned after all have stopped.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        self.stop.cancel();
        let mut first = Ok(());
        while let Some(joined) = self.set.join_next().await {
            let outcome = match joined {
                Ok((name, Ok(()))) => {
                    tracing::info!(job = name, "job stopped");
                    Ok(())
                }
                Ok((name, Err(err))) => Err(err.context(format!("job {name} failed"))),
                Err(err) => Err(anyhow::anyhow!("a job panicked: {err}")),
            };
            if let Err(err) = outcome {
                tracing::error!(error = ?err, "job ended badly");
                if first.is_ok() {
                    first = Err(err);
                }
            }
        }
        first
    }
}

/// Runs `tick` every `period` on a tokio-cron-scheduler scheduler until
/// `stop`; then waits for a tick in flight. A tick still running when the
/// next is due makes that one skip, so ticks of one job never overlap in a
/// process (several processes may still tick at once; the job's own
/// guards must allow that).
pub async fn every<F, Fut>(name: &'static str, period: Duration, stop: CancellationToken, tick: F) -> anyhow::Result<()>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    use tokio_cron_scheduler::{Job, JobScheduler};

    let scheduler = JobScheduler::new().await?;
    let busy = Arc::new(tokio::sync::Mutex::new(()));
    let tick = Arc::new(tick);
    let job = {
        let busy = Arc::clone(&busy);
        Job::new_repeated_async(period, move |_, _| {
            let (busy, tick) = (Arc::clone(&busy), Arc::clone(&tick));
            Box::pin(async move {
                let Ok(_running) = busy.try_lock() else {
                    tracing::debug!(job = name, "previous run still going; this one skipped");
                    return;
                };
                tick().await;
            })
        })?
    };
    scheduler.add(job).await?;
    scheduler.start().await?;
    stop.cancelled().await;
    let mut scheduler = scheduler;
    scheduler.shutdown().await?;
    let _last = busy.lock().await;
    Ok(())
}
