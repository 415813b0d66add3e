//! The lab's scale-out shape, beside its MariaDB, name server and first
//! broker: a Redis Cluster of 3 masters with a replica each (plain
//! `redis-server` in cluster mode, joined by `redis-cli --cluster create`), a
//! second broker registered with the same name server (so the order topic
//! has queues on both), and HAProxy in front of two APIs. Every process has
//! its own port and its data under the lab's folder, so a node, a broker or
//! the balancer can be killed and started again in place: a killed Redis
//! master's replica is promoted by the cluster itself
//! (`cluster-node-timeout` 5 s), and the old master, started again on its
//! own `nodes.conf`, rejoins as a replica.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use tokio::process::Command;

use cityhub_core::config::Settings;

use super::lab::{port_open, Lab};
use crate::platform::{free_port, Platform, Process, SecondApi};

/// Nodes of the Redis Cluster: 3 masters, then one replica each.
const NODES: usize = 6;

/// How long a master may be unreachable before its replica takes over.
pub const NODE_TIMEOUT_MS: u64 = 5000;

/// The cluster shape's parts and the second API (the first API and both
/// workers are the [`Platform`]'s).
pub struct Shape {
    pub parts: ClusterParts,
    pub second_api: SecondApi,
}

/// Starts the cluster shape beside `lab` and the platform on it: the Redis
/// Cluster and the second broker, then the first API and worker with
/// `settings` (pointed at the cluster), a second worker (waited for until it
/// holds queues, up to `rebalance`), a second API, and HAProxy in front of
/// both APIs.
pub async fn start_shape(
    lab: &Lab,
    mut settings: Settings,
    logs: &Path,
    rebalance: Duration,
) -> anyhow::Result<(Platform, Shape)> {
    let mut parts = ClusterParts::start(lab).await.context("start the cluster shape")?;
    settings.redis.cluster_nodes = parts.cluster_nodes();
    let mut platform = Platform::start(settings.clone(), logs).await?;
    platform.start_second_worker().await?;
    // Until the group rebalances the first worker holds every queue.
    platform.wait_second_worker_holds_queues(rebalance).await?;
    let second_api = platform.start_second_api(settings.limits.clone()).await?;
    let apis = [platform.settings.http.addr.clone(), second_api.base.trim_start_matches("http://").to_owned()];
    parts.start_balancer(&apis).await?;
    Ok((platform, Shape { parts, second_api }))
}

pub struct ClusterParts {
    dir: PathBuf,
    rocketmq_bin: PathBuf,
    namesrv_port: u16,
    pub node_ports: Vec<u16>,
    /// Each node's cluster bus port, chosen like its own (Redis would take
    /// `port + 10000`, inside the ephemeral range).
    bus_ports: Vec<u16>,
    nodes: Vec<Option<Process>>,
    pub broker_b_port: u16,
    broker_b: Option<Process>,
    /// Chosen when the balancer starts (0 until then), with the port of
    /// its statistics page.
    pub balancer_port: u16,
    stats_port: u16,
    balancer: Option<Process>,
}

impl ClusterParts {
    /// Starts the Redis Cluster and the second broker; the balancer comes
    /// later ([`ClusterParts::start_balancer`]), once the APIs run.
    pub async fn start(lab: &Lab) -> anyhow::Result<Self> {
        let dir = lab.dir().join("cluster");
        std::fs::create_dir_all(dir.join("logs"))?;
        let mut parts = Self {
            dir,
            rocketmq_bin: lab.rocketmq_bin().to_path_buf(),
            namesrv_port: lab.namesrv_port,
            node_ports: (0..NODES).map(|_| free_port()).collect(),
            bus_ports: (0..NODES).map(|_| free_port()).collect(),
            nodes: (0..NODES).map(|_| None).collect(),
            broker_b_port: super::lab::broker_port(),
            broker_b: None,
            balancer_port: 0,
            stats_port: 0,
            balancer: None,
        };
        for node in 0..NODES {
            parts.start_node(node).await?;
        }
        parts.create_cluster().await?;
        // Its ports were free when chosen; a lab starting beside it may take
        // one of the three before the broker binds them. A first start that
        // fails is tried again on fresh ports (later restarts keep them).
        let mut tries = 0;
        while let Err(err) = parts.start_broker_b().await {
            tries += 1;
            anyhow::ensure!(tries < 3, err);
            eprintln!("the second broker did not start ({err:#}); trying fresh ports");
            parts.broker_b_port = super::lab::broker_port();
        }
        Ok(parts)
    }

    /// The nodes as `redis.cluster_nodes` takes them.
    pub fn cluster_nodes(&self) -> String {
        self.node_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect::<Vec<_>>().join(",")
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{name}.log"))
    }

    /// Starts node `node` on its port and folder (its `nodes.conf` there
    /// keeps its place in the cluster across restarts).
    pub async fn start_node(&mut self, node: usize) -> anyhow::Result<()> {
        let (port, bus) = (self.node_ports[node], self.bus_ports[node]);
        let folder = self.dir.join(format!("node-{port}"));
        std::fs::create_dir_all(&folder)?;
        let mut c = Command::new("redis-server");
        c.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"])
            .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
            .args(["--cluster-port", &bus.to_string()])
            .current_dir(&folder);
        let process = start_listening("redis-cluster-node", c, port, &self.log(&format!("redis-{port}"))).await?;
        self.nodes[node] = Some(process);
        Ok(())
    }

    async fn create_cluster(&self) -> anyhow::Result<()> {
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(self.node_ports.iter().map(|p| format!("127.0.0.1:{p}")))
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .await
            .context("run redis-cli --cluster create (package redis-tools)")?;
        if !out.status.success() {
            bail!("redis-cli --cluster create failed: {}", String::from_utf8_lossy(&out.stdout));
        }
        self.wait_healthy(Duration::from_secs(60)).await
    }

    /// Waits until the cluster reports `ok` with a replica for every master.
    pub async fn wait_healthy(&self, within: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Ok(view) = self.view().await {
                if view.state_ok && view.masters.len() == NODES / 2 && view.replicas >= NODES / 2 {
                    return Ok(());
                }
            }
            if started.elapsed() > within {
                bail!("the Redis Cluster was not whole within {within:?}: {:?}", self.view().await.ok());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The cluster as a node that answers sees it.
    async fn view(&self) -> anyhow::Result<View> {
        for (node, port) in self.node_ports.iter().enumerate() {
            if self.nodes[node].is_none() {
                continue;
            }
            let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { continue };
            let Ok(mut conn) = client.get_multiplexed_async_connection().await else { continue };
            let info: String = redis::cmd("CLUSTER").arg("INFO").query_async(&mut conn).await?;
            let nodes: String = redis::cmd("CLUSTER").arg("NODES").query_async(&mut conn).await?;
            return Ok(View::parse(&info, &nodes));
        }
        bail!("no node of the Redis Cluster answers")
    }

    /// The port of the master that holds `key`'s slot.
    pub async fn master_of(&self, key: &str) -> anyhow::Result<u16> {
        let slot = cityhub_platform::kv::conn::slot(key.as_bytes());
        let view = self.view().await?;
        view.masters
            .iter()
            .find(|m| m.slots.iter().any(|(from, to)| (*from..=*to).contains(&slot)))
            .map(|m| m.port)
            .with_context(|| format!("no master holds slot {slot}"))
    }

    /// `kill -9` of the node on `port`.
    pub async fn kill_node(&mut self, port: u16) -> anyhow::Result<()> {
        let node = self.node_ports.iter().position(|p| *p == port).context("no such node")?;
        match self.nodes[node].take() {
            Some(p) => p.kill().await,
            None => Ok(()),
        }
    }

    /// Starts the node on `port` again (it rejoins as a replica when its
    /// replica was promoted meanwhile).
    pub async fn restart_node(&mut self, port: u16) -> anyhow::Result<()> {
        let node = self.node_ports.iter().position(|p| *p == port).context("no such node")?;
        self.start_node(node).await
    }

    /// Waits until a node other than `old` serves `key`'s slot as master.
    pub async fn wait_promoted(&self, key: &str, old: u16, within: Duration) -> anyhow::Result<u16> {
        let started = Instant::now();
        loop {
            if let Ok(port) = self.master_of(key).await {
                if port != old && self.view().await.is_ok_and(|v| v.state_ok) {
                    return Ok(port);
                }
            }
            if started.elapsed() > within {
                bail!("no replica took over from master {old} within {within:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts the second broker on its port and store.
    pub async fn start_broker_b(&mut self) -> anyhow::Result<()> {
        let conf = self.dir.join("broker-b.conf");
        super::lab::write_broker_conf(&conf, "chaos-broker-b", self.namesrv_port, self.broker_b_port)?;
        let mut c = Command::new(self.rocketmq_bin.join("rocketmq-broker-rust"));
        c.arg("-c").arg(conf).env("ROCKETMQ_HOME", &self.dir);
        let process = start_listening("rocketmq-broker-b", c, self.broker_b_port, &self.log("broker-b")).await?;
        // It registers with the name server right after it listens.
        tokio::time::sleep(Duration::from_secs(2)).await;
        self.broker_b = Some(process);
        Ok(())
    }

    /// Stops the second broker (SIGTERM), as a deploy does.
    pub async fn stop_broker_b(&mut self) -> anyhow::Result<()> {
        match self.broker_b.take() {
            Some(p) => p.stop().await,
            None => Ok(()),
        }
    }

    /// `kill -9` of the second broker.
    pub async fn kill_broker_b(&mut self) -> anyhow::Result<()> {
        match self.broker_b.take() {
            Some(p) => p.kill().await,
            None => Ok(()),
        }
    }

    /// HAProxy on [`ClusterParts::balancer_port`] in front of `apis`
    /// (`host:port`): round robin, health-checked on `/serving` every 500 ms
    /// (out of the pool after two failures, so an API draining for 2 s is
    /// left before it stops accepting),
    /// a request whose connection failed sent to the other API (a request
    /// that reached an API is never sent twice).
    pub async fn start_balancer(&mut self, apis: &[String]) -> anyhow::Result<()> {
        let servers: String = apis
            .iter()
            .enumerate()
            .map(|(i, addr)| format!("    server api{i} {addr} check inter 500ms fall 2 rise 1\n"))
            .collect();
        // The port is chosen now, not when the parts started: a lab starting
        // beside this one may have taken a port chosen minutes ago. A start
        // that fails on a taken port is tried again on a fresh one.
        let mut tries = 0;
        loop {
            self.balancer_port = free_port();
            self.stats_port = free_port();
            match self.start_haproxy(&servers).await {
                Ok(process) => {
                    self.balancer = Some(process);
                    return Ok(());
                }
                Err(err) if tries < 2 => {
                    tries += 1;
                    eprintln!("the balancer did not start ({err:#}); trying a fresh port");
                }
                Err(err) => return Err(err),
            }
        }
    }

    async fn start_haproxy(&self, servers: &str) -> anyhow::Result<Process> {
        let conf = format!(
            "global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n\
             \x20   timeout server 30s\n    retries 3\n    option redispatch\n    retry-on conn-failure\n\
             frontend shoppers\n    bind 127.0.0.1:{port}\n    default_backend apis\n\
             backend apis\n    balance roundrobin\n    option httpchk GET /serving\n{servers}\
             frontend stats\n    bind 127.0.0.1:{stats}\n    stats enable\n    stats uri /stats\n",
            port = self.balancer_port,
            stats = self.stats_port,
        );
        let path = self.dir.join("haproxy.cfg");
        std::fs::write(&path, conf)?;
        let mut c = Command::new("haproxy");
        c.arg("-db").arg("-f").arg(&path);
        start_listening("haproxy", c, self.balancer_port, &self.log("haproxy"))
            .await
            .context("start HAProxy (package haproxy)")
    }

    /// Waits until the balancer has API `index` (0 or 1) in its pool: its
    /// `/serving` check passed since it started again.
    pub async fn wait_in_pool(&self, index: usize, within: Duration) -> anyhow::Result<()> {
        let url = format!("http://127.0.0.1:{}/stats;csv", self.stats_port);
        let server = format!("api{index}");
        let started = Instant::now();
        loop {
            let csv = reqwest::get(&url).await?.text().await?;
            if server_status(&csv, "apis", &server).as_deref() == Some("UP") {
                return Ok(());
            }
            anyhow::ensure!(started.elapsed() < within, "the balancer did not take {server} back within {within:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The balancer's base URL.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.balancer_port)
    }

    /// The ends of the parts' logs, for a run that failed.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for name in ["haproxy", "broker-b"] {
            out.push_str(&format!("--- {name}\n{}\n", crate::platform::tail(&self.log(name), 10)));
        }
        out
    }
}

impl Drop for ClusterParts {
    fn drop(&mut self) {
        for mut p in self.nodes.iter_mut().chain([&mut self.broker_b, &mut self.balancer]).filter_map(Option::take) {
            let _ = p.child.start_kill();
        }
    }
}

/// A server's status (`UP`, `DOWN`, ...) in HAProxy's CSV statistics.
fn server_status(csv: &str, backend: &str, server: &str) -> Option<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.trim_start_matches("# ").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let (px, sv, status) = (column("pxname")?, column("svname")?, column("status")?);
    lines.map(|l| l.split(',').collect::<Vec<_>>()).find_map(|f| {
        (f.get(px) == Some(&backend) && f.get(sv) == Some(&server)).then(|| f.get(status).map(|s| (*s).to_owned()))?
    })
}

/// Starts `command` and waits until it listens on `port`; fails if the port
/// is already taken (another process would answer in its place), if it exits
/// first or right after the port opened (someone else bound the port in
/// between), or if it takes more than a minute.
async fn start_listening(name: &'static str, command: Command, port: u16, log: &Path) -> anyhow::Result<Process> {
    if port_open(port).await {
        bail!("{name} cannot start: port {port} is taken by another process");
    }
    let mut process = Process::start(name, command, log)?;
    let started = Instant::now();
    while !port_open(port).await {
        if let Some(status) = process.child.try_wait()? {
            let errors = super::lab::errors(log);
            bail!("{name} exited with {status}; its errors:\n{errors}\nits log ends:\n{}", process.log_tail(30));
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("{name} did not listen on {port} within 60 s; its log ends:\n{}", process.log_tail(30));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    if let Some(status) = process.child.try_wait()? {
        bail!("{name} exited with {status} right after port {port} opened; its log ends:\n{}", process.log_tail(30));
    }
    Ok(process)
}

/// A master and the slot ranges it serves.
#[derive(Debug)]
struct Master {
    port: u16,
    slots: Vec<(u16, u16)>,
}

/// What `CLUSTER INFO` and `CLUSTER NODES` say.
#[derive(Debug)]
struct View {
    state_ok: bool,
    masters: Vec<Master>,
    replicas: usize,
}

impl View {
    fn parse(info: &str, nodes: &str) -> Self {
        let state_ok = info.lines().any(|l| l.trim() == "cluster_state:ok");
        let mut masters = Vec::new();
        let mut replicas = 0;
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 || fields[2].contains("fail") {
                continue;
            }
            let port = fields[1].split('@').next().and_then(|a| a.rsplit(':').next()).and_then(|p| p.parse().ok());
            let Some(port) = port else { continue };
            if fields[2].contains("master") {
                let slots = fields[8..]
                    .iter()
                    .filter(|s| !s.starts_with('['))
                    .filter_map(|s| match s.split_once('-') {
                        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                        None => s.parse().ok().map(|one| (one, one)),
                    })
                    .collect::<Vec<_>>();
                if !slots.is_empty() {
                    masters.push(Master { port, slots });
                }
            } else if fields[2].contains("slave") {
                replicas += 1;
            }
        }
        Self { state_ok, masters, replicas }
    }
}

#[cfg(test)]
mod tests {
    use super::View;

    #[test]
    fn the_balancer_statistics_give_each_server_its_status() {
        let csv =
            "# pxname,svname,qcur,status,weight\nshoppers,FRONTEND,,OPEN,\napis,api0,0,UP,1\napis,api1,0,DOWN,1\n";
        assert_eq!(super::server_status(csv, "apis", "api0").as_deref(), Some("UP"));
        assert_eq!(super::server_status(csv, "apis", "api1").as_deref(), Some("DOWN"));
        assert_eq!(super::server_status(csv, "apis", "api2"), None);
    }

    #[test]
    fn a_cluster_view_names_masters_with_their_slots() {
        let nodes = "a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n\
                     b2 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922 10923\n\
                     c3 127.0.0.1:7003@17003 slave a1 0 0 1 connected\n\
                     d4 127.0.0.1:7002@17002 master,fail - 0 0 3 disconnected 10924-16383\n";
        let view = View::parse("cluster_state:ok\r\n", nodes);
        assert!(view.state_ok);
        assert_eq!(view.masters.len(), 2, "a failed master is not counted");
        assert_eq!(view.masters[1].port, 7001);
        assert_eq!(view.masters[1].slots, vec![(5461, 10922), (10923, 10923)]);
        assert_eq!(view.replicas, 1);
    }
}
