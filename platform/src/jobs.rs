//! The job supervisor: a process's background jobs, each a [`Job`] that
//! names itself once, on one `JoinSet`, sharing one cancellation token.
//!
//! A job runs until the token is cancelled, then finishes its in-flight work
//! and returns. A job that returns or panics *before* that is a fault: it is
//! logged at once, counted (`cityhub_job_exits_total`), shown as down on the
//! `cityhub_job_up` gauge and on `/healthz` (503, through [`Health`]), and
//! then handled as the job declared ([`OnExit`]): started again after a
//! jittered backoff, or the process is asked to stop ([`Jobs::fatal`]), so
//! that its supervisor (compose, systemd, Kubernetes) starts a clean one.
//! [`Jobs::shutdown`] cancels every job and waits for them up to a deadline;
//! a job still running then is aborted and named in the error.
//!
//! Periodic jobs run on tokio-cron-scheduler through [`every`].

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::metrics as m;
use crate::retry::Backoff;

/// What the supervisor does with a job that ends before shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnExit {
    /// Start it again after a backoff (1 s doubling to 1 min, jittered): for
    /// jobs whose every run starts from durable state.
    Restart,
    /// Ask the process to stop: for jobs whose loss a restart in place
    /// cannot be trusted to repair (a consumer holding its queues).
    StopProcess,
}

/// One background job.
pub trait Job: Send + Sync + 'static {
    /// Its name in logs, metrics and `/healthz`.
    const NAME: &'static str;
    /// What to do when it ends before shutdown.
    const ON_EXIT: OnExit;

    /// Works until `stop` is cancelled, then finishes in-flight work.
    fn run(self: Arc<Self>, stop: CancellationToken) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// Which jobs of the process are down; `/healthz` answers 503 while one is.
/// Clone freely.
#[derive(Debug, Clone, Default)]
pub struct Health {
    down: Arc<Mutex<BTreeSet<&'static str>>>,
}

impl Health {
    /// The jobs that ended and have not run again since.
    pub fn down(&self) -> Vec<&'static str> {
        self.down.lock().expect("health lock").iter().copied().collect()
    }

    fn set(&self, job: &'static str, up: bool) {
        let mut down = self.down.lock().expect("health lock");
        if up {
            down.remove(job);
        } else {
            down.insert(job);
        }
        metrics::gauge!(m::JOB_UP, "task" => job).set(if up { 1.0 } else { 0.0 });
    }
}

/// The running jobs of a process.
#[derive(Default)]
pub struct Jobs {
    set: JoinSet<(&'static str, anyhow::Result<()>)>,
    stop: CancellationToken,
    fatal: CancellationToken,
    health: Health,
    running: Arc<Mutex<BTreeSet<&'static str>>>,
    restarts: Restarts,
}

/// How a job declared [`OnExit::Restart`] is restarted: after `first`,
/// doubling (with jitter) up to `max` while it keeps ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restarts {
    pub first: Duration,
    pub max: Duration,
}

impl Default for Restarts {
    fn default() -> Self {
        Self { first: Duration::from_secs(1), max: Duration::from_secs(60) }
    }
}

impl Jobs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Jobs restarted as `restarts` says.
    pub fn restarting(restarts: Restarts) -> Self {
        Self { restarts, ..Self::default() }
    }

    /// What `/healthz` reads.
    pub fn health(&self) -> Health {
        self.health.clone()
    }

    /// Resolves when a job declared [`OnExit::StopProcess`] has ended before
    /// shutdown: the process should shut down and exit with an error.
    pub fn fatal(&self) -> impl Future<Output = ()> + Send + 'static {
        self.fatal.clone().cancelled_owned()
    }

    /// Starts `job` under its supervisor.
    pub fn spawn<J: Job>(&mut self, job: J) {
        let job = Arc::new(job);
        let (stop, fatal, health, running) =
            (self.stop.clone(), self.fatal.clone(), self.health.clone(), Arc::clone(&self.running));
        let Restarts { first, max } = self.restarts;
        metrics::counter!(m::JOB_EXITS, "task" => J::NAME).increment(0);
        running.lock().expect("jobs lock").insert(J::NAME);
        self.set.spawn(async move {
            let mut backoff = Backoff::new(first, max.max(first));
            let outcome = loop {
                health.set(J::NAME, true);
                tracing::info!(job = J::NAME, "job started");
                let run = Arc::clone(&job).run(stop.clone()).instrument(tracing::info_span!("job", job = J::NAME));
                let ended = tokio::spawn(run).await;
                if stop.is_cancelled() {
                    break match ended {
                        Ok(result) => result,
                        Err(err) => Err(anyhow::anyhow!("panicked: {err}")),
                    };
                }
                let why = match ended {
                    Ok(Ok(())) => "returned".to_owned(),
                    Ok(Err(err)) => format!("failed: {err:#}"),
                    Err(err) => format!("panicked: {err}"),
                };
                health.set(J::NAME, false);
                metrics::counter!(m::JOB_EXITS, "task" => J::NAME).increment(1);
                match J::ON_EXIT {
                    OnExit::Restart => {
                        tracing::error!(job = J::NAME, %why, "job ended before shutdown; starting it again");
                        if !backoff.wait(&stop).await {
                            break Ok(());
                        }
                    }
                    OnExit::StopProcess => {
                        tracing::error!(job = J::NAME, %why, "job ended before shutdown; stopping the process");
                        fatal.cancel();
                        break Err(anyhow::anyhow!("job {} ended before shutdown: {why}", J::NAME));
                    }
                }
            };
            running.lock().expect("jobs lock").remove(J::NAME);
            (J::NAME, outcome)
        });
    }

    /// Cancels every job and waits up to `deadline` for each to finish. The
    /// first failure (an error, a panic, a job that ended early and stopped
    /// the process, or jobs still running at the deadline, which are
    /// aborted) is returned after all have stopped.
    pub async fn shutdown(mut self, deadline: Duration) -> anyhow::Result<()> {
        self.stop.cancel();
        let mut first = Ok(());
        let joined = tokio::time::timeout(deadline, async {
            while let Some(joined) = self.set.join_next().await {
                let outcome = match joined {
                    Ok((name, Ok(()))) => {
                        tracing::info!(job = name, "job stopped");
                        Ok(())
                    }
                    Ok((name, Err(err))) => Err(err.context(format!("job {name}"))),
                    Err(err) => Err(anyhow::anyhow!("a job's supervisor panicked: {err}")),
                };
                if let Err(err) = outcome {
                    tracing::error!(error = ?err, "job ended badly");
                    if first.is_ok() {
                        first = Err(err);
                    }
                }
            }
        })
        .await;
        if joined.is_err() {
            let late: Vec<&str> = self.running.lock().expect("jobs lock").iter().copied().collect();
            tracing::error!(?late, ?deadline, "jobs did not stop within the shutdown deadline; aborting them");
            self.set.abort_all();
            while self.set.join_next().await.is_some() {}
            return Err(anyhow::anyhow!("jobs {late:?} did not stop within {deadline:?}"));
        }
        first
    }
}

/// When a periodic job ticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// Every period, from the start.
    Every(Duration),
    /// On a cron expression with seconds (`sec min hour day-of-month month
    /// day-of-week`), in UTC.
    Cron(String),
}

/// Whether the scheduler takes `expr` as a cron expression.
pub fn check_cron(expr: &str) -> Result<(), String> {
    tokio_cron_scheduler::Job::new_async(expr, |_, _| Box::pin(async {})).map(|_| ()).map_err(|e| e.to_string())
}

/// The shortest period the scheduler keeps: it counts repeats in whole
/// seconds, so a shorter one would tick once or twice and stop.
const SCHEDULER_SHORTEST: Duration = Duration::from_secs(1);

/// Runs `tick` every `period`; see [`scheduled`]. A period under a second
/// runs on a tokio timer of its own (the scheduler cannot keep it), with
/// the same rules: ticks never overlap (one due while the last runs is
/// skipped), and a stop waits for the tick in flight.
pub async fn every<F, Fut>(period: Duration, stop: CancellationToken, tick: F) -> anyhow::Result<()>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    if period >= SCHEDULER_SHORTEST {
        return scheduled(Schedule::Every(period), stop, tick).await;
    }
    anyhow::ensure!(!period.is_zero(), "a job cannot run every 0 s");
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ticks.tick().await;
    loop {
        tokio::select! {
            () = stop.cancelled() => return Ok(()),
            _ = ticks.tick() => {}
        }
        tick().instrument(tracing::Span::current()).await;
    }
}

/// Runs `tick` on `schedule` on a tokio-cron-scheduler scheduler until
/// `stop`; then waits for a tick in flight. A tick still running when the
/// next is due makes that one skip, so ticks of one job never overlap in a
/// process (several processes may still tick at once; the job's own
/// guards must allow that).
pub async fn scheduled<F, Fut>(schedule: Schedule, stop: CancellationToken, tick: F) -> anyhow::Result<()>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    use tokio_cron_scheduler::{Job, JobScheduler};

    let scheduler = JobScheduler::new().await?;
    let busy = Arc::new(tokio::sync::Mutex::new(()));
    let tick = Arc::new(tick);
    let span = tracing::Span::current();
    let run = {
        let busy = Arc::clone(&busy);
        move |_, _| {
            let (busy, tick) = (Arc::clone(&busy), Arc::clone(&tick));
            Box::pin(
                async move {
                    let Ok(_running) = busy.try_lock() else {
                        tracing::debug!("previous run still going; this one skipped");
                        return;
                    };
                    tick().await;
                }
                .instrument(span.clone()),
            ) as std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
        }
    };
    let job = match schedule {
        Schedule::Every(period) => Job::new_repeated_async(period, run)?,
        Schedule::Cron(expr) => Job::new_async(expr.as_str(), run)?,
    };
    scheduler.add(job).await?;
    scheduler.start().await?;
    stop.cancelled().await;
    let mut scheduler = scheduler;
    scheduler.shutdown().await?;
    let _last = busy.lock().await;
    Ok(())
}
