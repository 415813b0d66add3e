//! The chaos lab: a MariaDB, a Redis, a RocketMQ name server and broker of
//! its own (own ports, data under one scratch folder), so killing them
//! disturbs nothing else on the machine. Each part can be killed or stopped
//! and started again in place: same port, same data (Redis alone comes
//! back empty, as a Redis without persistence does). The folder is removed
//! when the lab is dropped.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use cityhub_core::config::{Secret, Settings};
use tokio::process::Command;

use crate::platform::{free_port, Process};

/// One service of the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Database,
    Redis,
    NameServer,
    Broker,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Database => "mariadbd",
            Part::Redis => "redis-server",
            Part::NameServer => "rocketmq-namesrv-rust",
            Part::Broker => "rocketmq-broker-rust",
        }
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
    pub redis_port: u16,
    pub namesrv_port: u16,
    pub broker_port: u16,
    database: Option<Process>,
    redis: Option<Process>,
    namesrv: Option<Process>,
    broker: Option<Process>,
}

/// A port `p` with `p - 2` and `p + 1` free too: the broker listens on `p`,
/// on `p - 2` (its fast channel) and on `haListenPort`, set to `p + 1`
/// (its default, 10912, would clash with another broker).
fn broker_port() -> u16 {
    loop {
        let p = free_port();
        let free = |q: u16| std::net::TcpListener::bind(("127.0.0.1", q)).is_ok();
        if p > 1026 && p < u16::MAX && free(p - 2) && free(p + 1) {
            return p;
        }
    }
}

async fn port_open(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
}

impl Lab {
    /// Creates the data folders and starts every part.
    pub async fn start(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir.join("logs"))?;
        let mut lab = Self {
            dir: dir.to_path_buf(),
            keep: false,
            rocketmq_bin: rocketmq_bin()?,
            mysql_port: free_port(),
            redis_port: free_port(),
            namesrv_port: free_port(),
            broker_port: broker_port(),
            database: None,
            redis: None,
            namesrv: None,
            broker: None,
        };
        lab.install_database().await?;
        lab.write_broker_conf()?;
        for part in [Part::Database, Part::Redis, Part::NameServer, Part::Broker] {
            lab.start_part(part).await?;
        }
        Ok(lab)
    }

    /// `base` pointed at the lab's services.
    pub fn settings(&self, base: &Settings) -> Settings {
        let mut s = base.clone();
        s.database.url = Secret::new(format!("mysql://root@127.0.0.1:{}/cityhub", self.mysql_port));
        s.redis.url = Secret::new(format!("redis://127.0.0.1:{}", self.redis_port));
        s.mq.namesrv_addr = format!("127.0.0.1:{}", self.namesrv_port);
        s
    }

    fn log(&self, part: Part) -> PathBuf {
        self.dir.join("logs").join(format!("{}.log", part.name()))
    }

    async fn install_database(&self) -> anyhow::Result<()> {
        let data = self.dir.join("mysql");
        let out = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
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
        let store = self.dir.join("rocketmq");
        let conf = format!(
            "brokerClusterName = ChaosCluster\nbrokerName = chaos-broker\nbrokerId = 0\n\
             namesrvAddr = 127.0.0.1:{namesrv}\nbrokerIP1 = 127.0.0.1\nlistenPort = {port}\nhaListenPort = {ha}\n\
             autoCreateTopicEnable = true\nstorePathRootDir = {store}\nstorePathCommitLog = {store}/commitlog\n\
             flushDiskType = ASYNC_FLUSH\nmappedFileSizeCommitLog = 67108864\nmappedFileSizeConsumeQueue = 60000\n\
             maxHashSlotNum = 50000\nmaxIndexNum = 200000\n",
            namesrv = self.namesrv_port,
            port = self.broker_port,
            ha = self.broker_port + 1,
            store = store.display(),
        );
        std::fs::create_dir_all(&store)?;
        std::fs::write(self.dir.join("broker.conf"), conf)?;
        Ok(())
    }

    fn slot(&mut self, part: Part) -> &mut Option<Process> {
        match part {
            Part::Database => &mut self.database,
            Part::Redis => &mut self.redis,
            Part::NameServer => &mut self.namesrv,
            Part::Broker => &mut self.broker,
        }
    }

    /// Starts `part` on its port and data, and waits until it answers.
    pub async fn start_part(&mut self, part: Part) -> anyhow::Result<()> {
        let command = match part {
            Part::Database => {
                let mut c = Command::new("mariadbd");
                let data = self.dir.join("mysql");
                c.arg("--no-defaults")
                    .arg(format!("--datadir={}", data.display()))
                    .arg(format!("--port={}", self.mysql_port))
                    .arg(format!("--socket={}", self.dir.join("mysql.sock").display()))
                    .arg(format!("--pid-file={}", self.dir.join("mysql.pid").display()))
                    .args(["--bind-address=127.0.0.1", "--user=root", "--skip-log-bin"])
                    .args(["--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M", "--max-connections=500"]);
                c
            }
            Part::Redis => {
                let mut c = Command::new("redis-server");
                c.args([
                    "--port",
                    &self.redis_port.to_string(),
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
            Part::Redis => self.redis_port,
            Part::NameServer => self.namesrv_port,
            Part::Broker => self.broker_port,
        };
        let started = Instant::now();
        while !port_open(port).await {
            if let Some(status) = process.child.try_wait()? {
                bail!("{} exited with {status}; its log ends:\n{}", part.name(), process.log_tail(30));
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
        for part in [Part::Broker, Part::NameServer, Part::Redis, Part::Database] {
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
