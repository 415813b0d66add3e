//! The two outbox relays side by side, in the same round on the same server
//! (the MariaDB that writes a row binlog, `scripts/stack binlog`): the time
//! from an event's commit to its arrival at a consumer (p50, p99) while
//! events commit at a steady rate, and the relay's own load on MySQL in
//! statements per second, idle and under that load. Each relay runs on a
//! database of its own under a MySQL user of its own, whose statements the
//! server counts (`userstat`); the events are written as root.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::config::{Secret, Settings};
use cityhub_platform::config::RelayKind;
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Consumer, Delivery};
use cityhub_platform::mq::ClientRuntime;
use cityhub_platform::outbox::binlog::BinlogRelay;
use cityhub_platform::outbox::relay::Relay;
use cityhub_platform::outbox::{self, Envelope};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

/// One relay's figures.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct RelayFigures {
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// The relay's statements per second with nothing to publish.
    pub idle_qps: f64,
    /// The same while events commit at [`Load::rate`].
    pub busy_qps: f64,
}

/// Both relays, measured one after the other.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Relays {
    pub poll: RelayFigures,
    pub binlog: RelayFigures,
}

/// How each relay is measured.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Events committed per second (in transactions of ten, every 10 ms).
    pub rate: u32,
    /// How long the idle and the loaded windows each last.
    pub seconds: u64,
}

/// Measures both relays on the server at `server` (`mysql://root@host:port`).
pub async fn measure(base: &Settings, mq: &Arc<ClientRuntime>, server: &str, load: Load) -> anyhow::Result<Relays> {
    let root = MySqlPool::connect(&format!("{server}/mysql"))
        .await
        .with_context(|| format!("reach the MariaDB that writes a binlog at {server} (scripts/stack binlog)"))?;
    sqlx::query("SET GLOBAL userstat = 1").execute(&root).await?;
    let poll = one(base, mq, server, &root, RelayKind::Poll, load).await?;
    let binlog = one(base, mq, server, &root, RelayKind::Binlog, load).await?;
    Ok(Relays { poll, binlog })
}

/// Arrival times by event id.
#[derive(Default)]
struct Arrivals(Mutex<HashMap<u64, Instant>>);

struct Record(Arc<Arrivals>);

impl BatchHandler for Record {
    async fn handle(&self, batch: Vec<Delivery>) -> Ack {
        let now = Instant::now();
        let mut seen = self.0 .0.lock().unwrap_or_else(|p| p.into_inner());
        for d in batch {
            if let Ok(event) = serde_json::from_slice::<Envelope<serde_json::Value>>(&d.body) {
                seen.entry(event.event_id).or_insert(now);
            }
        }
        Ack::Done
    }
}

async fn one(
    base: &Settings,
    mq: &Arc<ClientRuntime>,
    server: &str,
    root: &MySqlPool,
    kind: RelayKind,
    load: Load,
) -> anyhow::Result<RelayFigures> {
    let id = format!("{:08x}", rand::random::<u32>());
    let name = if kind == RelayKind::Poll { "poll" } else { "binlog" };
    let (db_name, user) = (format!("cityhub_bench_relay_{id}"), format!("relay_{name}_{id}"));
    let mut settings = base.clone();
    settings.database.url = Secret::new(format!("{server}/{db_name}"));
    settings.database.migrate = true;
    settings.outbox.relay = kind;
    settings.outbox.binlog_server_id = 20_000 + rand::random::<u32>() % 1_000_000;
    let topic = format!("cityhub_bench_relay_{name}_{id}");
    let db = cityhub_platform::db::connect(&settings.database).await?;
    for grant in [
        format!("CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'relay'"),
        format!("GRANT ALL ON `{db_name}`.* TO '{user}'@'127.0.0.1'"),
        format!("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '{user}'@'127.0.0.1'"),
    ] {
        sqlx::query(&grant).execute(root).await?;
    }
    let host = server.rsplit('@').next().unwrap_or("127.0.0.1:3307");
    let relay_url = format!("mysql://{user}:relay@{host}/{db_name}");
    let mut relay_settings = settings.database.clone();
    relay_settings.url = Secret::new(relay_url.clone());
    relay_settings.migrate = false;
    let relay_db = cityhub_platform::db::connect(&relay_settings).await?;

    let arrivals = Arc::new(Arrivals::default());
    let group = format!("{topic}_reader");
    let consumer = Consumer::start(mq, &settings.mq, &group, &topic, Arc::new(Record(Arc::clone(&arrivals)))).await?;
    let producer =
        cityhub_platform::mq::start_producer(mq, &settings.mq, &format!("{topic}_relay")).await.context("producer")?;
    let relay = Relay::new(relay_db.clone(), producer, settings.outbox.clone(), &settings.mq);
    let stop = CancellationToken::new();
    let task = match kind {
        RelayKind::Poll => tokio::spawn({
            let stop = stop.clone();
            async move { relay.run(stop).await }
        }),
        RelayKind::Binlog => {
            let binlog = BinlogRelay::new(relay, relay_db.clone(), &relay_url, settings.outbox.clone())?;
            tokio::spawn({
                let stop = stop.clone();
                async move { binlog.run(stop).await }
            })
        }
    };
    let statements = || async {
        let n: Option<i64> = sqlx::query_scalar(
            "SELECT CAST(SELECT_COMMANDS + UPDATE_COMMANDS + OTHER_COMMANDS AS SIGNED) \
             FROM information_schema.USER_STATISTICS WHERE USER = ?",
        )
        .bind(&user)
        .fetch_optional(root)
        .await?;
        anyhow::Ok(n.unwrap_or(0) as f64)
    };

    // Warm up: the topic exists, the consumer holds its queues, the relay streams.
    let mut committed: HashMap<u64, Instant> = HashMap::new();
    for _ in 0..10 {
        let (id, at) = commit(&db, &topic, 1).await?;
        committed.insert(id[0], at);
    }
    wait_for(&arrivals, &committed, Duration::from_secs(120)).await?;
    committed.clear();
    arrivals.0.lock().unwrap_or_else(|p| p.into_inner()).clear();

    let window = Duration::from_secs(load.seconds);
    let before = statements().await?;
    tokio::time::sleep(window).await;
    let idle_qps = (statements().await? - before) / window.as_secs_f64();

    let per_tick = (load.rate / 100).max(1) as usize;
    let before = statements().await?;
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    while started.elapsed() < window {
        tick.tick().await;
        let (ids, at) = commit(&db, &topic, per_tick).await?;
        committed.extend(ids.into_iter().map(|id| (id, at)));
    }
    let busy_qps = (statements().await? - before) / started.elapsed().as_secs_f64();
    wait_for(&arrivals, &committed, Duration::from_secs(120)).await?;

    let seen = arrivals.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut ms: Vec<f64> =
        committed.iter().map(|(id, at)| seen[id].saturating_duration_since(*at).as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| ms[((ms.len() as f64 * q) as usize).min(ms.len() - 1)];
    let figures = RelayFigures { p50_ms: pick(0.50), p99_ms: pick(0.99), idle_qps, busy_qps };

    stop.cancel();
    task.await??;
    consumer.shutdown().await;
    relay_db.close().await;
    db.close().await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS `{db_name}`")).execute(root).await?;
    sqlx::query(&format!("DROP USER IF EXISTS '{user}'@'127.0.0.1'")).execute(root).await?;
    Ok(figures)
}

/// Commits `n` events in one transaction; their ids and the commit's time.
async fn commit(db: &MySqlPool, topic: &str, n: usize) -> anyhow::Result<(Vec<u64>, Instant)> {
    let mut tx = db.begin().await?;
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let key = format!("k{}", rand::random::<u8>() % 50);
        ids.push(outbox::enqueue(&mut tx, topic, &key, &serde_json::json!({ "bench": true })).await?);
    }
    tx.commit().await?;
    Ok((ids, Instant::now()))
}

async fn wait_for(arrivals: &Arrivals, committed: &HashMap<u64, Instant>, within: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + within;
    loop {
        let missing = {
            let seen = arrivals.0.lock().unwrap_or_else(|p| p.into_inner());
            committed.keys().filter(|id| !seen.contains_key(id)).count()
        };
        if missing == 0 {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "{missing} of {} events never arrived", committed.len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
