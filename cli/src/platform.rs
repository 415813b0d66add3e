//! Runs `cityhub-api` and `cityhub-order-worker` as child processes with
//! given settings (passed as `CITYHUB__*` variables), for the benchmarks,
//! the chaos runs and the end-to-end tests. The binaries are looked up next
//! to the running executable (or in `CITYHUB_BIN_DIR`). Also what the tools
//! read about processes and the machine (RSS, cores).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use cityhub_core::config::{LimitSettings, Secret, Settings};
use tokio::process::{Child, Command};

/// Where the binaries are: `CITYHUB_BIN_DIR`, else beside this executable
/// (for test binaries in `target/<profile>/deps`, its parent).
pub fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("CITYHUB_BIN_DIR") {
        return dir.into();
    }
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.parent().expect("profile dir").to_path_buf()
    } else {
        dir
    }
}

/// A running child process; killed when dropped.
pub struct Process {
    pub child: Child,
    pub name: &'static str,
    log: PathBuf,
}

impl Process {
    /// Starts `command`, its output appended to `log`.
    pub fn start(name: &'static str, mut command: Command, log: &Path) -> anyhow::Result<Self> {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("open {}", log.display()))?;
        let child = command
            .stdout(Stdio::from(out.try_clone()?))
            .stderr(Stdio::from(out))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("start {name}"))?;
        Ok(Self { child, name, log: log.to_path_buf() })
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// `kill -9`, then reap it.
    pub async fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill().await?;
        Ok(())
    }

    /// The end of its log (for error reports).
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.log, lines)
    }

    /// SIGTERM, then wait (the binaries drain on SIGTERM).
    pub async fn stop(self) -> anyhow::Result<()> {
        self.stop_drained().await.map(|_| ())
    }

    /// SIGTERM, then wait up to [`STOP_GRACE`]; one still running then is
    /// killed. True when it exited on its own.
    pub async fn stop_drained(mut self) -> anyhow::Result<bool> {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
        }
        match tokio::time::timeout(STOP_GRACE, self.child.wait()).await {
            Ok(status) => {
                status?;
                Ok(true)
            }
            Err(_) => {
                eprintln!("{} did not stop within {STOP_GRACE:?} of SIGTERM; killed", self.name);
                self.child.kill().await?;
                Ok(false)
            }
        }
    }
}

/// How long a binary may take to drain and exit after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(20);

/// Starts `binary` from `dir` with `settings`; its output is appended to `log`.
pub fn spawn(dir: &Path, name: &'static str, settings: &Settings, log: &Path) -> anyhow::Result<Process> {
    let path = dir.join(name);
    if !path.exists() {
        bail!("{} is missing: build it first (cargo build --workspace --bins)", path.display());
    }
    let mut command = Command::new(&path);
    command.envs(settings.to_vars());
    Process::start(name, command, log)
}

/// The last `n` lines of a log file (for error reports).
pub fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Polls `url` until it answers 200; fails at once if `process` exits, and
/// after `within` otherwise, either way with the end of its log.
pub async fn wait_ready(process: &mut Process, url: &str, within: Duration) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let start = Instant::now();
    let mut last = String::from("no answer");
    while start.elapsed() < within {
        if let Some(status) = process.child.try_wait()? {
            bail!(
                "{} exited with {status} before {url} was ready; its log ends:\n{}",
                process.name,
                tail(&process.log, 30)
            );
        }
        match http.get(url).send().await {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) => last = format!("{}: {}", r.status(), r.text().await.unwrap_or_default()),
            Err(err) => last = err.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "{url} did not become ready within {within:?} (last answer: {last}); {}'s log ends:\n{}",
        process.name,
        tail(&process.log, 30)
    )
}

/// A free 127.0.0.1 port (bound and released), below Linux's ephemeral
/// range (32768 and up): a part killed and restarted on its port must find
/// it free, and an outgoing connection's local port, which the kernel picks
/// from that range, could take a port there while the part is down. A port
/// is handed out once per process, so two parts of one lab never share one
/// even when the first is not listening yet (or is down) when the second is
/// chosen.
pub fn free_port() -> u16 {
    use rand::Rng;
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut rng = rand::rng();
    loop {
        let port = rng.random_range(20_000..32_000);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
            && GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(port)
        {
            return port;
        }
    }
}

/// A second API instance (see [`Platform::start_second_api`]).
pub struct SecondApi {
    pub base: String,
    /// `None` only while it restarts.
    pub process: Option<Process>,
    pub limits: LimitSettings,
    pub settings: Settings,
    log: PathBuf,
}

impl SecondApi {
    /// Stops it (SIGTERM: it drains first) and starts it again on its
    /// address from the binaries in `dir`; waits until it is ready.
    pub async fn restart(&mut self, dir: &Path) -> anyhow::Result<()> {
        if let Some(process) = self.process.take() {
            process.stop().await?;
        }
        let mut process = spawn(dir, "cityhub-api", &self.settings, &self.log)?;
        wait_ready(&mut process, &format!("{}/readyz", self.base), Duration::from_secs(60)).await?;
        self.process = Some(process);
        Ok(())
    }
}

/// The API and the worker, started with `settings` (whose `http.addr`,
/// `http.metrics_addr` and `worker.metrics_addr` get free ports).
pub struct Platform {
    pub settings: Settings,
    pub api: Option<Process>,
    pub worker: Option<Process>,
    /// A second worker in the same consumer group, when one was started,
    /// and its metrics address.
    pub second_worker: Option<Process>,
    second_worker_metrics: String,
    logs: PathBuf,
    /// Where the binaries it starts come from ([`bin_dir`]; a deploy may
    /// switch to another build's).
    pub bin_dir: PathBuf,
}

impl Platform {
    pub async fn start(mut settings: Settings, logs: &Path) -> anyhow::Result<Self> {
        if settings.payments.callback_secret.expose().is_empty() {
            // A platform of its own: a callback secret of its own too.
            settings.payments.callback_secret =
                Secret::new(format!("{:032x}{:016x}", rand::random::<u128>(), rand::random::<u64>()));
        }
        settings.http.addr = format!("127.0.0.1:{}", free_port());
        settings.http.metrics_addr = format!("127.0.0.1:{}", free_port());
        settings.worker.metrics_addr = format!("127.0.0.1:{}", free_port());
        std::fs::create_dir_all(logs)?;
        let mut platform = Self {
            settings,
            api: None,
            worker: None,
            second_worker: None,
            second_worker_metrics: String::new(),
            logs: logs.to_path_buf(),
            bin_dir: bin_dir(),
        };
        // The API migrates and creates the order topic; the worker follows.
        // A port chosen here can be taken by another process before the
        // binary binds it: that one gets fresh ports and starts again.
        for attempt in 1.. {
            match platform.start_api().await {
                Err(_) if attempt < 3 && platform.port_taken("api.log") => {
                    platform.settings.http.addr = format!("127.0.0.1:{}", free_port());
                    platform.settings.http.metrics_addr = format!("127.0.0.1:{}", free_port());
                }
                outcome => {
                    outcome?;
                    break;
                }
            }
        }
        for attempt in 1.. {
            match platform.start_worker().await {
                Err(_) if attempt < 3 && platform.port_taken("worker.log") => {
                    platform.settings.worker.metrics_addr = format!("127.0.0.1:{}", free_port());
                }
                outcome => {
                    outcome?;
                    break;
                }
            }
        }
        Ok(platform)
    }

    /// Whether the process logging to `log` stopped because its port was taken.
    fn port_taken(&self, log: &str) -> bool {
        tail(&self.logs.join(log), 20).contains("Address already in use")
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.settings.http.addr)
    }

    /// Starts the API (again) on its address; waits until it is ready.
    pub async fn start_api(&mut self) -> anyhow::Result<()> {
        let mut api = spawn(&self.bin_dir, "cityhub-api", &self.settings, &self.logs.join("api.log"))?;
        wait_ready(&mut api, &format!("{}/readyz", self.base()), Duration::from_secs(60)).await?;
        self.api = Some(api);
        Ok(())
    }

    /// Stops the API (SIGTERM: it drains first), then starts it again.
    pub async fn restart_api(&mut self) -> anyhow::Result<()> {
        if let Some(api) = self.api.take() {
            api.stop().await?;
        }
        self.start_api().await
    }

    /// Stops the worker (SIGTERM: it finishes what it holds), then starts
    /// it again.
    pub async fn restart_worker(&mut self) -> anyhow::Result<()> {
        if let Some(worker) = self.worker.take() {
            worker.stop().await?;
        }
        self.start_worker().await
    }

    /// The same for the second worker (on a fresh metrics address).
    pub async fn restart_second_worker(&mut self) -> anyhow::Result<()> {
        if let Some(worker) = self.second_worker.take() {
            worker.stop().await?;
        }
        self.start_second_worker().await
    }

    /// `kill -9` of the API (no drain).
    pub async fn kill_api(&mut self) -> anyhow::Result<()> {
        match self.api.take() {
            Some(api) => api.kill().await,
            None => Ok(()),
        }
    }

    /// `kill -9` of the worker (no drain).
    pub async fn kill_worker(&mut self) -> anyhow::Result<()> {
        match self.worker.take() {
            Some(worker) => worker.kill().await,
            None => Ok(()),
        }
    }

    pub async fn start_worker(&mut self) -> anyhow::Result<()> {
        let mut worker = spawn(&self.bin_dir, "cityhub-order-worker", &self.settings, &self.logs.join("worker.log"))?;
        let url = format!("http://{}/healthz", self.settings.worker.metrics_addr);
        wait_ready(&mut worker, &url, Duration::from_secs(60)).await?;
        self.worker = Some(worker);
        Ok(())
    }

    /// A second worker in the worker's consumer group, on a metrics address
    /// of its own; waits until it is ready.
    pub async fn start_second_worker(&mut self) -> anyhow::Result<()> {
        let mut settings = self.settings.clone();
        settings.worker.metrics_addr = format!("127.0.0.1:{}", free_port());
        let mut worker = spawn(&self.bin_dir, "cityhub-order-worker", &settings, &self.logs.join("worker-2.log"))?;
        let url = format!("http://{}/healthz", settings.worker.metrics_addr);
        wait_ready(&mut worker, &url, Duration::from_secs(60)).await?;
        self.second_worker = Some(worker);
        self.second_worker_metrics = settings.worker.metrics_addr.clone();
        Ok(())
    }

    /// How many order messages the second worker has stored so far.
    pub async fn second_worker_stored(&self) -> anyhow::Result<f64> {
        self.second_worker_sample("cityhub_consumer_messages_total", &["result=\"stored\""]).await
    }

    /// Waits until the second worker holds a queue of the order topic (the
    /// group rebalances every 20 s, and a loaded machine may skip a period);
    /// fails after `within`.
    pub async fn wait_second_worker_holds_queues(&self, within: Duration) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        while self.second_worker_sample("cityhub_consumer_queues_held", &[]).await.unwrap_or(0.0) < 1.0 {
            anyhow::ensure!(
                started.elapsed() < within,
                "the second worker held no queue of the order topic within {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok(())
    }

    /// The second worker's `family` sample on the order topic with `labels`.
    async fn second_worker_sample(&self, family: &str, labels: &[&str]) -> anyhow::Result<f64> {
        let topic = format!("topic=\"{}\"", self.settings.mq.order_topic);
        let labels: Vec<&str> = std::iter::once(topic.as_str()).chain(labels.iter().copied()).collect();
        Ok(scrape(&self.second_worker_metrics, family, &labels).await?.unwrap_or(0.0))
    }

    /// The (first) worker's `family` sample carrying every one of `labels`,
    /// since its last start; 0 when it has none.
    pub async fn worker_metric(&self, family: &str, labels: &[&str]) -> anyhow::Result<f64> {
        Ok(scrape(&self.settings.worker.metrics_addr, family, labels).await?.unwrap_or(0.0))
    }

    /// `kill -9` of the second worker.
    pub async fn kill_second_worker(&mut self) -> anyhow::Result<()> {
        match self.second_worker.take() {
            Some(worker) => worker.kill().await,
            None => Ok(()),
        }
    }

    /// Another API instance on the same services, with `limits` in place of
    /// the platform's, trusting `X-Forwarded-For` from 127.0.0.1 (as behind
    /// a balancer: a load generator can then speak for many clients); the
    /// caller stops it.
    pub async fn start_second_api(&self, limits: LimitSettings) -> anyhow::Result<SecondApi> {
        let mut settings = self.settings.clone();
        settings.http.trusted_proxies = "127.0.0.1".into();
        settings.http.addr = format!("127.0.0.1:{}", free_port());
        settings.http.metrics_addr = format!("127.0.0.1:{}", free_port());
        settings.limits = limits;
        let base = format!("http://{}", settings.http.addr);
        let log = self.logs.join("api-2.log");
        let mut process = spawn(&self.bin_dir, "cityhub-api", &settings, &log)?;
        wait_ready(&mut process, &format!("{base}/readyz"), Duration::from_secs(60)).await?;
        Ok(SecondApi { base, process: Some(process), limits: settings.limits.clone(), settings, log })
    }

    /// The repairs the reconcilers logged so far (every start of the API and
    /// the worker appends to the same logs), by kind.
    pub fn reconciler_repairs(&self) -> BTreeMap<String, usize> {
        let mut repairs = BTreeMap::new();
        let repaired = |l: &str| l.contains("reconciler difference") && l.contains("repaired=true");
        for line in self.log_lines(&["api.log", "api-2.log", "worker.log", "worker-2.log"], repaired) {
            let kind = line.split("kind=").nth(1).and_then(|rest| rest.split_whitespace().next());
            let kind = kind.unwrap_or("unknown").trim_matches('"').to_owned();
            *repairs.entry(kind).or_insert(0) += 1;
        }
        repairs
    }

    /// How many lines of the workers' logs contain every one of `texts`.
    pub fn worker_log_count(&self, texts: &[&str]) -> usize {
        self.log_lines(&["worker.log", "worker-2.log"], |l| texts.iter().all(|t| l.contains(t))).len()
    }

    /// Where the log `name` (`api.log`, `worker.log`, ...) is written.
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.logs.join(name)
    }

    /// The lines of `logs` that `keep` accepts.
    fn log_lines(&self, logs: &[&str], keep: impl Fn(&str) -> bool) -> Vec<String> {
        logs.iter()
            .flat_map(|log| {
                let text = std::fs::read_to_string(self.logs.join(log)).unwrap_or_default();
                text.lines().filter(|l| keep(l)).map(str::to_owned).collect::<Vec<_>>()
            })
            .collect()
    }

    pub async fn stop_worker(&mut self) -> anyhow::Result<()> {
        stop_each([self.worker.take(), self.second_worker.take()]).await.map(|_| ())
    }

    /// Stops the API, then the workers; the names of those that did not
    /// exit within [`STOP_GRACE`] of SIGTERM and were killed.
    pub async fn stop(mut self) -> anyhow::Result<Vec<&'static str>> {
        stop_each([self.api.take(), self.worker.take(), self.second_worker.take()]).await
    }
}

/// Stops each process in turn; the names of those killed after [`STOP_GRACE`].
async fn stop_each(processes: impl IntoIterator<Item = Option<Process>>) -> anyhow::Result<Vec<&'static str>> {
    let mut killed = Vec::new();
    for process in processes.into_iter().flatten() {
        let name = process.name;
        if !process.stop_drained().await? {
            killed.push(name);
        }
    }
    Ok(killed)
}

/// A field of `/proc/<pid>/status` in MB (`VmRSS` now, `VmHWM` peak).
pub fn rss_mb(pid: u32, field: &str) -> Option<f64> {
    Some(proc_status(pid, field)? / 1024.0)
}

/// The number a field of `/proc/<pid>/status` holds (kB for sizes).
pub fn proc_status(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.split(':').next() == Some(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The sum of the series of `family` carrying every one of `labels`
/// (`key="value"`) on the ops listener at `metrics_addr`; `None` when there
/// is none.
pub async fn scrape(metrics_addr: &str, family: &str, labels: &[&str]) -> anyhow::Result<Option<f64>> {
    static HTTP: std::sync::LazyLock<reqwest::Client> = std::sync::LazyLock::new(reqwest::Client::new);
    let url = format!("http://{metrics_addr}/metrics");
    let text = HTTP.get(url).send().await?.error_for_status()?.text().await?;
    Ok(cityhub_platform::metrics::sample(&text, family, labels))
}

/// The heap a binary's allocator says it holds, in MB, from its ops
/// listener at `metrics_addr` (`cityhub_heap_bytes{state="allocated"}`).
pub async fn heap_mb(metrics_addr: &str) -> Option<f64> {
    let bytes = scrape(metrics_addr, cityhub_platform::metrics::HEAP_BYTES, &[r#"state="allocated""#]).await.ok()??;
    Some(bytes / (1024.0 * 1024.0))
}

/// One line about the machine the figures were measured on.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().next().and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    format!(
        "{cores} cores ({cpu}), {mem:.0} GiB; API, worker, load generator, Redis, MariaDB and the broker share them"
    )
}
