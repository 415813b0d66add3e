//! `cityhub bench`: the benchmark suite. Starts its own API and worker (the
//! binaries beside this one) on a private database, key prefix and topic,
//! runs every figure next to its reference in the same round, several
//! rounds, and writes `BENCHMARKS.md` and `BENCHMARKS.json`.
//!
//! - P1 flash-sale path: seckill req/s under `wrk` while the stock sells out
//!   early (most requests are rejections) over `redis-benchmark` EVALSHA/s of
//!   the same script, same connection count, on the sold-out voucher.
//!   The same stampede on a second API instance whose rate limits are on
//!   (`limits`, as configured, forced on) over P1: the limiter's cost. The
//!   first instance runs without limits, so P2 and P4 measure the order
//!   path, not a per-IP limit on one load generator.
//! - P2 accepted path: orders/s from the first HTTP request to the last order
//!   in MySQL when every request wins (and the worker's drain time), over
//!   what its stages allow in a row, each measured alone in the round
//!   (`stages`).
//! - P3 shop read: `GET /shops/{id}` of one hot shop (an L1 hit) under
//!   `wrk` over `GET /healthz` of the same API, same load and connections.
//!   The same for the voucher page, `GET /vouchers/{id}` of one hot voucher
//!   (its details an L1 hit, its units left one Redis read).
//! - P4 worker insert rate: a backlog of orders drained by the worker (from
//!   its first stored order to its last) over a raw multi-row INSERT of the
//!   same rows into a copy of the table.
//! - P6 recommendations for a user with `--p6-followings` (1,000) followings (`social`):
//!   median time of the route when it computes (cold) and when it is
//!   cached (warm), each over `GET /users/me` with the same token.
//! - P5 API peak RSS over the whole run, and its RSS at the start and end of
//!   the long P1 stampede (is it flat?).
//!
//! This module runs the rounds; `tools` drives wrk and redis-benchmark,
//! `stages` measures the references, `report` writes the results;
//! `cluster` runs P1 and P2 on the scale-out shape (`--topology cluster`).

pub mod cluster;
mod lite_pull;
mod relay;
mod report;
mod social;
mod stages;
mod tools;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::{Secret, Settings};
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::{OrderId, UserId, VoucherId};
use cityhub_testkit::invariants::{self, Accepted, Scope};
use serde::Serialize;
use sqlx::MySqlPool;

use crate::flash_sale::{self, Plan};
use crate::platform::{rss_mb, Platform};
use stages::{ConsumerModes, Stages};

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Rounds; each figure is reported as the median of its rounds, with its range.
    #[arg(long, default_value_t = 3, value_parser = crate::positive::<usize>())]
    pub rounds: usize,
    /// Seconds each P1 stampede (wrk) lasts.
    #[arg(long, default_value_t = 10, value_parser = crate::positive::<u64>())]
    pub p1_seconds: u64,
    /// Seconds each P3 run (the shop read, then the trivial route) lasts.
    #[arg(long, default_value_t = 5, value_parser = crate::positive::<u64>())]
    pub p3_seconds: u64,
    /// Distinct users in P1.
    #[arg(long, default_value_t = 5_000, value_parser = crate::positive::<usize>())]
    pub p1_users: usize,
    /// Connections (requests in flight) for P1 and for redis-benchmark.
    #[arg(long, default_value_t = 50, value_parser = crate::positive::<usize>())]
    pub connections: usize,
    /// Orders (= users = stock) in each P2 and P4 run.
    #[arg(long, default_value_t = 20_000, value_parser = crate::positive::<usize>())]
    pub orders: usize,
    /// Requests in flight for P2 and P4.
    #[arg(long, default_value_t = 100, value_parser = crate::positive::<usize>())]
    pub accepted_concurrency: usize,
    /// Followings (all mutual) of the P6 user.
    #[arg(long, default_value_t = 1_000, value_parser = crate::positive::<usize>())]
    pub p6_followings: usize,
    /// EVALSHA calls per redis-benchmark run.
    #[arg(long, default_value_t = 200_000, value_parser = crate::positive::<usize>())]
    pub evalsha_calls: usize,
    /// The MariaDB that writes a row binlog (`scripts/stack binlog`), on
    /// which the two outbox relays are measured side by side.
    #[arg(long, default_value = "mysql://root@127.0.0.1:3307")]
    pub binlog_mysql: String,
    /// Outbox events committed per second while the relays are measured.
    #[arg(long, default_value_t = 1_000, value_parser = crate::positive::<u32>())]
    pub relay_rate: u32,
    /// Seconds each relay is measured idle, then under that load.
    #[arg(long, default_value_t = 10, value_parser = crate::positive::<u64>())]
    pub relay_seconds: u64,
    /// The report to write.
    #[arg(long, default_value = "BENCHMARKS.md")]
    pub out: PathBuf,
    /// The figures as JSON, beside the report.
    #[arg(long, default_value = "BENCHMARKS.json")]
    pub json: PathBuf,
    /// Where the API and worker logs go.
    #[arg(long, default_value = ".stack/bench")]
    pub logs: PathBuf,
    /// `single`: every figure on one API, one worker and one Redis (the
    /// table); `cluster`: P1 and P2 on the scale-out shape (its section).
    #[arg(long, value_enum, default_value_t = Topology::Single)]
    pub topology: Topology,
}

/// What `cityhub bench` runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Topology {
    Single,
    Cluster,
}

#[derive(Debug, Clone, Serialize)]
pub struct Round {
    p1_seckill_rps: f64,
    p1_evalsha_rps: f64,
    p1_ratio: f64,
    p1_p99_ms: f64,
    p1_limited_rps: f64,
    p1_limited_ratio: f64,
    p2_orders_per_s: f64,
    p2_drain_s: f64,
    p2_p99_ms: f64,
    p2_stages: Stages,
    p2_limit: f64,
    p2_ratio: f64,
    /// P2's load generator against `GET /healthz`: the HTTP stage.
    p2_http_rps: f64,
    /// The composed limit with the HTTP stage in the row, and P2 over it.
    p2_limit_with_http: f64,
    p2_ratio_with_http: f64,
    p3_shop_rps: f64,
    p3_trivial_rps: f64,
    p3_ratio: f64,
    p3_voucher_rps: f64,
    p3_voucher_ratio: f64,
    /// The shop read from many client addresses, on the instance with
    /// limits on and on the one without, and the first over the second.
    p3_limited_rps: f64,
    p3_unlimited_rps: f64,
    p3_limited_ratio: f64,
    p4_worker_rows_per_s: f64,
    p4_raw_rows_per_s: f64,
    p4_ratio: f64,
    /// The worker against an empty consumer draining the same number of
    /// order-sized messages in the same round: the consumer's share of P4.
    p4b_ratio: f64,
    /// P4 again, the worker consuming batches four times as large.
    p4_large_rows_per_s: f64,
    p4_large_ratio: f64,
    /// Where P4's transactions (and the large batches' ones) spent their time.
    p4_tx: stages::TxSplit,
    p4_large_tx: stages::TxSplit,
    consumer_modes: ConsumerModes,
    /// The poll and the binlog outbox relay, side by side.
    relays: relay::Relays,
    p5_rss_start_mb: f64,
    p5_rss_end_mb: f64,
    /// What the API's allocator holds (its live heap) at the same moments.
    p5_heap_start_mb: f64,
    p5_heap_end_mb: f64,
    /// The API's RSS and threads at the end of the round, after its last stage.
    p5_rss_round_end_mb: f64,
    p5_threads_round_end: f64,
    p6_recs_cold_ms: f64,
    p6_recs_warm_ms: f64,
    p6_reference_ms: f64,
    p6_cold_ratio: f64,
    p6_warm_ratio: f64,
    invariants_pass: bool,
}

#[derive(Debug, Serialize)]
pub struct Output {
    machine: String,
    settings: serde_json::Value,
    rounds: Vec<Round>,
    median: Round,
    p5_peak_rss_mb: f64,
}

pub async fn run(base: &Settings, args: &Args) -> anyhow::Result<()> {
    if args.topology == Topology::Cluster {
        return cluster::run(base, args).await;
    }
    let id = format!("{:08x}", rand::random::<u32>());
    let mut settings = base.clone();
    let url = settings.database.url.expose().to_owned();
    let server = url.rsplit_once('/').map_or(url.as_str(), |(s, _)| s).to_owned();
    settings.database.url = Secret::new(format!("{server}/cityhub_bench_{id}"));
    settings.redis.key_prefix = format!("bench{id}:");
    settings.mq.order_topic = format!("cityhub_bench_orders_{id}");
    settings.mq.producer_group = format!("cityhub_bench_api_{id}");
    settings.mq.order_consumer_group = format!("cityhub_bench_worker_{id}");
    settings.log.filter = "warn".into();
    settings.database.migrate = true;
    let mut limits = settings.limits.clone();
    limits.enabled = true;
    settings.limits.enabled = false;

    let mut platform = Platform::start(settings, &args.logs).await?;
    let limited = platform.start_second_api(limits).await?;
    let settings = platform.settings.clone();
    let services = cityhub_core::Services::connect(&settings).await?;
    let (db, kv) = (services.db.clone(), services.kv.clone());
    let api_pid = platform.api.as_ref().map(|p| p.pid()).unwrap_or(0);

    let mq = cityhub_platform::mq::runtime::MqRuntime::new("bench").context("start mq runtime")?;
    let hot = create_hot_shop(&platform.base(), &settings).await?;
    let auth = services.auth.clone();
    let social_user = social::seed(&db, &auth, 90_000_000, args.p6_followings).await?;
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        eprintln!("round {}/{}", round + 1, args.rounds);
        let offset = 10_000_000 * (round as u64 + 1);
        let apis = Apis { plain: platform.base(), limited: limited.base.clone() };
        let mut r = one_round(&mut platform, &apis, &services, &mq.client(), args, api_pid, offset, hot).await?;
        let p6 = social::measure(&platform.base(), &kv, &social_user).await?;
        (r.p6_recs_cold_ms, r.p6_recs_warm_ms, r.p6_reference_ms) = (p6.cold_ms, p6.warm_ms, p6.reference_ms);
        (r.p6_cold_ratio, r.p6_warm_ratio) = (p6.cold_ms / p6.reference_ms, p6.warm_ms / p6.reference_ms);
        // The round's last stage is over: the API's memory at the end of the round.
        r.p5_rss_round_end_mb = rss_mb(api_pid, "VmRSS").unwrap_or(0.0);
        r.p5_threads_round_end = crate::platform::proc_status(api_pid, "Threads").unwrap_or(0.0);
        rounds.push(r);
    }
    mq.shutdown().await;
    let peak = rss_mb(api_pid, "VmHWM").unwrap_or(0.0);
    if let Some(process) = limited.process {
        process.stop().await?;
    }
    platform.stop().await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS `cityhub_bench_{id}`")).execute(&db).await?;

    let output = Output {
        machine: crate::platform::machine(),
        settings: serde_json::json!({
            "rounds": args.rounds, "p1_seconds": args.p1_seconds, "p3_seconds": args.p3_seconds, "p1_load": "wrk -t2", "p1_users": args.p1_users,
            "connections": args.connections, "orders": args.orders, "accepted_concurrency": args.accepted_concurrency,
            "evalsha_calls": args.evalsha_calls, "batch_max": settings.mq.batch_max, "p6_followings": args.p6_followings,
            "p1_limited": limited.limits.seckill.to_string(),
            "batch_linger_ms": settings.mq.batch_linger_ms.as_millis() as u64, "consume_batch_max": settings.mq.consume_batch_max,
            "consume_threads": settings.mq.consume_threads, "worker_writers": settings.worker.writers,
            "relay_rate": args.relay_rate, "relay_seconds": args.relay_seconds, "outbox_poll_ms": settings.outbox.poll_ms.as_millis() as u64,
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        }),
        median: report::median(&rounds),
        rounds,
        p5_peak_rss_mb: peak,
    };
    std::fs::write(&args.json, serde_json::to_vec_pretty(&output)?)?;
    report::write_markdown(&args.out, &output)?;
    eprintln!("wrote {} and {}", args.out.display(), args.json.display());
    anyhow::ensure!(output.rounds.iter().all(|r| r.invariants_pass), "an invariant failed during the benchmarks");
    Ok(())
}

/// The P3 shop and voucher (shop id, voucher id), created through the
/// admin API and read once (so the runs measure L1 hits).
async fn create_hot_shop(api: &str, settings: &Settings) -> anyhow::Result<(u64, u64)> {
    let http = reqwest::Client::new();
    let admin = crate::admin::operator_token(settings, "bench").await?;
    let create = |path: &'static str, body: serde_json::Value| {
        let (http, admin) = (&http, &admin);
        async move {
            let r = http.post(format!("{api}{path}")).bearer_auth(admin).json(&body).send().await?;
            anyhow::ensure!(r.status().is_success(), "{path} answered {}", r.status());
            let id: u64 = r.json::<serde_json::Value>().await?["id"].as_str().context("id")?.parse()?;
            Ok(id)
        }
    };
    let shop = create(
        "/admin/shops",
        serde_json::json!({ "name": "Hot Pot Palace", "type_id": 1, "x": 120.1551, "y": 30.2741 }),
    )
    .await?;
    let now = chrono::Utc::now();
    let voucher = create(
        "/admin/vouchers",
        serde_json::json!({
            "shop_id": shop, "title": "Hot pot for two", "pay_value": 9900, "actual_value": 19900, "stock": 100,
            "begin_time": now, "end_time": now + chrono::Duration::days(1),
        }),
    )
    .await?;
    for path in [format!("/shops/{shop}"), format!("/vouchers/{voucher}")] {
        let r = http.get(format!("{api}{path}")).send().await?;
        anyhow::ensure!(r.status().is_success(), "reading {path} answered {}", r.status());
    }
    Ok((shop, voucher))
}

/// A quiet sale on `api` for a benchmark run (drains for up to 300 s).
fn sale_plan(api: &str, users: usize, requests: usize, concurrency: usize, stock: u32, user_offset: u64) -> Plan {
    Plan {
        api: api.to_owned(),
        users,
        requests,
        concurrency,
        stock,
        buckets: 1,
        drain_timeout: 300,
        user_offset,
        quiet: true,
    }
}

/// Client addresses the P3 read with limits comes from: at 20k to 60k
/// reads/s, 10 to 30 a second each, well below `limits.reads`' default of
/// 100 but past each instance's allowance of 10 (leases are in the figure).
const P3_ADDRESSES: usize = 2000;

/// The two API instances: without limits, and with them.
struct Apis {
    plain: String,
    limited: String,
}

/// One P1 stampede on `api` and its checks (see the module doc).
async fn p1(
    api: &str,
    settings: &Settings,
    db: &MySqlPool,
    kv: &Kv,
    plan: &Plan,
    users: &[cityhub_core::auth::Issued],
    args: &Args,
) -> anyhow::Result<(tools::Wrk, VoucherId, Vec<invariants::Check>)> {
    let voucher = flash_sale::create_voucher(settings, plan).await?;
    let w = tools::wrk(api, voucher, users, args).await?;
    // wrk stops with requests in flight, which the API may still accept
    // unseen: wait for what Redis sold, and check the 202s wrk saw
    // (Scope::Partial). wrk cannot tell which user a response answered, so
    // each order's user is the buyer Redis recorded for it (0 if none, which
    // fails the check).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left: i64 = redis::AsyncCommands::hget(&mut kv.conn(), kv.keys.seckill_voucher(voucher), "stock").await?;
    let sold = (i64::from(plan.stock) - left).max(0) as usize;
    flash_sale::drain(db, voucher, sold, Duration::from_secs(60), true).await?;
    let state = invariants::load(db, kv, voucher).await?;
    let buyer_of: std::collections::HashMap<OrderId, UserId> =
        state.buyers.iter().map(|(user, entry)| (entry.order(), *user)).collect();
    let accepted: Vec<Accepted> = w
        .accepted
        .iter()
        .map(|&order_id| Accepted { order_id, user_id: buyer_of.get(&order_id).copied().unwrap_or_default() })
        .collect();
    let checks = invariants::check(&accepted, &state, Scope::Partial);
    Ok((w, voucher, checks))
}

/// A backlog drained by a freshly started worker (see [`p4_backlog`]).
struct Backlog {
    rows_per_s: f64,
    tx: stages::TxSplit,
    voucher: VoucherId,
    checks: Vec<invariants::Check>,
    /// Requests that failed while the backlog was built.
    errors: usize,
    users: Vec<cityhub_core::auth::Issued>,
}

/// A backlog of `plan`'s orders built while the worker is stopped, then
/// drained by a worker started with the platform's settings.
async fn p4_backlog(
    platform: &mut Platform,
    services: &cityhub_core::Services,
    plan: &Plan,
) -> anyhow::Result<Backlog> {
    let (db, kv) = (&services.db, &services.kv);
    platform.stop_worker().await?;
    let voucher = flash_sale::create_voucher(&platform.settings, plan).await?;
    let users = crate::users::create(&services.auth, plan.user_offset, plan.users).await?;
    let s = flash_sale::stampede(plan, voucher, &users).await?;
    platform.start_worker().await?;
    let metrics_addr = &platform.settings.worker.metrics_addr;
    let rows_per_s = match stages::drain_rate(metrics_addr, s.accepted.len()).await {
        Ok(rate) => rate,
        Err(err) => {
            let log = platform.worker.as_ref().map(|w| w.log_tail(60)).unwrap_or_default();
            anyhow::bail!("{err:#}; the worker's log ends:\n{log}");
        }
    };
    let tx = stages::tx_split(metrics_addr, s.accepted.len()).await?;
    flash_sale::drain(db, voucher, s.accepted.len(), Duration::from_secs(60), true).await?;
    let checks = invariants::check(&s.accepted, &invariants::load(db, kv, voucher).await?, Scope::WholeSale);
    Ok(Backlog { rows_per_s, tx, voucher, checks, errors: s.errors, users })
}

#[allow(clippy::too_many_arguments)]
async fn one_round(
    platform: &mut Platform,
    apis: &Apis,
    services: &cityhub_core::Services,
    mq: &std::sync::Arc<cityhub_platform::mq::ClientRuntime>,
    args: &Args,
    api_pid: u32,
    offset: u64,
    (hot_shop, hot_voucher): (u64, u64),
) -> anyhow::Result<Round> {
    let settings = platform.settings.clone();
    let (db, kv, auth) = (&services.db, &services.kv, services.auth.clone());
    let api = platform.base();
    let plan = |users, requests, concurrency, stock, user_offset| {
        sale_plan(&api, users, requests, concurrency, stock, user_offset)
    };

    // P1: a stampede (wrk) that sells out early, then the script alone;
    // then the same stampede on the instance with limits.
    let p1_plan = plan(args.p1_users, 0, args.connections, 100, offset);
    let p1_users = crate::users::create(&auth, p1_plan.user_offset, p1_plan.users).await?;
    let heap = || crate::platform::heap_mb(&settings.http.metrics_addr);
    let (rss_start, heap_start) = (rss_mb(api_pid, "VmRSS").unwrap_or(0.0), heap().await.unwrap_or(0.0));
    let (w, p1_voucher, p1_checks) = p1(&apis.plain, &settings, db, kv, &p1_plan, &p1_users, args).await?;
    let (rss_end, heap_end) = (rss_mb(api_pid, "VmRSS").unwrap_or(0.0), heap().await.unwrap_or(0.0));
    let evalsha = tools::redis_benchmark(&settings, kv, p1_voucher, args).await?;
    let (wl, _, limited_checks) = p1(&apis.limited, &settings, db, kv, &p1_plan, &p1_users, args).await?;
    let p1_rps = w.rps;

    // P3: one hot shop from L1 against the API's most trivial route.
    let p3_shop = tools::wrk_get(&api, &format!("/shops/{hot_shop}"), args.p3_seconds, args).await?;
    let p3_voucher = tools::wrk_get(&api, &format!("/vouchers/{hot_voucher}"), args.p3_seconds, args).await?;
    let p3_trivial = tools::wrk_get(&api, "/healthz", args.p3_seconds, args).await?;
    // The same read with `limits.reads` on, each request from one of many
    // client addresses (each far below its limit), against limits off.
    let hot_path = format!("/shops/{hot_shop}");
    // In mirrored order (off, on, on, off), so that a load drifting over the
    // stage (the worker still storing P1's orders) weighs on both sides alike.
    let (mut p3_unlimited, mut p3_limited) = (0.0, 0.0);
    for api in [&apis.plain, &apis.limited, &apis.limited, &apis.plain] {
        let rps = tools::wrk_get_from(api, &hot_path, args.p3_seconds, args, P3_ADDRESSES).await?;
        *(if api == &apis.plain { &mut p3_unlimited } else { &mut p3_limited }) += rps / 2.0;
    }

    // P2: every request wins; HTTP to MySQL with the worker running.
    let p2 = plan(args.orders, args.orders, args.accepted_concurrency, args.orders as u32, offset + 1_000_000);
    let p2_report = flash_sale::run(&settings, &p2).await?;

    // P4: a backlog while the worker is stopped, then the worker drains it;
    // again with a worker consuming batches four times as large.
    let p4 = plan(args.orders, args.orders, args.accepted_concurrency, args.orders as u32, offset + 2_000_000);
    let p4 = p4_backlog(platform, services, &p4).await?;
    let (worker_rate, p4_checks, p4_errors) = (p4.rows_per_s, p4.checks, p4.errors);
    let raw_rate = stages::raw_insert_rate(db, p4.voucher).await?;
    let batch = settings.mq.consume_batch_max;
    platform.settings.mq.consume_batch_max = batch * 4;
    let p4l = plan(args.orders, args.orders, args.accepted_concurrency, args.orders as u32, offset + 3_000_000);
    let large = p4_backlog(platform, services, &p4l).await;
    platform.settings.mq.consume_batch_max = batch;
    platform.stop_worker().await?;
    platform.start_worker().await?;
    let large = large?;
    let (large_rate, p4l_checks, p4l_errors) = (large.rows_per_s, large.checks, large.errors);
    let tokens: Vec<String> = p4.users.iter().map(|u| u.token.clone()).collect();
    let http = stages::http_rate(&api, &tokens, args.orders, args.accepted_concurrency).await?;
    let (send, modes) = stages::send_and_drain(&settings, mq, args.orders, args.accepted_concurrency).await?;
    let load = relay::Load { rate: args.relay_rate, seconds: args.relay_seconds };
    let relays = relay::measure(&settings, mq, &args.binlog_mysql, load).await?;
    let p2_stages = Stages {
        evalsha: stages::accepted_evalsha(&settings, kv, args).await?,
        send,
        drain: modes.push,
        insert: raw_rate,
    };

    let failed: Vec<String> = [
        ("P1", &p1_checks),
        ("P1 limited", &limited_checks),
        ("P2", &p2_report.checks),
        ("P4", &p4_checks),
        ("P4 large batches", &p4l_checks),
    ]
    .iter()
    .flat_map(|(run, checks)| checks.iter().filter(|c| !c.pass).map(move |c| format!("{run} {}: {}", c.name, c.detail)))
    .chain((w.errors + wl.errors > 0).then(|| format!("P1: {} socket errors", w.errors + wl.errors)))
    .chain((p4_errors + p4l_errors + p2_report.errors > 0).then(|| "P2/P4: requests failed".to_owned()))
    .collect();
    for f in &failed {
        eprintln!("FAIL {f}");
    }
    let invariants_pass = failed.is_empty();
    Ok(Round {
        p1_seckill_rps: p1_rps,
        p1_evalsha_rps: evalsha,
        p1_ratio: p1_rps / evalsha,
        p1_p99_ms: w.p99_ms,
        p1_limited_rps: wl.rps,
        p1_limited_ratio: wl.rps / p1_rps,
        p2_orders_per_s: p2_report.orders_per_second,
        p2_drain_s: p2_report.drain_seconds,
        p2_p99_ms: p2_report.p99_ms,
        p2_stages,
        p2_limit: p2_stages.limit(),
        p2_ratio: p2_report.orders_per_second / p2_stages.limit(),
        p2_http_rps: http,
        p2_limit_with_http: p2_stages.limit_with_http(http),
        p2_ratio_with_http: p2_report.orders_per_second / p2_stages.limit_with_http(http),
        p3_shop_rps: p3_shop,
        p3_trivial_rps: p3_trivial,
        p3_ratio: p3_shop / p3_trivial,
        p3_limited_rps: p3_limited,
        p3_unlimited_rps: p3_unlimited,
        p3_limited_ratio: p3_limited / p3_unlimited,
        p3_voucher_rps: p3_voucher,
        p3_voucher_ratio: p3_voucher / p3_trivial,
        p4_worker_rows_per_s: worker_rate,
        p4_raw_rows_per_s: raw_rate,
        p4_ratio: worker_rate / raw_rate,
        p4b_ratio: worker_rate / modes.push,
        p4_large_rows_per_s: large_rate,
        p4_large_ratio: large_rate / raw_rate,
        p4_tx: p4.tx,
        p4_large_tx: large.tx,
        consumer_modes: modes,
        relays,
        p5_rss_start_mb: rss_start,
        p5_rss_end_mb: rss_end,
        p5_heap_start_mb: heap_start,
        p5_heap_end_mb: heap_end,
        // Read by the caller once the round's last stage is over.
        p5_rss_round_end_mb: 0.0,
        p5_threads_round_end: 0.0,
        // P6 is measured after the round, by the caller.
        p6_recs_cold_ms: 0.0,
        p6_recs_warm_ms: 0.0,
        p6_reference_ms: 0.0,
        p6_cold_ratio: 0.0,
        p6_warm_ratio: 0.0,
        invariants_pass,
    })
}
