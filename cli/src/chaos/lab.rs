//! The chaos lab: a MariaDB, a Redis, a RocketMQ name server and broker of
//! its own (own ports, data under one scratch folder), so killing them
//! disturbs nothing else on the machine. Each part can be killed or stopped
//! and started again in place: same port, same data (Redis comes back empty,
//! as a Redis without persistence does, or from the snapshot taken with
//! [`Lab::snapshot_redis`]). The platform reaches Redis through a forwarder
//! on the lab's Redis port, standing where a virtual IP or a DNS name would
//! in a deployment, so a failover can point it at a promoted replica
//! ([`Lab::fail_over_to_replica`]). The folder is removed when the lab is
//! dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use cityhub_core::config::{Secret, Settings};
use cityhub_platform::mq::runtime::MqRuntime;
use cityhub_platform::mq::{ensure_topic, start_producer, topic_reachable, ClientRuntime};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;
use tokio::sync::watch;

use crate::platform::{free_port, Process};

/// How long a fresh lab's broker gets to serve its first topic.
const SERVE_WITHIN: Duration = Duration::from_secs(60);

/// One RocketMQ client runtime for every lab of the process.
fn lab_mq_client() -> Arc<ClientRuntime> {
    static RT: std::sync::OnceLock<MqRuntime> = std::sync::OnceLock::new();
    RT.get_or_init(|| MqRuntime::new("lab").expect("mq runtime")).client()
}

/// A part being stalled ([`Lab::stall`]); dropped, it lets the part run
/// (a scenario that fails half-way leaves no process stopped).
pub struct Stall {
    end: tokio_util::sync::CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    pid: u32,
}

impl Stall {
    /// Lets the part run for good.
    pub async fn end(mut self) {
        self.end.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Stall {
    fn drop(&mut self) {
        self.end.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let _ = std::process::Command::new("kill").arg("-CONT").arg(self.pid.to_string()).status();
    }
}

/// One service of the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Database,
    Redis,
    /// A replica of Redis, started only by the failover scenario.
    Replica,
    NameServer,
    Broker,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Database => "mariadbd",
            Part::Redis => "redis-server",
            Part::Replica => "redis-replica",
            Part::NameServer => "rocketmq-namesrv-rust",
            Part::Broker => "rocketmq-broker-rust",
        }
    }
}

/// A TCP forwarder on the port the platform knows Redis by. Pointing it at
/// another server drops every connection it carries, as moving a virtual IP
/// does.
struct Forwarder {
    target: Arc<AtomicU16>,
    moved: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarder {
    /// Listens on a port of the system's choosing (so no other process can
    /// take it between a pick and the bind), forwarding to `target`.
    async fn start(target: u16) -> anyhow::Result<(Self, u16)> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.context("bind the Redis forwarder")?;
        let port = listener.local_addr()?.port();
        let target = Arc::new(AtomicU16::new(target));
        let (moved, watching) = watch::channel(0u64);
        let to = Arc::clone(&target);
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let (port, mut moved) = (to.load(Ordering::SeqCst), watching.clone());
                // Only a move after this connection was made ends it.
                moved.borrow_and_update();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", port)).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = moved.changed() => {}
                    }
                });
            }
        });
        Ok((Self { target, moved, task }, port))
    }

    fn point_at(&self, port: u16) {
        self.target.store(port, Ordering::SeqCst);
        self.moved.send_modify(|n| *n += 1);
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where the RocketMQ binaries are: `CITYHUB_ROCKETMQ_BIN`, else what
/// `scripts/stack bin` prints (the build `scripts/stack up` made).
pub fn rocketmq_bin() -> anyhow::Result<PathBuf> {
    if let Ok(dir) = std::env::var("CITYHUB_ROCKETMQ_BIN") {
        return Ok(dir.into());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/stack");
    let out = std::process::Command::new(&script).arg("bin").output().with_context(|| format!("run {script:?}"))?;
    let dir = PathBuf::from(String::from_utf8(out.stdout)?.trim());
    if !dir.join(Part::Broker.name()).exists() {
        bail!("no RocketMQ broker in {dir:?}: run scripts/stack up, or set CITYHUB_ROCKETMQ_BIN");
    }
    Ok(dir)
}

pub struct Lab {
    dir: PathBuf,
    keep: bool,
    rocketmq_bin: PathBuf,
    pub mysql_port: u16,
    /// Where the platform reaches Redis: the forwarder.
    pub redis_port: u16,
    /// The Redis server itself, and its replica's.
    redis_server_port: u16,
    replica_port: u16,
    pub namesrv_port: u16,
    pub broker_port: u16,
    /// MariaDB writes a row binlog (for the binlog outbox relay).
    binlog: bool,
    database: Option<Process>,
    redis: Option<Process>,
    replica: Option<Process>,
    namesrv: Option<Process>,
    broker: Option<Process>,
    forwarder: Option<Forwarder>,
}

/// A port `p` with `p - 2` and `p + 1` free too: the broker listens on `p`,
/// on `p - 2` (its fast channel) and on `haListenPort`, set to `p + 1`
/// (its default, 10912, would clash with another broker).
pub(super) fn broker_port() -> u16 {
    loop {
        let p = free_port();
        let free = |q: u16| std::net::TcpListener::bind(("127.0.0.1", q)).is_ok();
        if p > 1026 && p < u16::MAX && free(p - 2) && free(p + 1) {
            return p;
        }
    }
}

/// Writes the config of broker `name` at `path`, listening on `port` (and
/// `port + 1` for HA), registered with the name server on `namesrv`; its
/// store is the folder `rocketmq-<name>` beside the config, with small files.
pub(super) fn write_broker_conf(path: &Path, name: &str, namesrv: u16, port: u16) -> anyhow::Result<()> {
    let store = path.with_file_name(format!("rocketmq-{name}"));
    let conf = format!(
        "brokerClusterName = ChaosCluster\nbrokerName = {name}\nbrokerId = 0\n\
         namesrvAddr = 127.0.0.1:{namesrv}\nbrokerIP1 = 127.0.0.1\nlistenPort = {port}\nhaListenPort = {ha}\n\
         autoCreateTopicEnable = true\nstorePathRootDir = {store}\nstorePathCommitLog = {store}/commitlog\n\
         flushDiskType = ASYNC_FLUSH\nmappedFileSizeCommitLog = 67108864\nmappedFileSizeConsumeQueue = 60000\n\
         maxHashSlotNum = 50000\nmaxIndexNum = 200000\n",
        ha = port + 1,
        store = store.display(),
    );
    std::fs::create_dir_all(&store)?;
    std::fs::write(path, conf)?;
    Ok(())
}

/// The last lines of `log` that report an error or a failure.
pub(super) fn errors(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let found: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("fail") || l.contains("panic")
        })
        .collect();
    found[found.len().saturating_sub(15)..].join("\n")
}

pub(super) async fn port_open(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
}

impl Lab {
    /// Creates the data folders and starts every part; MariaDB writes no binlog.
    pub async fn start(dir: &Path) -> anyhow::Result<Self> {
        Self::start_with(dir, false).await
    }

    /// [`Lab::start`] with MariaDB writing a row binlog with full row
    /// metadata, as the binlog outbox relay needs; it survives restarts of
    /// the server (its files are in the data folder).
    pub async fn with_binlog(dir: &Path) -> anyhow::Result<Self> {
        Self::start_with(dir, true).await
    }

    async fn start_with(dir: &Path, binlog: bool) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir.join("logs"))?;
        let mut lab = Self {
            dir: dir.to_path_buf(),
            keep: false,
            rocketmq_bin: rocketmq_bin()?,
            mysql_port: free_port(),
            redis_port: 0,
            redis_server_port: free_port(),
            replica_port: free_port(),
            namesrv_port: free_port(),
            broker_port: broker_port(),
            binlog,
            database: None,
            redis: None,
            replica: None,
            namesrv: None,
            broker: None,
            forwarder: None,
        };
        lab.install_database().await?;
        lab.write_broker_conf()?;
        std::fs::create_dir_all(dir.join("replica"))?;
        let (forwarder, redis_port) = Forwarder::start(lab.redis_server_port).await?;
        (lab.forwarder, lab.redis_port) = (Some(forwarder), redis_port);
        for part in [Part::Database, Part::Redis, Part::NameServer, Part::Broker] {
            lab.start_fresh(part).await?;
        }
        // A fresh broker may register with its name server late on a loaded
        // machine, or (rarely) never serve at all: the lab is handed out only
        // once a topic made through it is routed, else its RocketMQ pair is
        // started again on new ports with an empty store.
        for attempt in 1.. {
            if lab.broker_serves(SERVE_WITHIN).await {
                break;
            }
            if attempt == 3 {
                bail!(
                    "the lab's broker never served a topic; its log ends:\n{}\nthe name server's:\n{}",
                    lab.log_tail(Part::Broker, 30),
                    lab.log_tail(Part::NameServer, 10)
                );
            }
            eprintln!(
                "the lab's broker served no topic within {SERVE_WITHIN:?} (attempt {attempt}); starting its RocketMQ pair \
                 again; its log ends:\n{}",
                lab.log_tail(Part::Broker, 30)
            );
            lab.kill(Part::Broker).await?;
            lab.kill(Part::NameServer).await?;
            for part in [Part::NameServer, Part::Broker] {
                lab.repick(part)?;
                lab.start_fresh(part).await?;
            }
        }
        Ok(lab)
    }

    /// Starts `part` before the platform knows its ports: one whose port was
    /// taken since it was picked gets another, up to three times.
    async fn start_fresh(&mut self, part: Part) -> anyhow::Result<()> {
        let mut attempt = 1;
        loop {
            if part == Part::Broker {
                // A broker that died while starting may leave a store it
                // cannot open again; the lab has nothing in it yet.
                let _ = std::fs::remove_dir_all(self.dir.join("rocketmq-chaos-broker"));
            }
            match self.start_part(part).await {
                Ok(()) => return Ok(()),
                Err(err) if attempt == 3 => return Err(err),
                Err(err) => eprintln!("{} did not start on its port; trying another: {err}", part.name()),
            }
            self.repick(part)?;
            attempt += 1;
        }
    }

    /// True once a probe topic, created through the broker, has a writable
    /// route at the name server, within `within`.
    pub async fn broker_serves(&self, within: Duration) -> bool {
        let settings = self.settings(&Settings::defaults());
        let deadline = Instant::now() + within;
        let Ok(mut admin) = start_producer(&lab_mq_client(), &settings.mq, "cityhub_lab_probe").await else {
            return false;
        };
        let mut serves = false;
        while !serves && Instant::now() < deadline {
            serves = ensure_topic(&admin, "cityhub_lab_probe", 1).await
                && topic_reachable(&admin, "cityhub_lab_probe", Duration::from_secs(5)).await;
            if !serves {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        admin.shutdown().await;
        serves
    }

    /// A new port for `part`, before the platform knows its ports.
    fn repick(&mut self, part: Part) -> anyhow::Result<()> {
        match part {
            Part::Database => self.mysql_port = free_port(),
            Part::Redis => {
                self.redis_server_port = free_port();
                if let Some(f) = &self.forwarder {
                    f.point_at(self.redis_server_port);
                }
            }
            Part::Replica => self.replica_port = free_port(),
            Part::NameServer => self.namesrv_port = free_port(),
            Part::Broker => self.broker_port = broker_port(),
        }
        self.write_broker_conf()
    }

    /// The lab's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the RocketMQ binaries are.
    pub fn rocketmq_bin(&self) -> &Path {
        &self.rocketmq_bin
    }

    /// `base` pointed at the lab's services.
    pub fn settings(&self, base: &Settings) -> Settings {
        let mut s = base.clone();
        s.database.url = Secret::new(format!("mysql://root@127.0.0.1:{}/cityhub", self.mysql_port));
        s.redis.url = Secret::new(format!("redis://127.0.0.1:{}", self.redis_port));
        s.redis.cluster_nodes.clear();
        s.mq.namesrv_addr = format!("127.0.0.1:{}", self.namesrv_port);
        s
    }

    fn log(&self, part: Part) -> PathBuf {
        self.dir.join("logs").join(format!("{}.log", part.name()))
    }

    /// Sends `cmd` to the Redis server on `port` (the lab's own, or its replica).
    async fn redis_at(&self, port: u16, cmd: &redis::Cmd) -> anyhow::Result<redis::Value> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}"))?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        Ok(cmd.query_async(&mut conn).await?)
    }

    /// `SAVE` on the Redis server: the snapshot its next start loads.
    pub async fn snapshot_redis(&self) -> anyhow::Result<()> {
        self.redis_at(self.redis_server_port, &redis::cmd("SAVE")).await.map(|_| ())
    }

    /// Starts a replica of the Redis server and waits until it is in sync.
    pub async fn start_replica(&mut self) -> anyhow::Result<()> {
        self.start_part(Part::Replica).await?;
        let started = Instant::now();
        loop {
            let info = self.redis_at(self.replica_port, redis::cmd("INFO").arg("replication")).await?;
            let info: String = redis::from_redis_value(info)?;
            if info.contains("master_link_status:up") {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!("the Redis replica did not sync within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Cuts the replica off its master (`REPLICAOF NO ONE`): from now on it
    /// falls behind, and it is a master of its own with a new replication id.
    pub async fn detach_replica(&self) -> anyhow::Result<()> {
        self.redis_at(self.replica_port, redis::cmd("REPLICAOF").arg("NO").arg("ONE")).await.map(|_| ())
    }

    /// The master dies and the forwarder moves to the (detached) replica.
    pub async fn fail_over_to_replica(&mut self) -> anyhow::Result<()> {
        self.kill(Part::Redis).await?;
        if let Some(forwarder) = &self.forwarder {
            forwarder.point_at(self.replica_port);
        }
        Ok(())
    }

    /// The lab's own temporary folder for MariaDB: a `mariadbd` starting
    /// removes every `#sql*` file in its tmpdir, so labs sharing `/tmp`
    /// would delete each other's temporary tables (a bootstrap running in
    /// one lab while another lab's server starts fails with "Unknown table").
    fn database_tmp(&self) -> PathBuf {
        self.dir.join("mysql-tmp")
    }

    async fn install_database(&self) -> anyhow::Result<()> {
        let data = self.dir.join("mysql");
        std::fs::create_dir_all(self.database_tmp())?;
        let out = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", self.database_tmp().display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db", "--user=root"])
            .output()
            .await
            .context("run mariadb-install-db (package mariadb-server)")?;
        if !out.status.success() {
            bail!("mariadb-install-db failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }

    fn write_broker_conf(&self) -> anyhow::Result<()> {
        write_broker_conf(&self.dir.join("broker.conf"), "chaos-broker", self.namesrv_port, self.broker_port)
    }

    fn slot(&mut self, part: Part) -> &mut Option<Process> {
        match part {
            Part::Database => &mut self.database,
            Part::Redis => &mut self.redis,
            Part::Replica => &mut self.replica,
            Part::NameServer => &mut self.namesrv,
            Part::Broker => &mut self.broker,
        }
    }

    /// Starts `part` on its port and data, and waits until it answers. A
    /// part that exits while starting (a port another lab took between our
    /// pick and its bind, a port the killed process held a moment longer) is
    /// started again, up to three times.
    pub async fn start_part(&mut self, part: Part) -> anyhow::Result<()> {
        let mut attempt = 1;
        loop {
            match self.start_once(part).await {
                Err(err) if attempt < 3 && err.to_string().contains("exited with") => {
                    eprintln!("{} exited while starting (attempt {attempt}); starting it again: {err}", part.name());
                    attempt += 1;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                outcome => return outcome,
            }
        }
    }

    async fn start_once(&mut self, part: Part) -> anyhow::Result<()> {
        let command = match part {
            Part::Database => {
                let mut c = Command::new("mariadbd");
                let data = self.dir.join("mysql");
                c.arg("--no-defaults")
                    .arg(format!("--datadir={}", data.display()))
                    .arg(format!("--tmpdir={}", self.database_tmp().display()))
                    .arg(format!("--port={}", self.mysql_port))
                    .arg(format!("--socket={}", self.dir.join("mysql.sock").display()))
                    .arg(format!("--pid-file={}", self.dir.join("mysql.pid").display()))
                    .args(["--bind-address=127.0.0.1", "--user=root"])
                    .args(["--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M", "--max-connections=500"]);
                match self.binlog {
                    true => c
                        .arg(format!("--log-bin={}", data.join("binlog").display()))
                        .args(["--server-id=1", "--binlog-format=ROW", "--binlog-row-image=FULL"])
                        .arg("--binlog-row-metadata=FULL"),
                    false => c.arg("--skip-log-bin"),
                };
                c
            }
            Part::Redis => {
                let mut c = Command::new("redis-server");
                c.args([
                    "--port",
                    &self.redis_server_port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ])
                .current_dir(&self.dir);
                c
            }
            Part::Replica => {
                let mut c = Command::new("redis-server");
                let (port, master) = (self.replica_port.to_string(), self.redis_server_port.to_string());
                c.args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                    .args(["--replicaof", "127.0.0.1", &master])
                    .current_dir(self.dir.join("replica"));
                c
            }
            Part::NameServer => {
                let mut c = Command::new(self.rocketmq_bin.join(part.name()));
                c.args(["--bindAddress", "127.0.0.1", "--listenPort", &self.namesrv_port.to_string()])
                    .env("ROCKETMQ_HOME", &self.dir);
                c
            }
            Part::Broker => {
                let mut c = Command::new(self.rocketmq_bin.join(part.name()));
                c.arg("-c").arg(self.dir.join("broker.conf")).env("ROCKETMQ_HOME", &self.dir);
                c
            }
        };
        let mut process = Process::start(part.name(), command, &self.log(part))?;
        let port = match part {
            Part::Database => self.mysql_port,
            Part::Redis => self.redis_server_port,
            Part::Replica => self.replica_port,
            Part::NameServer => self.namesrv_port,
            Part::Broker => self.broker_port,
        };
        let started = Instant::now();
        while !port_open(port).await {
            if let Some(status) = process.child.try_wait()? {
                bail!(
                    "{} exited with {status}; its errors:\n{}\nits log ends:\n{}",
                    part.name(),
                    errors(&self.log(part)),
                    process.log_tail(30)
                );
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("{} did not listen on {port} within 60 s; its log ends:\n{}", part.name(), process.log_tail(30));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if part == Part::Broker {
            // It registers with the name server right after it listens.
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        *self.slot(part) = Some(process);
        Ok(())
    }

    /// `kill -9` of `part`.
    pub async fn kill(&mut self, part: Part) -> anyhow::Result<()> {
        match self.slot(part).take() {
            Some(p) => p.kill().await,
            None => Ok(()),
        }
    }

    /// Stalls `part` again and again until [`Stall::end`]: stopped
    /// (`SIGSTOP`) for `stalled`, then running for `running`. A process that
    /// still answers, each answer up to `stalled` late, like a broker in
    /// long GC pauses or on a stalling disk.
    pub fn stall(&mut self, part: Part, stalled: Duration, running: Duration) -> anyhow::Result<Stall> {
        let pid = self.slot(part).as_ref().and_then(|p| p.child.id()).context("the part is not running")?;
        let signal = move |sig: &str| {
            let _ = std::process::Command::new("kill").arg(sig).arg(pid.to_string()).status();
        };
        let end = tokio_util::sync::CancellationToken::new();
        let ended = end.clone();
        let task = tokio::spawn(async move {
            while !ended.is_cancelled() {
                signal("-STOP");
                tokio::select! {
                    () = tokio::time::sleep(stalled) => {}
                    () = ended.cancelled() => {}
                }
                signal("-CONT");
                tokio::select! {
                    () = tokio::time::sleep(running) => {}
                    () = ended.cancelled() => {}
                }
            }
            signal("-CONT");
        });
        Ok(Stall { end, task: Some(task), pid })
    }

    /// A clean stop of `part` (SIGTERM, then wait).
    pub async fn stop(&mut self, part: Part) -> anyhow::Result<()> {
        match self.slot(part).take() {
            Some(p) => p.stop().await,
            None => Ok(()),
        }
    }

    /// Leaves the folder (data and logs) in place when dropped.
    pub fn keep(&mut self) {
        self.keep = true;
    }

    /// The end of a part's log.
    pub fn log_tail(&self, part: Part, lines: usize) -> String {
        crate::platform::tail(&self.log(part), lines)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for part in [Part::Broker, Part::NameServer, Part::Replica, Part::Redis, Part::Database] {
            if let Some(mut p) = self.slot(part).take() {
                let _ = p.child.start_kill();
            }
        }
        // Give the children a moment to exit before their files go.
        std::thread::sleep(Duration::from_millis(200));
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
