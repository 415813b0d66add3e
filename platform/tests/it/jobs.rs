//! The job supervisor, without services: a job that ends early is reported
//! and restarted or stops the process, as it declared; shutdown has a
//! deadline; `/healthz` answers 503 while a job is down.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cityhub_platform::jobs::{Job, Jobs, OnExit, Restarts};
use tokio_util::sync::CancellationToken;

/// Panics on its first two runs, then works until stopped.
#[derive(Default)]
struct Flaky {
    runs: AtomicU32,
}

impl Job for Flaky {
    const NAME: &'static str = "flaky";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        if self.runs.fetch_add(1, Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            panic!("a bug");
        }
        stop.cancelled().await;
        Ok(())
    }
}

/// Returns an error at once.
struct Broken;

impl Job for Broken {
    const NAME: &'static str = "broken";
    const ON_EXIT: OnExit = OnExit::StopProcess;

    async fn run(self: Arc<Self>, _stop: CancellationToken) -> anyhow::Result<()> {
        anyhow::bail!("the broker went away")
    }
}

/// Ignores its stop token.
struct Deaf;

impl Job for Deaf {
    const NAME: &'static str = "deaf";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, _stop: CancellationToken) -> anyhow::Result<()> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    }
}

async fn eventually(what: &str, check: impl Fn() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what} did not happen within 10 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_job_that_panics_is_shown_down_then_restarted_and_up_again() {
    let mut jobs = Jobs::restarting(Restarts { first: Duration::from_millis(200), max: Duration::from_secs(60) });
    let health = jobs.health();
    let flaky = Arc::new(Flaky::default());
    jobs.spawn(ArcJob(Arc::clone(&flaky)));
    eventually("the first panic shows", || health.down() == ["flaky"]).await;
    eventually("the third run", || flaky.runs.load(Ordering::SeqCst) >= 3).await;
    eventually("the job is up again", || health.down().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(flaky.runs.load(Ordering::SeqCst), 3, "a job that keeps running is not started again");
    jobs.shutdown(Duration::from_secs(5)).await.expect("a restarted job stops cleanly");
}

#[tokio::test]
async fn a_job_that_stops_the_process_resolves_fatal_and_fails_the_shutdown() {
    let mut jobs = Jobs::new();
    let health = jobs.health();
    jobs.spawn(Broken);
    tokio::time::timeout(Duration::from_secs(5), jobs.fatal()).await.expect("fatal resolves");
    assert_eq!(health.down(), ["broken"]);
    let err = jobs.shutdown(Duration::from_secs(5)).await.expect_err("the shutdown reports the job");
    assert!(format!("{err:#}").contains("the broker went away"), "{err:#}");
}

#[tokio::test]
async fn shutdown_aborts_a_job_still_running_at_the_deadline_and_names_it() {
    let mut jobs = Jobs::new();
    jobs.spawn(Deaf);
    let started = Instant::now();
    let err = jobs.shutdown(Duration::from_millis(300)).await.expect_err("the deadline passed");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(err.to_string().contains("deaf"), "{err}");
}

#[tokio::test]
async fn healthz_answers_503_naming_the_job_while_it_is_down() {
    let mut jobs = Jobs::restarting(Restarts { first: Duration::from_secs(3600), max: Duration::from_secs(3600) });
    let health = jobs.health();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/healthz", listener.local_addr().unwrap());
    // The pool is only used by /metrics; it never connects here.
    let db = sqlx::MySqlPool::connect_lazy("mysql://nobody@127.0.0.1:1/none").unwrap();
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder().handle();
    let stop = CancellationToken::new();
    tokio::spawn(cityhub_platform::ops::serve(listener, recorder, db, health.clone(), stop.clone().cancelled_owned()));

    let ok = reqwest::get(&url).await.unwrap();
    assert_eq!(ok.status(), 200);
    jobs.spawn(Broken2);
    eventually("the job shows down", || !health.down().is_empty()).await;
    let down = reqwest::get(&url).await.unwrap();
    assert_eq!(down.status(), 503);
    let body: serde_json::Value = down.json().await.unwrap();
    assert_eq!(body, serde_json::json!({ "status": "failing", "jobs_down": ["broken_but_restarted"] }));
    stop.cancel();
    jobs.shutdown(Duration::from_secs(5)).await.expect("a job waiting to restart stops cleanly");
}

/// Fails at once; restarted (after a long pause here).
struct Broken2;

impl Job for Broken2 {
    const NAME: &'static str = "broken_but_restarted";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, _stop: CancellationToken) -> anyhow::Result<()> {
        anyhow::bail!("no luck")
    }
}

/// Lets a test keep a handle on the job it spawned.
struct ArcJob<J>(Arc<J>);

impl<J: Job> Job for ArcJob<J> {
    const NAME: &'static str = J::NAME;
    const ON_EXIT: OnExit = J::ON_EXIT;

    fn run(self: Arc<Self>, stop: CancellationToken) -> impl Future<Output = anyhow::Result<()>> + Send {
        Arc::clone(&self.0).run(stop)
    }
}

/// The scheduler counts repeats in whole seconds: a shorter period ticked
/// once or twice and then never again, silently. Such a job runs on a
/// timer of its own and keeps ticking.
#[tokio::test]
async fn a_periodic_job_faster_than_a_second_keeps_ticking() {
    let ticks = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&ticks);
    let stop = CancellationToken::new();
    let job = tokio::spawn(cityhub_platform::jobs::every(Duration::from_millis(100), stop.clone(), move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async {}
    }));
    let started = std::time::Instant::now();
    while ticks.load(Ordering::SeqCst) < 12 {
        assert!(started.elapsed() < Duration::from_secs(30), "stopped after {} ticks", ticks.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    job.await.unwrap().unwrap();
    let last = ticks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ticks.load(Ordering::SeqCst), last, "it ticked after its stop");
}
