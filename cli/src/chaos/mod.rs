//! `cityhub chaos`: flash sales while processes die, and the proof that
//! nothing accepted was lost and nothing oversold.
//!
//! Each scenario gets a [`lab::Lab`] of its own (MariaDB, Redis, name
//! server and broker on their own ports and data) with the API and worker
//! on it, a voucher and users; a paced stampede runs ([`shoppers`]) while
//! the fault driver waits for its trigger, injects the fault, heals it, and
//! measures the time until the sale's state is whole again. After the
//! stampede the run waits for the drain and the reconciler, then counts the
//! invariants with the shared checker ([`Tally`]) and asks the reconciler
//! for its verdict. A scenario passes when nothing is oversold, doubled,
//! lost, stranded or unexplained, Redis agrees with MySQL, the reconciler
//! says `consistent` and every fault was recovered from in time.
//!
//! The `relay-` scenarios run the worker's outbox relay on the binlog
//! (`outbox.relay = "binlog"`, the lab's MariaDB writing a row binlog) while
//! the shoppers also follow and unfollow each other, so follow events are
//! streaming when the fault strikes; they pass only if, beside the sale's
//! invariants, every follow event committed was applied exactly once in
//! effect ([`Relayed`]) and the relay was still streaming at the end.
//!
//! The deploy scenarios (`cluster-rolling-`, see `deploy`) restart every
//! part in turn the way an operator deploys; they pass only if, beside the
//! invariants, no shopper saw a failed request during the deploy.
//!
//! The lab runs the reconciler every 2 s with a 5 s grace period (stranded
//! reservations are re-published after it) and samples the consumer lag
//! every second, so recovery is measured in seconds, not minutes.

pub mod cluster;
mod deploy;
pub mod hostile;
pub mod lab;
pub mod report;
pub mod shoppers;
pub mod soak;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::{UserId, VoucherId};
use cityhub_platform::config::RelayKind;
use cityhub_testkit::invariants::{self, Accepted, Tally};
use cityhub_testkit::relayed::{self, Relayed};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

use crate::platform::Platform;
use lab::{Lab, Part};
use shoppers::{Answer, Pace, Record, Shoppers};

/// One fault, or all of them in sequence in one sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// The worker is killed (`kill -9`) mid-drain and restarted.
    WorkerKill,
    /// The broker is killed mid-sale and restarted on the same store.
    BrokerKill,
    /// The name server is killed and restarted after a while.
    NamesrvDown,
    /// MariaDB is stopped mid-drain and started again.
    DatabaseStop,
    /// Redis is killed and restarted empty mid-sale.
    RedisRestart,
    /// The API is killed mid-stampede and restarted.
    ApiKill,
    /// Redis is killed mid-sale and restarted from an RDB snapshot taken
    /// earlier in the sale: it comes back older than it was.
    RedisStaleRestore,
    /// Redis fails over mid-sale to a replica that stopped following its
    /// master earlier in the sale: the forwarder moves to it.
    RedisFailover,
    /// Redis restarts empty while the worker's reconciler and an admin's
    /// (every 100 ms) race to rebuild, shoppers retrying meanwhile.
    RebuildRace,
    /// MariaDB is stopped mid-sale for longer than the voucher details' TTL.
    DatabaseOutlastsTtl,
    /// A transaction holds the voucher's stock row past MariaDB's
    /// `innodb_lock_wait_timeout` while Redis restarts empty: the worker's
    /// batch fails with a lock-wait timeout and is retried while the keys
    /// are lost.
    LockWaitDuringLoss,
    /// The broker answers every send up to 2.5 s late (it is stopped for
    /// 2.5 s at a time) while Redis restarts empty: orders reserved before
    /// the loss are still on their way to the broker when the rebuild waits
    /// for what was published before it.
    SlowBrokerDuringLoss,
    /// Two workers share the order group; Redis restarts empty and one
    /// worker is killed right after, so its queues move to the other
    /// (a rebalance) while the reconcilers rebuild.
    WorkerKillAfterLoss,
    /// With the binlog outbox relay streaming follow events, the worker
    /// (and its relay) is killed (`kill -9`) and restarted: the relay resumes
    /// from its stored position.
    RelayKill,
    /// With the binlog relay streaming, MariaDB is killed (`kill -9`) and
    /// started again: the relay reconnects from its stored position.
    RelayDatabaseRestart,
    /// With the binlog relay streaming, the broker is killed and stays down
    /// while follow events keep being committed (the binlog grows), then
    /// comes back on its store.
    RelayBrokerDown,
    /// Every single fault of the first six, one after another, in one sale.
    All,
    /// On the cluster shape: the Redis master holding the voucher's slot is
    /// killed mid-sale; the cluster promotes its replica, and the old master
    /// rejoins as a replica.
    ClusterMasterKill,
    /// On the cluster shape: one of the two brokers is killed mid-sale and
    /// restarted on its store.
    ClusterBrokerKill,
    /// On the cluster shape: one of the two APIs behind the balancer is
    /// killed mid-stampede and restarted.
    ClusterApiKill,
    /// On the cluster shape: one of the two workers is killed mid-drain (its
    /// queues move to the other) and restarted.
    ClusterWorkerKill,
    /// On the cluster shape, mid-sale: each API in turn drained, stopped and
    /// started again, then each worker, then each broker (see `deploy`).
    ClusterRollingDeploy,
    /// The rolling deploy with the APIs and workers started again from
    /// another build (`--next-bin-dir`): two versions serve side by side.
    ClusterRollingUpgrade,
}

impl Scenario {
    /// Every scenario, in the order a full run takes them.
    pub const EVERY: [Scenario; 23] = [
        Scenario::WorkerKill,
        Scenario::BrokerKill,
        Scenario::NamesrvDown,
        Scenario::DatabaseStop,
        Scenario::RedisRestart,
        Scenario::ApiKill,
        Scenario::RedisStaleRestore,
        Scenario::RedisFailover,
        Scenario::RebuildRace,
        Scenario::DatabaseOutlastsTtl,
        Scenario::LockWaitDuringLoss,
        Scenario::SlowBrokerDuringLoss,
        Scenario::WorkerKillAfterLoss,
        Scenario::RelayKill,
        Scenario::RelayDatabaseRestart,
        Scenario::RelayBrokerDown,
        Scenario::All,
        Scenario::ClusterMasterKill,
        Scenario::ClusterBrokerKill,
        Scenario::ClusterApiKill,
        Scenario::ClusterWorkerKill,
        Scenario::ClusterRollingDeploy,
        Scenario::ClusterRollingUpgrade,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::WorkerKill => "worker kill -9",
            Scenario::BrokerKill => "broker kill -9",
            Scenario::NamesrvDown => "name server down",
            Scenario::DatabaseStop => "MariaDB stopped",
            Scenario::RedisRestart => "Redis restarted empty",
            Scenario::ApiKill => "API kill -9",
            Scenario::RedisStaleRestore => "Redis restored from an older snapshot",
            Scenario::RedisFailover => "Redis failover to a replica behind",
            Scenario::RebuildRace => "two reconcilers rebuilding at once",
            Scenario::DatabaseOutlastsTtl => "MariaDB stopped past the details' TTL",
            Scenario::LockWaitDuringLoss => "lock-wait timeout while Redis restarts",
            Scenario::SlowBrokerDuringLoss => "broker answering 2.5 s late while Redis restarts",
            Scenario::WorkerKillAfterLoss => "one of two workers killed after a loss",
            Scenario::RelayKill => "binlog relay: worker kill -9",
            Scenario::RelayDatabaseRestart => "binlog relay: MariaDB kill -9, restart",
            Scenario::RelayBrokerDown => "binlog relay: broker down, binlog grows",
            Scenario::All => "all in sequence",
            Scenario::ClusterMasterKill => "cluster: Redis master kill -9",
            Scenario::ClusterBrokerKill => "cluster: one of two brokers kill -9",
            Scenario::ClusterApiKill => "cluster: one of two APIs kill -9",
            Scenario::ClusterWorkerKill => "cluster: one of two workers kill -9",
            Scenario::ClusterRollingDeploy => "cluster: rolling deploy",
            Scenario::ClusterRollingUpgrade => "cluster: rolling deploy of another build",
        }
    }

    /// Whether the scenario runs on the cluster shape: a Redis Cluster, two
    /// brokers, two APIs behind HAProxy and two workers.
    pub fn on_cluster(self) -> bool {
        matches!(
            self,
            Scenario::ClusterMasterKill
                | Scenario::ClusterBrokerKill
                | Scenario::ClusterApiKill
                | Scenario::ClusterWorkerKill
                | Scenario::ClusterRollingDeploy
                | Scenario::ClusterRollingUpgrade
        )
    }

    /// Whether the scenario is a deploy: shoppers must see no failed
    /// request at all (only 202s and 409s), not merely lose nothing.
    pub fn is_deploy(self) -> bool {
        matches!(self, Scenario::ClusterRollingDeploy | Scenario::ClusterRollingUpgrade)
    }

    /// Whether the scenario runs the binlog outbox relay, with follow events
    /// streaming beside the sale.
    pub fn on_binlog(self) -> bool {
        matches!(self, Scenario::RelayKill | Scenario::RelayDatabaseRestart | Scenario::RelayBrokerDown)
    }

    /// The single faults this scenario injects, in order.
    fn faults(self) -> Vec<Scenario> {
        match self {
            // Sale-path faults first, while stock is left; drain-path faults after.
            Scenario::All => vec![
                Scenario::BrokerKill,
                Scenario::ApiKill,
                Scenario::RedisRestart,
                Scenario::WorkerKill,
                Scenario::NamesrvDown,
                Scenario::DatabaseStop,
            ],
            one => vec![one],
        }
    }

    /// Whether the fault waits for stored orders (mid-drain) rather than 202s (mid-sale).
    fn waits_for_stored(self) -> bool {
        matches!(self, Scenario::WorkerKill | Scenario::DatabaseStop | Scenario::ClusterWorkerKill)
    }
}

/// What to run.
#[derive(Debug, Clone, clap::Args)]
pub struct Plan {
    /// A scenario to run (repeatable); none: every one, then all in sequence.
    #[arg(long = "scenario", value_enum)]
    pub scenarios: Vec<Scenario>,
    /// Distinct shoppers per sale.
    #[arg(long, default_value_t = 5000, value_parser = crate::positive::<usize>())]
    pub users: usize,
    /// Requests per sale (request i is made by user i mod users); a sale
    /// goes on past them until its faults are over.
    #[arg(long, default_value_t = 50_000, value_parser = crate::positive::<usize>())]
    pub requests: usize,
    /// Units for sale.
    #[arg(long, default_value_t = 1000, value_parser = crate::positive::<u32>())]
    pub stock: u32,
    /// Requests sent per second.
    #[arg(long, default_value_t = 1000, value_parser = crate::positive::<u32>())]
    pub rate: u32,
    /// Requests in flight at most.
    #[arg(long, default_value_t = 200, value_parser = crate::positive::<usize>())]
    pub concurrency: usize,
    /// How long the worker stays dead, seconds.
    #[arg(long, default_value_t = 3)]
    pub worker_down_secs: u64,
    /// How long the broker stays dead, seconds.
    #[arg(long, default_value_t = 5)]
    pub broker_down_secs: u64,
    /// How long the name server stays dead, seconds.
    #[arg(long, default_value_t = 10)]
    pub namesrv_down_secs: u64,
    /// How long MariaDB stays stopped, seconds.
    #[arg(long, default_value_t = 30)]
    pub database_down_secs: u64,
    /// How long the API stays dead, seconds.
    #[arg(long, default_value_t = 2)]
    pub api_down_secs: u64,
    /// Follow and unfollow requests sent per second beside the sale, in the
    /// `relay-` scenarios.
    #[arg(long, default_value_t = 200, value_parser = crate::positive::<u32>())]
    pub follow_rate: u32,
    /// Longest wait for the sale to be whole again after a fault, and for
    /// the drain after the stampede, seconds.
    #[arg(long, default_value_t = 180, value_parser = crate::positive::<u64>())]
    pub recover_timeout_secs: u64,
    /// Keep each lab's folder (data and logs of every process) and print where.
    #[arg(long)]
    pub keep: bool,
    /// The binaries a rolling upgrade deploys (`cityhub-api`,
    /// `cityhub-order-worker` of another build, e.g. one made with another
    /// `CITYHUB_COMMIT`); `cluster-rolling-upgrade` needs it.
    #[arg(long)]
    pub next_bin_dir: Option<PathBuf>,
}

impl Plan {
    fn down(&self, fault: Scenario) -> Duration {
        Duration::from_secs(match fault {
            Scenario::WorkerKill | Scenario::ClusterWorkerKill | Scenario::RelayKill => self.worker_down_secs,
            Scenario::BrokerKill | Scenario::ClusterBrokerKill | Scenario::RelayBrokerDown => self.broker_down_secs,
            Scenario::NamesrvDown => self.namesrv_down_secs,
            Scenario::DatabaseStop => self.database_down_secs,
            Scenario::ApiKill | Scenario::ClusterApiKill => self.api_down_secs,
            Scenario::DatabaseOutlastsTtl => 3 * OUTLASTED_TTL_SECS,
            Scenario::RedisRestart
            | Scenario::RedisStaleRestore
            | Scenario::RedisFailover
            | Scenario::RebuildRace
            | Scenario::LockWaitDuringLoss
            | Scenario::SlowBrokerDuringLoss
            | Scenario::WorkerKillAfterLoss
            | Scenario::ClusterMasterKill
            | Scenario::RelayDatabaseRestart
            | Scenario::ClusterRollingDeploy
            | Scenario::ClusterRollingUpgrade
            | Scenario::All => 0,
        })
    }

    /// The sale of a run against `api`: one bucket, the plan's size.
    fn sale(&self, api: String) -> crate::flash_sale::Plan {
        crate::flash_sale::Plan {
            api,
            users: self.users,
            requests: self.requests,
            concurrency: self.concurrency,
            stock: self.stock,
            buckets: 1,
            drain_timeout: self.recover_timeout_secs,
            user_offset: 0,
            quiet: true,
        }
    }

    /// The scenarios to run: the chosen ones, else every one.
    pub fn scenarios(&self) -> Vec<Scenario> {
        if self.scenarios.is_empty() {
            Scenario::EVERY.to_vec()
        } else {
            self.scenarios.clone()
        }
    }
}

/// How long the broker is stopped at a time in the slow-broker scenario:
/// under the 3 s send timeout, so its sends succeed, late.
const BROKER_STALL: Duration = Duration::from_millis(2_500);

/// The voucher details' TTL in the scenario that outlasts it, seconds.
const OUTLASTED_TTL_SECS: u64 = 2;

/// Seconds after a fault cleared (its part's start returned, or the
/// fault's last step did) until shoppers were served again (the first of
/// the sale's own answers after which every answer was one), until orders
/// were being stored again, and until the sale was whole (every accepted
/// order stored, Redis agreeing); `None` when not seen.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Recovery {
    pub served_s: Option<f64>,
    pub storing_s: Option<f64>,
    pub consistent_s: Option<f64>,
}

impl Recovery {
    /// Figure by figure, the slowest of `all` (`None` if any lacks it).
    fn slowest<'a>(all: impl Iterator<Item = &'a Recovery> + Clone) -> Recovery {
        let max =
            |figure: fn(&Recovery) -> Option<f64>| all.clone().map(figure).try_fold(0.0f64, |m, r| r.map(|r| m.max(r)));
        Recovery {
            served_s: max(|r| r.served_s),
            storing_s: max(|r| r.storing_s),
            consistent_s: max(|r| r.consistent_s),
        }
    }
}

/// One injected fault, in seconds since the stampede began.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaultWindow {
    pub fault: Scenario,
    pub from_s: f64,
    /// When the part was back.
    pub to_s: f64,
    /// From the fault to the first moment the sale was whole again; `None`
    /// when it was not within the recovery timeout.
    pub recovered_after_s: Option<f64>,
    /// How soon after the fault cleared the sale recovered.
    #[serde(default, flatten)]
    pub recovery: Recovery,
    /// What shoppers were answered from the fault until the sale was whole
    /// again (or the timeout).
    pub answers: BTreeMap<String, usize>,
    /// What the follow requests were answered meanwhile (`relay-` scenarios).
    #[serde(default)]
    pub follow_answers: BTreeMap<String, usize>,
}

/// The follow events of a `relay-` scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RelayRow {
    pub relayed: Relayed,
    /// Every follow answer of the run, by label.
    pub answers: BTreeMap<String, usize>,
    /// Redeliveries the consumer recognised and ignored, since the worker's
    /// last start (a relay resuming from its stored position sends again
    /// what it sent after that position).
    pub duplicates: f64,
    /// The relay's reconnects since the worker's last start (a lost stream).
    pub restarts: f64,
    /// Batches the broker did not store, since then (each sent again).
    pub publish_failures: f64,
    /// Rows the sweep published because the relay had not, since then.
    pub swept: f64,
    /// The relay had fallen back to polling at the end (a failure here).
    pub polling: bool,
}

/// One scenario's line of the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub scenario: Scenario,
    pub requests: usize,
    pub tally: Tally,
    /// The reconciler's verdict after the drain.
    pub verdict: String,
    pub faults: Vec<FaultWindow>,
    /// Every answer of the run, by label.
    pub answers: BTreeMap<String, usize>,
    /// The longest recovery of its faults, from the fault's start.
    pub recover_s: Option<f64>,
    /// The slowest of its faults' recoveries, figure by figure.
    #[serde(default, flatten)]
    pub recovery: Recovery,
    /// From the end of the stampede until the sale's state was whole.
    pub drain_s: f64,
    /// Repairs the reconcilers made during the run, by kind.
    #[serde(default)]
    pub repairs: BTreeMap<String, usize>,
    /// The follow events, in the `relay-` scenarios.
    #[serde(default)]
    pub relay: Option<RelayRow>,
    pub pass: bool,
}

/// The services and processes one scenario runs on.
struct Run<'a> {
    plan: &'a Plan,
    lab: Lab,
    platform: Platform,
    /// On the cluster shape.
    cluster: Option<cluster::Shape>,
    db: MySqlPool,
    kv: Kv,
    voucher: VoucherId,
    shoppers: Arc<Shoppers>,
    /// Ends the follow storm (`relay-` scenarios).
    storm: Option<CancellationToken>,
}

/// The lab's settings: `base` on the lab's services at its own timings,
/// limits off (the stampede comes from one address).
fn lab_settings(lab: &Lab, base: &Settings) -> Settings {
    let mut s = lab.settings(base);
    s.limits.enabled = false;
    s.log.filter = "warn,cityhub=info".into();
    s
}

/// A scratch folder on tmpfs where there is one (the broker's store and
/// MariaDB's files are written fast and thrown away).
pub fn scratch(name: &str) -> PathBuf {
    let root = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    root.join(format!("cityhub-chaos-{name}-{:08x}", rand::random::<u32>()))
}

/// Runs one scenario in a lab of its own and returns its row.
pub async fn run_scenario(base: &Settings, plan: &Plan, scenario: Scenario) -> anyhow::Result<Row> {
    let dir = scratch("sale");
    let lab = match scenario.on_binlog() {
        true => Lab::with_binlog(&dir).await,
        false => Lab::start(&dir).await,
    };
    let lab = lab.context("start the lab")?;
    let mut settings = lab_settings(&lab, base);
    if scenario.on_binlog() {
        settings.outbox.relay = RelayKind::Binlog;
        // The count correction would repair a count an event moved twice
        // before the run could see it.
        settings.social.count_check_secs = Duration::from_secs(86_400);
    }
    if scenario == Scenario::DatabaseOutlastsTtl {
        settings.vouchers.cache_ttl_secs = Duration::from_secs(OUTLASTED_TTL_SECS);
    }
    let logs = dir.join("logs");
    let (mut platform, cluster) = match scenario.on_cluster() {
        true => {
            let (platform, shape) = cluster::start_shape(&lab, settings.clone(), &logs, REBALANCE).await?;
            (platform, Some(shape))
        }
        false => (Platform::start(settings.clone(), &logs).await?, None),
    };
    if scenario == Scenario::WorkerKillAfterLoss {
        platform.start_second_worker().await?;
        // Until the group rebalances the first worker holds every queue.
        platform.wait_second_worker_holds_queues(REBALANCE).await?;
    }
    let settings = platform.settings.clone();
    let services = cityhub_core::Services::connect(&settings).await?;
    let (db, kv) = (services.db.clone(), services.kv.clone());
    let sale = plan.sale(cluster.as_ref().map_or_else(|| platform.base(), |c| c.parts.base()));
    let voucher = crate::flash_sale::create_voucher(&settings, &sale).await?;
    let auth = services.auth.clone();
    let users = crate::users::create(&auth, 0, plan.users).await?;
    let shoppers = Shoppers::new(users, auth);
    let mut run = Run { plan, lab, platform, cluster, db, kv, voucher, shoppers, storm: None };
    let result = run.sale(scenario).await;
    if result.is_err() {
        eprintln!("{}", run.logs());
    }
    let _ = run.platform.stop().await;
    if plan.keep {
        run.lab.keep();
        println!("    lab kept in {}", dir.display());
    }
    result
}

impl Run<'_> {
    async fn sale(&mut self, scenario: Scenario) -> anyhow::Result<Row> {
        // Shoppers come through the balancer on the cluster shape.
        let front = self.cluster.as_ref().map_or_else(|| self.platform.base(), |c| c.parts.base());
        let url = format!("{front}/vouchers/{}/seckill", self.voucher);
        let pace = Pace { requests: self.plan.requests, rate: self.plan.rate, concurrency: self.plan.concurrency };
        let storm = match scenario.on_binlog() {
            true => Some(self.start_storm(&front).await?),
            false => None,
        };
        let stampede = tokio::spawn(Arc::clone(&self.shoppers).run(url, pace));
        let faults = self.inject_all(scenario).await;
        // Every shopper gets one more try after the last recovery.
        self.shoppers.release_hold(self.plan.users);
        let faults = faults?;
        stampede.await??;
        if let (Some(stop), Some(storm)) = (self.storm.take(), storm) {
            stop.cancel();
            storm.await??;
        }
        let ended = Instant::now();
        let settled = self.wait_whole(None, Duration::from_secs(self.plan.recover_timeout_secs)).await.is_some();
        let drain_s = ended.elapsed().as_secs_f64();
        let verdict = self.reconciler_verdict().await?;
        let records = self.shoppers.records();
        let tally = Tally::of(&accepted(&records), &unanswered(&records), &self.state().await?);
        let recover_s = faults.iter().map(|f| f.recovered_after_s).try_fold(0.0f64, |m, r| r.map(|r| m.max(r)));
        let recovery = Recovery::slowest(faults.iter().map(|f| &f.recovery));
        let relay = match scenario.on_binlog() {
            true => Some(self.relay_row().await?),
            false => None,
        };
        let relay_clean = relay.as_ref().is_none_or(|r| r.relayed.clean() && !r.polling);
        // A deploy must not be seen: every answer during it is the sale's own.
        let unseen = !scenario.is_deploy()
            || faults.iter().all(|f| f.answers.keys().all(|label| label == "202" || label.starts_with("409")));
        let pass = tally.clean() && settled && verdict == "consistent" && recover_s.is_some() && relay_clean && unseen;
        Ok(Row {
            scenario,
            requests: records.len(),
            tally,
            verdict,
            faults,
            answers: shoppers::count(&records),
            recover_s,
            recovery,
            drain_s,
            repairs: self.platform.reconciler_repairs(),
            relay,
            pass,
        })
    }

    /// Starts the follow storm and waits until the relay has carried
    /// [`STREAMING`] of its events to the consumer, so the fault finds the
    /// relay mid-stream.
    async fn start_storm(&mut self, front: &str) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<()>>> {
        let stop = CancellationToken::new();
        let storm = tokio::spawn(Arc::clone(&self.shoppers).follow_storm(
            front.to_owned(),
            self.plan.follow_rate,
            stop.clone(),
        ));
        self.storm = Some(stop);
        let started = Instant::now();
        loop {
            let applied = relayed::applied(&self.db).await?;
            if applied >= STREAMING {
                return Ok(storm);
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(120),
                "the relay carried {applied} follow events in 120 s, not {STREAMING}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The follow events' tally and what the worker's relay and consumer counted.
    async fn relay_row(&self) -> anyhow::Result<RelayRow> {
        use cityhub_core::metrics as core_m;
        use cityhub_platform::metrics as m;
        let topic = &self.platform.settings.social.follow_topic;
        let duplicates = self.platform.worker_metric(core_m::FOLLOW_EVENTS, &[r#"result="duplicate""#]).await?;
        Ok(RelayRow {
            relayed: Relayed::load(&self.db, &self.kv, topic).await?,
            answers: shoppers::count(&self.shoppers.follow_records()),
            duplicates,
            restarts: self.platform.worker_metric(m::OUTBOX_BINLOG_RESTARTS, &[]).await?,
            publish_failures: self.platform.worker_metric(m::OUTBOX_FAILURES, &[&format!("topic=\"{topic}\"")]).await?,
            swept: self.platform.worker_metric(m::OUTBOX_SWEPT, &[]).await?,
            polling: self.platform.worker_metric(m::OUTBOX_RELAY_POLLING, &[]).await? > 0.0,
        })
    }

    async fn inject_all(&mut self, scenario: Scenario) -> anyhow::Result<Vec<FaultWindow>> {
        let faults = scenario.faults();
        let stock = self.plan.stock as usize;
        let mut windows = Vec::new();
        for (k, fault) in faults.iter().copied().enumerate() {
            let threshold = match fault {
                // As early as possible: so that the sale outlasts the TTL
                // within the outage, and so that orders still flow to the
                // worker once the stock row is locked.
                Scenario::DatabaseOutlastsTtl | Scenario::LockWaitDuringLoss => 1,
                // The APIs restart while units are left.
                Scenario::ClusterRollingDeploy | Scenario::ClusterRollingUpgrade => 1,
                _ if faults.len() == 1 => stock / 3,
                _ => (k + 1) * stock / (faults.len() + 2),
            };
            self.wait_trigger(fault, threshold.max(1)).await?;
            windows.push(self.inject(fault).await?);
        }
        Ok(windows)
    }

    /// Waits until `threshold` 202s (or stored orders) or until the sale
    /// sells out, whichever comes first.
    async fn wait_trigger(&self, fault: Scenario, threshold: usize) -> anyhow::Result<()> {
        let sold_out_before = self.shoppers.sold_out();
        loop {
            let reached = if fault.waits_for_stored() {
                crate::flash_sale::order_count(&self.db, self.voucher).await.unwrap_or(0) as usize >= threshold
            } else {
                self.shoppers.accepted() >= threshold
            };
            if reached || self.shoppers.sold_out() > sold_out_before {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Injects `fault`, heals it, and waits for the sale to be whole again.
    async fn inject(&mut self, fault: Scenario) -> anyhow::Result<FaultWindow> {
        let from = self.shoppers.started.elapsed();
        let fault_at = Instant::now();
        let down = self.plan.down(fault);
        match fault {
            // On the cluster shape the platform's API and worker are the first of two.
            Scenario::WorkerKill | Scenario::ClusterWorkerKill | Scenario::RelayKill => {
                self.platform.kill_worker().await?;
                tokio::time::sleep(down).await;
                self.platform.start_worker().await?;
            }
            Scenario::ApiKill | Scenario::ClusterApiKill => {
                self.platform.kill_api().await?;
                tokio::time::sleep(down).await;
                self.platform.start_api().await?;
            }
            Scenario::BrokerKill | Scenario::NamesrvDown | Scenario::RedisRestart | Scenario::RelayBrokerDown => {
                let part = match fault {
                    Scenario::BrokerKill | Scenario::RelayBrokerDown => Part::Broker,
                    Scenario::NamesrvDown => Part::NameServer,
                    _ => Part::Redis,
                };
                self.lab.kill(part).await?;
                tokio::time::sleep(down).await;
                self.lab.start_part(part).await?;
            }
            Scenario::RelayDatabaseRestart => {
                self.lab.kill(Part::Database).await?;
                self.lab.start_part(Part::Database).await?;
            }
            Scenario::DatabaseStop => {
                self.lab.stop(Part::Database).await?;
                tokio::time::sleep(down).await;
                self.lab.start_part(Part::Database).await?;
            }
            Scenario::RedisStaleRestore => {
                self.lab.snapshot_redis().await?;
                self.wait_trigger(fault, self.shoppers.accepted() + self.plan.stock as usize / 6).await?;
                self.lab.kill(Part::Redis).await?;
                self.lab.start_part(Part::Redis).await?;
            }
            Scenario::RedisFailover => {
                self.lab.start_replica().await?;
                self.lab.detach_replica().await?;
                self.wait_trigger(fault, self.shoppers.accepted() + self.plan.stock as usize / 6).await?;
                self.lab.fail_over_to_replica().await?;
            }
            Scenario::RebuildRace => {
                self.lab.kill(Part::Redis).await?;
                self.lab.start_part(Part::Redis).await?;
            }
            Scenario::DatabaseOutlastsTtl => {
                self.lab.stop(Part::Database).await?;
                tokio::time::sleep(down).await;
                self.lab.start_part(Part::Database).await?;
            }
            Scenario::LockWaitDuringLoss => self.lock_wait_during_loss().await?,
            Scenario::SlowBrokerDuringLoss => {
                let stall = self.lab.stall(Part::Broker, BROKER_STALL, Duration::from_millis(200))?;
                // Orders queue up behind the slow broker before the loss, and
                // after it while the rebuild waits for them.
                tokio::time::sleep(2 * BROKER_STALL).await;
                self.lab.kill(Part::Redis).await?;
                self.lab.start_part(Part::Redis).await?;
                tokio::time::sleep(2 * BROKER_STALL).await;
                stall.end().await;
            }
            Scenario::WorkerKillAfterLoss => {
                // The kill must matter: the second worker stores orders
                // before the loss (its queues may get their first messages
                // a little after the trigger on a loaded machine).
                let started = Instant::now();
                while self.platform.second_worker_stored().await? < 1.0 {
                    anyhow::ensure!(
                        started.elapsed() < Duration::from_secs(30),
                        "the second worker stored no order within 30 s of the trigger"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                self.lab.kill(Part::Redis).await?;
                self.lab.start_part(Part::Redis).await?;
                self.platform.kill_second_worker().await?;
            }
            Scenario::ClusterMasterKill => {
                let key = cityhub_core::kv::CityKeys::seckill_voucher(&self.kv.keys, self.voucher);
                let parts = &mut self.cluster.as_mut().context("no cluster shape")?.parts;
                let master = parts.master_of(&key).await?;
                parts.kill_node(master).await?;
                parts.wait_promoted(&key, master, Duration::from_secs(60)).await?;
                parts.restart_node(master).await?;
                parts.wait_healthy(Duration::from_secs(60)).await?;
            }
            Scenario::ClusterBrokerKill => {
                let parts = &mut self.cluster.as_mut().context("no cluster shape")?.parts;
                parts.kill_broker_b().await?;
                tokio::time::sleep(down).await;
                parts.start_broker_b().await?;
            }
            Scenario::ClusterRollingDeploy => self.rolling_deploy(None).await?,
            Scenario::ClusterRollingUpgrade => {
                let next = self.plan.next_bin_dir.clone().context("a rolling upgrade needs --next-bin-dir")?;
                self.rolling_deploy(Some(next)).await?;
            }
            Scenario::All => unreachable!("All is a sequence of single faults"),
        }
        let to = self.shoppers.started.elapsed();
        let timeout = Duration::from_secs(self.plan.recover_timeout_secs);
        // A second reconciler, an admin's, running as fast as it can while
        // the worker's rebuilds too.
        let racer = (fault == Scenario::RebuildRace).then(|| {
            let (settings, base, voucher) = (self.platform.settings.clone(), self.platform.base(), self.voucher);
            tokio::spawn(async move {
                loop {
                    let _ = crate::flash_sale::reconcile_now(&settings, &base, voucher).await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        });
        let cleared = Instant::now();
        let recovered = self.wait_whole(Some(to), timeout).await;
        if let Some(racer) = racer {
            racer.abort();
        }
        let until = self.shoppers.started.elapsed();
        let within = |r: &&Record| r.at >= from && r.at <= until;
        let records = self.shoppers.records();
        let after_clear = |at: Instant| at.duration_since(cleared).as_secs_f64();
        Ok(FaultWindow {
            fault,
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
            recovered_after_s: recovered.as_ref().map(|r| r.whole.duration_since(fault_at).as_secs_f64()),
            recovery: Recovery {
                served_s: served_after(&records, to, until),
                storing_s: recovered.as_ref().and_then(|r| r.storing.map(after_clear)),
                consistent_s: recovered.as_ref().map(|r| after_clear(r.whole)),
            },
            answers: shoppers::count(records.iter().filter(within)),
            follow_answers: shoppers::count(self.shoppers.follow_records().iter().filter(within)),
        })
    }

    /// Locks the voucher's stock row, waits until a worker's batch waits on
    /// it, restarts Redis empty, and keeps the lock until that batch's
    /// lock-wait timeout fired (so it fails with it and is tried again after
    /// the restart). Fails when no batch waited on the row, or no worker
    /// logged the timeout: the fault did not happen.
    async fn lock_wait_during_loss(&mut self) -> anyhow::Result<()> {
        // The order batch's own retry line, not any other job's.
        const TIMEOUT: &[&str] = &["error storing orders; retrying", "1205 (HY000): Lock wait timeout"];
        let before = self.platform.worker_log_count(TIMEOUT);
        let (lock_wait_secs,): (i64,) =
            sqlx::query_as("SELECT CAST(@@innodb_lock_wait_timeout AS SIGNED)").fetch_one(&self.db).await?;
        let mut lock = self.db.begin().await?;
        sqlx::query("SELECT stock FROM seckill_vouchers WHERE voucher_id = ? FOR UPDATE")
            .bind(self.voucher)
            .execute(&mut *lock)
            .await?;
        // Orders keep coming (the trigger is the first 202): the worker's
        // next batch stops at the stock row. A loaded machine may take a
        // while to get one there: look for it rather than guess.
        let started = Instant::now();
        loop {
            let (waiting,): (i64,) =
                sqlx::query_as("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")
                    .fetch_one(&self.db)
                    .await?;
            if waiting > 0 {
                break;
            }
            anyhow::ensure!(started.elapsed() < Duration::from_secs(30), "no worker's batch waited on the stock row");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.lab.kill(Part::Redis).await?;
        self.lab.start_part(Part::Redis).await?;
        // Held until the waiting batch's timeout fired (it began waiting
        // before the restart, so within the timeout), with a margin.
        let deadline = Instant::now() + Duration::from_secs(lock_wait_secs.max(0) as u64 + 10);
        while self.platform.worker_log_count(TIMEOUT) == before && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        lock.rollback().await?;
        let timeouts = self.platform.worker_log_count(TIMEOUT) - before;
        anyhow::ensure!(timeouts > 0, "no worker's lock wait timed out within {lock_wait_secs} s");
        Ok(())
    }

    /// Polls until the sale's state is whole; false after `timeout`. While
    /// selling (`healed_at`: when the fault was healed), orders younger than
    /// [`IN_FLIGHT_MS`] are excused (see [`Tally::while_selling`]), and the
    /// shoppers must be served again: the last [`SERVED_AGAIN`] answers
    /// since the heal are 202s or 409s. After the stampede nothing is excused.
    /// With the follow storm on, every follow event committed before the
    /// same cut must have been applied too.
    ///
    /// After a heal it also notes when orders were being stored again: the
    /// first poll that finds more orders in MySQL than at the heal, or as
    /// many as shoppers were accepted (nothing held up).
    async fn wait_whole(&self, healed_at: Option<Duration>, timeout: Duration) -> Option<Recovered> {
        let started = Instant::now();
        let stored_at_heal = crate::flash_sale::order_count(&self.db, self.voucher).await.ok();
        let mut storing = None;
        while started.elapsed() < timeout {
            if healed_at.is_some() && storing.is_none() {
                let accepted = self.shoppers.accepted() as i64;
                if let Ok(stored) = crate::flash_sale::order_count(&self.db, self.voucher).await {
                    if stored >= accepted || stored_at_heal.is_some_and(|at_heal| stored > at_heal) {
                        storing = Some(Instant::now());
                    }
                }
            }
            let cut = if healed_at.is_some() { now_ms().saturating_sub(IN_FLIGHT_MS) } else { u64::MAX };
            let records = self.shoppers.records();
            let served = healed_at.is_none_or(|healed| served_again(&records, healed));
            if served && self.follows_applied(healed_at.is_some()).await {
                if let Ok(state) = self.state().await {
                    if Tally::while_selling(&accepted(&records), &unanswered(&records), &state, cut).clean() {
                        let whole = Instant::now();
                        return Some(Recovered { storing: storing.or(Some(whole)), whole });
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        None
    }

    /// Whether every follow event is applied (while selling: every one older
    /// than [`IN_FLIGHT_MS`]); true when no follow storm runs.
    async fn follows_applied(&self, selling: bool) -> bool {
        let topic = &self.platform.settings.social.follow_topic;
        let excused_secs = if selling { IN_FLIGHT_MS.div_ceil(1000) as u32 } else { 0 };
        let storm = self.platform.settings.outbox.relay == RelayKind::Binlog;
        !storm || relayed::unapplied_older_than(&self.db, topic, excused_secs).await.is_ok_and(|n| n == 0)
    }

    async fn state(&self) -> anyhow::Result<invariants::SaleState> {
        invariants::load(&self.db, &self.kv, self.voucher).await
    }

    /// `POST /admin/reconcile/{id}`: the reconciler's verdict, run now.
    async fn reconciler_verdict(&self) -> anyhow::Result<String> {
        let (_, report) =
            crate::flash_sale::reconcile_now(&self.platform.settings, &self.platform.base(), self.voucher).await?;
        Ok(report["verdict"].as_str().unwrap_or("unknown").to_owned())
    }

    /// The ends of every log, for a run that failed.
    fn logs(&self) -> String {
        let mut out = String::new();
        for p in [&self.platform.api, &self.platform.worker, &self.platform.second_worker].into_iter().flatten() {
            out.push_str(&format!("--- {}\n{}\n", p.name, p.log_tail(20)));
        }
        for part in [Part::Database, Part::Redis, Part::NameServer, Part::Broker] {
            out.push_str(&format!("--- {part:?}\n{}\n", self.lab.log_tail(part, 10)));
        }
        if let Some(cluster) = &self.cluster {
            out.push_str(&cluster.parts.logs());
        }
        out
    }
}

/// The longest wait for a second worker's first queue: the consumer group
/// rebalances every 20 s, and on a loaded machine a period was seen to pass
/// without the new worker taking one.
const REBALANCE: Duration = Duration::from_secs(120);

/// Follow events the relay carries before a `relay-` scenario's fault.
const STREAMING: i64 = 100;

/// A 202 younger than this may still be on its way to MySQL while the sale runs.
const IN_FLIGHT_MS: u64 = 1000;

/// When a sale was whole again after a heal, and when its orders were being
/// stored again (at the latest when it was whole).
struct Recovered {
    storing: Option<Instant>,
    whole: Instant,
}

/// Seconds from `cleared` until shoppers were served again: the answer of
/// the first of the sale's own answers (202 or 409) after which every
/// answer until `until` was the sale's own. `None` with no such answer.
fn served_after(records: &[Record], cleared: Duration, until: Duration) -> Option<f64> {
    let answered = |r: &Record| r.at + r.took;
    let mut after: Vec<&Record> = records.iter().filter(|r| answered(r) >= cleared && answered(r) <= until).collect();
    after.sort_by_key(|r| answered(r));
    let own = |r: &Record| matches!(r.answer, Answer::Accepted(_) | Answer::Refused(409, _));
    let first = after.iter().rposition(|r| !own(r)).map_or(0, |last_other| last_other + 1);
    after.get(first).map(|r| answered(r).saturating_sub(cleared).as_secs_f64())
}

/// How many answers in a row, after a heal, must be the sale's own (202 or 409).
const SERVED_AGAIN: usize = 20;

/// Whether the last [`SERVED_AGAIN`] answers since `healed` are the sale's own.
fn served_again(records: &[Record], healed: Duration) -> bool {
    let mut since: Vec<&Record> = records.iter().filter(|r| r.at > healed).collect();
    since.sort_by_key(|r| r.at);
    since.len() >= SERVED_AGAIN
        && since[since.len() - SERVED_AGAIN..]
            .iter()
            .all(|r| matches!(r.answer, Answer::Accepted(_) | Answer::Refused(409, _)))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn accepted(records: &[Record]) -> Vec<Accepted> {
    records
        .iter()
        .filter_map(|r| match r.answer {
            Answer::Accepted(order_id) => Some(Accepted { order_id, user_id: r.user_id }),
            _ => None,
        })
        .collect()
}

/// Per user, the requests that reached the API and got no answer.
fn unanswered(records: &[Record]) -> HashMap<UserId, usize> {
    let mut per_user = HashMap::new();
    for r in records.iter().filter(|r| r.answer == Answer::NoAnswer) {
        *per_user.entry(r.user_id).or_insert(0) += 1;
    }
    per_user
}

/// Runs the plan's scenarios one after another (each in its own lab),
/// printing each row as it finishes.
pub async fn run(base: &Settings, plan: &Plan) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    report::print_header();
    for scenario in plan.scenarios() {
        let row = run_scenario(base, plan, scenario).await.with_context(|| format!("scenario {}", scenario.name()))?;
        report::print_row(&row);
        rows.push(row);
    }
    Ok(rows)
}
