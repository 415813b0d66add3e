//! `cityhub bench`: the benchmark suite. Starts its own API and worker (the
//! binaries beside this one) on a private database, key prefix and topic,
//! runs every figure next to its reference in the same round, several
//! rounds, and writes `BENCHMARKS.md` and `BENCHMARKS.json`.
//!
//! - P1 flash-sale path: seckill req/s under `wrk` while the stock sells out
//!   early (most requests are rejections) over `redis-benchmark` EVALSHA/s of
//!   the same script, same connection count, on the sold-out voucher.
//! - P2 accepted path: orders/s from the first HTTP request to the last order
//!   in MySQL when every request wins, and the worker's drain time.
//! - P4 worker insert rate: a backlog of orders drained by the worker (from
//!   its first stored order to its last) over a raw multi-row INSERT of the
//!   same rows into a copy of the table.
//! - P5 API peak RSS over the whole run, and its RSS at the start and end of
//!   the long P1 stampede (is it flat?).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use sqlx::MySqlPool;

use cityhub_core::auth::Auth;
use cityhub_core::config::{Secret, Settings};
use cityhub_core::kv::Kv;

use crate::flash_sale::{self, Plan};
use crate::platform::Platform;

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds each P1 stampede (wrk) lasts.
    #[arg(long, default_value_t = 10)]
    pub p1_seconds: u64,
    /// Distinct users in P1.
    #[arg(long, default_value_t = 5_000)]
    pub p1_users: usize,
    /// Connections (requests in flight) for P1 and for redis-benchmark.
    #[arg(long, default_value_t = 50)]
    pub connections: usize,
    /// Orders (= users = stock) in each P2 and P4 run.
    #[arg(long, default_value_t = 20_000)]
    pub orders: usize,
    /// Requests in flight for P2 and P4.
    #[arg(long, default_value_t = 100)]
    pub accepted_concurrency: usize,
    /// EVALSHA calls per redis-benchmark run.
    #[arg(long, default_value_t = 200_000)]
    pub evalsha_calls: usize,
    #[arg(long, default_value = "BENCHMARKS.md")]
    pub out: PathBuf,
    #[arg(long, default_value = "BENCHMARKS.json")]
    pub json: PathBuf,
    /// Where the API and worker logs go.
    #[arg(long, default_value = ".stack/bench")]
    pub logs: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
struct Round {
    p1_seckill_rps: f64,
    p1_evalsha_rps: f64,
    p1_ratio: f64,
    p1_p99_ms: f64,
    p2_orders_per_s: f64,
    p2_drain_s: f64,
    p2_p99_ms: f64,
    p4_worker_rows_per_s: f64,
    p4_raw_rows_per_s: f64,
    p4_ratio: f64,
    p5_rss_start_mb: f64,
    p5_rss_end_mb: f64,
    invariants_pass: bool,
}

#[derive(Debug, Serialize)]
struct Output {
    machine: String,
    settings: serde_json::Value,
    rounds: Vec<Round>,
    median: Round,
    p5_peak_rss_mb: f64,
}

pub async fn run(base: &Settings, args: &Args) -> anyhow::Result<()> {
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

    let mut platform = Platform::start(settings, &args.logs).await?;
    let settings = platform.settings.clone();
    let db = cityhub_core::db::connect(&settings.database).await?;
    let kv = Kv::connect(&settings.redis).await?;
    let api_pid = platform.api.as_ref().map(|p| p.pid()).unwrap_or(0);

    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        eprintln!("round {}/{}", round + 1, args.rounds);
        let offset = 10_000_000 * (round as u64 + 1);
        rounds.push(one_round(&mut platform, &db, &kv, args, api_pid, offset).await?);
    }
    let peak = rss_mb(api_pid, "VmHWM").unwrap_or(0.0);
    platform.stop().await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS `cityhub_bench_{id}`")).execute(&db).await?;

    let output = Output {
        machine: machine(),
        settings: serde_json::json!({
            "rounds": args.rounds, "p1_seconds": args.p1_seconds, "p1_load": "wrk -t2", "p1_users": args.p1_users,
            "connections": args.connections, "orders": args.orders, "accepted_concurrency": args.accepted_concurrency,
            "evalsha_calls": args.evalsha_calls, "batch_max": settings.mq.batch_max,
            "batch_linger_ms": settings.mq.batch_linger_ms, "consume_batch_max": settings.mq.consume_batch_max,
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        }),
        median: median(&rounds),
        rounds,
        p5_peak_rss_mb: peak,
    };
    std::fs::write(&args.json, serde_json::to_vec_pretty(&output)?)?;
    write_markdown(&args.out, &output)?;
    eprintln!("wrote {} and {}", args.out.display(), args.json.display());
    anyhow::ensure!(output.rounds.iter().all(|r| r.invariants_pass), "an invariant failed during the benchmarks");
    Ok(())
}

async fn one_round(
    platform: &mut Platform,
    db: &MySqlPool,
    kv: &Kv,
    args: &Args,
    api_pid: u32,
    offset: u64,
) -> anyhow::Result<Round> {
    let settings = platform.settings.clone();
    let auth = Auth::new(db.clone(), kv.clone(), &settings.auth);
    let api = platform.base();
    let plan = |users, requests, concurrency, stock, user_offset| Plan {
        api: api.clone(),
        users,
        requests,
        concurrency,
        stock,
        drain_timeout: 300,
        user_offset,
        quiet: true,
    };

    // P1: a stampede (wrk) that sells out early, then the script alone.
    let p1 = plan(args.p1_users, 0, args.connections, 100, offset);
    let p1_voucher = flash_sale::create_voucher(&settings, db, &p1).await?;
    let p1_users = crate::users::create(&auth, p1.user_offset, p1.users).await?;
    let rss_start = rss_mb(api_pid, "VmRSS").unwrap_or(0.0);
    let w = wrk(&api, p1_voucher, &p1_users, args).await?;
    let rss_end = rss_mb(api_pid, "VmRSS").unwrap_or(0.0);
    // wrk stops with requests in flight, which the API may still accept:
    // count what Redis sold, once they have landed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left: i64 = redis::AsyncCommands::hget(&mut kv.conn(), kv.keys.seckill_voucher(p1_voucher), "stock").await?;
    let accepted = (i64::from(p1.stock) - left).max(0) as usize;
    flash_sale::drain(db, p1_voucher, accepted, Duration::from_secs(60), true).await?;
    let p1_checks = flash_sale::invariants(db, kv, p1_voucher, p1.stock, accepted).await?;
    let evalsha = redis_benchmark(&settings, kv, p1_voucher, args).await?;
    let p1_rps = w.rps;

    // P2: every request wins; HTTP to MySQL with the worker running.
    let p2 = plan(args.orders, args.orders, args.accepted_concurrency, args.orders as u32, offset + 1_000_000);
    let p2_report = flash_sale::run(&settings, &p2).await?;

    // P4: a backlog while the worker is stopped, then the worker drains it.
    platform.stop_worker().await?;
    let p4 = plan(args.orders, args.orders, args.accepted_concurrency, args.orders as u32, offset + 2_000_000);
    let p4_voucher = flash_sale::create_voucher(&settings, db, &p4).await?;
    let p4_users = crate::users::create(&auth, p4.user_offset, p4.users).await?;
    let s4 = flash_sale::stampede(&p4, p4_voucher, &p4_users).await?;
    platform.start_worker().await?;
    let worker_rate = drain_rate(db, p4_voucher, s4.accepted).await?;
    let p4_checks = flash_sale::invariants(db, kv, p4_voucher, p4.stock, s4.accepted).await?;
    let raw_rate = raw_insert_rate(db, p4_voucher).await?;

    let failed: Vec<String> = [("P1", &p1_checks), ("P2", &p2_report.checks), ("P4", &p4_checks)]
        .iter()
        .flat_map(|(run, checks)| {
            checks.iter().filter(|c| !c.pass).map(move |c| format!("{run} {}: {}", c.name, c.detail))
        })
        .chain((w.errors > 0).then(|| format!("P1: {} socket errors", w.errors)))
        .chain((s4.errors + p2_report.errors > 0).then(|| "P2/P4: requests failed".to_owned()))
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
        p2_orders_per_s: p2_report.orders_per_second,
        p2_drain_s: p2_report.drain_seconds,
        p2_p99_ms: p2_report.p99_ms,
        p4_worker_rows_per_s: worker_rate,
        p4_raw_rows_per_s: raw_rate,
        p4_ratio: worker_rate / raw_rate,
        p5_rss_start_mb: rss_start,
        p5_rss_end_mb: rss_end,
        invariants_pass,
    })
}

struct Wrk {
    rps: f64,
    p99_ms: f64,
    /// Socket errors and timeouts.
    errors: usize,
}

/// A P1 stampede with `wrk` (Debian package `wrk`): `connections`
/// connections for `p1_seconds`, each request a different shopper.
async fn wrk(api: &str, voucher: u64, users: &[cityhub_core::auth::Issued], args: &Args) -> anyhow::Result<Wrk> {
    let dir = std::env::temp_dir().join(format!("cityhub-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (script, tokens) = (dir.join("seckill.lua"), dir.join("tokens.txt"));
    std::fs::write(&script, include_str!("../wrk/seckill.lua"))?;
    std::fs::write(&tokens, users.iter().map(|u| format!("{}\n", u.token)).collect::<String>())?;
    let out = tokio::process::Command::new("wrk")
        .args(["-t2", &format!("-c{}", args.connections), &format!("-d{}s", args.p1_seconds), "--latency", "-s"])
        .arg(&script)
        .arg(api)
        .arg("--")
        .arg(&tokens)
        .arg(format!("/vouchers/{voucher}/seckill"))
        .output()
        .await
        .context("run wrk (Debian package wrk)")?;
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    anyhow::ensure!(out.status.success(), "wrk failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    let field = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix).map(|v| v.trim().to_owned()));
    let number = |prefix: &str| field(prefix).and_then(|v| v.parse::<f64>().ok());
    let errors = field("Socket errors:")
        .map_or(0, |v| v.split(',').filter_map(|p| p.split_whitespace().last()?.parse::<usize>().ok()).sum());
    Ok(Wrk {
        rps: number("Requests/sec:").with_context(|| format!("unexpected wrk output: {text}"))?,
        p99_ms: field("99%").map_or(0.0, |v| wrk_duration_ms(&v)),
        errors,
    })
}

/// `wrk`'s "1.23ms" / "456.00us" / "1.20s" as milliseconds.
fn wrk_duration_ms(v: &str) -> f64 {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().unwrap_or(0.0);
    match unit {
        "us" => n / 1000.0,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => n,
    }
}

/// `redis-benchmark` EVALSHA of `lua/seckill.lua` on the sold-out voucher,
/// random users (so each call takes the sold-out path, like most P1 requests).
async fn redis_benchmark(settings: &Settings, kv: &Kv, voucher: u64, args: &Args) -> anyhow::Result<f64> {
    let url = settings.redis.url.expose();
    let hostport = url.trim_start_matches("redis://").trim_end_matches('/');
    let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "6379"));
    let out = tokio::process::Command::new("redis-benchmark")
        .args(["-h", host, "-p", port, "-c", &args.connections.to_string(), "-n", &args.evalsha_calls.to_string()])
        .args(["-r", "100000000", "-q", "--csv", "EVALSHA", cityhub_core::kv::scripts::reserve_sha(), "2"])
        .arg(kv.keys.seckill_voucher(voucher))
        .arg(kv.keys.seckill_buyers(voucher))
        .args(["__rand_int__", "1"])
        .output()
        .await
        .context("run redis-benchmark (package redis-tools)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // --csv: "test","rps",... ; the second line holds the numbers.
    text.lines()
        .filter_map(|l| l.split(',').nth(1))
        .filter_map(|v| v.trim_matches('"').parse::<f64>().ok())
        .next()
        .with_context(|| format!("unexpected redis-benchmark output: {text}"))
}

/// Rows/s the worker stores: from its first stored order of `voucher` to
/// the last, so consumer start-up does not count.
async fn drain_rate(db: &MySqlPool, voucher: u64, expected: usize) -> anyhow::Result<f64> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let (mut first, mut base) = (None, 0);
    loop {
        let stored = flash_sale::order_count(db, voucher).await? as usize;
        if first.is_none() && stored > 0 {
            first = Some(Instant::now());
            base = stored;
        }
        if stored >= expected {
            let took = first.map_or(Duration::ZERO, |f| f.elapsed()).as_secs_f64().max(0.001);
            return Ok((expected - base) as f64 / took);
        }
        anyhow::ensure!(Instant::now() < deadline, "the worker stored {stored} of {expected} orders in 300 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

type OrderRow = (u64, u64, u64, String, u64, chrono::DateTime<chrono::Utc>);

/// Rows/s of plain multi-row INSERTs (1000 rows each, one connection) of the
/// same orders into a copy of the table.
async fn raw_insert_rate(db: &MySqlPool, voucher: u64) -> anyhow::Result<f64> {
    let rows: Vec<OrderRow> = sqlx::query_as(
        "SELECT id, user_id, voucher_id, status, pay_amount, created_at FROM orders WHERE voucher_id = ?",
    )
    .bind(voucher)
    .fetch_all(db)
    .await?;
    sqlx::query("DROP TABLE IF EXISTS orders_raw").execute(db).await?;
    sqlx::query("CREATE TABLE orders_raw LIKE orders").execute(db).await?;
    let mut conn = db.acquire().await?;
    let started = Instant::now();
    for chunk in rows.chunks(1000) {
        let mut insert = sqlx::QueryBuilder::<sqlx::MySql>::new(
            "INSERT INTO orders_raw (id, user_id, voucher_id, status, pay_amount, created_at) ",
        );
        insert.push_values(chunk, |mut b, r| {
            b.push_bind(r.0).push_bind(r.1).push_bind(r.2).push_bind(&r.3).push_bind(r.4).push_bind(r.5);
        });
        insert.build().execute(&mut *conn).await?;
    }
    let took = started.elapsed().as_secs_f64().max(0.001);
    sqlx::query("DROP TABLE orders_raw").execute(db).await?;
    Ok(rows.len() as f64 / took)
}

fn rss_mb(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn machine() -> String {
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

fn median(rounds: &[Round]) -> Round {
    let m = |f: fn(&Round) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    Round {
        p1_seckill_rps: m(|r| r.p1_seckill_rps),
        p1_evalsha_rps: m(|r| r.p1_evalsha_rps),
        p1_ratio: m(|r| r.p1_ratio),
        p1_p99_ms: m(|r| r.p1_p99_ms),
        p2_orders_per_s: m(|r| r.p2_orders_per_s),
        p2_drain_s: m(|r| r.p2_drain_s),
        p2_p99_ms: m(|r| r.p2_p99_ms),
        p4_worker_rows_per_s: m(|r| r.p4_worker_rows_per_s),
        p4_raw_rows_per_s: m(|r| r.p4_raw_rows_per_s),
        p4_ratio: m(|r| r.p4_ratio),
        p5_rss_start_mb: m(|r| r.p5_rss_start_mb),
        p5_rss_end_mb: m(|r| r.p5_rss_end_mb),
        invariants_pass: rounds.iter().all(|r| r.invariants_pass),
    }
}

const NOTES_HEADING: &str = "## Profile and fix";

fn write_markdown(path: &std::path::Path, o: &Output) -> anyhow::Result<()> {
    let m = &o.median;
    let mut md = String::new();
    md.push_str("# CityHub benchmarks\n\nWritten by `cityhub bench`; every figure is measured next to its reference in the same round.\n\n");
    md.push_str(&format!(
        "- Machine: {}\n- Settings: `{}`\n- Rounds: {} (medians below)\n\n",
        o.machine,
        o.settings,
        o.rounds.len()
    ));
    md.push_str("| figure | measured (median) | reference | ratio | goal |\n|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| P1 flash-sale path | {:.0} seckill req/s (p99 {:.1} ms) | {:.0} EVALSHA/s redis-benchmark | **{:.2}** | >= 1.0 |\n",
        m.p1_seckill_rps, m.p1_p99_ms, m.p1_evalsha_rps, m.p1_ratio
    ));
    md.push_str(&format!(
        "| P2 accepted path | **{:.0} orders/s** HTTP to MySQL (p99 {:.1} ms), drain {:.2} s | - | - | >= 10,000 orders/s |\n",
        m.p2_orders_per_s, m.p2_p99_ms, m.p2_drain_s
    ));
    md.push_str(&format!(
        "| P4 worker insert rate | {:.0} rows/s | {:.0} rows/s raw multi-row INSERT | **{:.2}** | >= 0.5 |\n",
        m.p4_worker_rows_per_s, m.p4_raw_rows_per_s, m.p4_ratio
    ));
    md.push_str(&format!(
        "| P5 API RSS | peak **{:.1} MB**; {:.1} MB before / {:.1} MB after a P1 stampede | - | - | < 150 MB, flat |\n\n",
        o.p5_peak_rss_mb, m.p5_rss_start_mb, m.p5_rss_end_mb
    ));
    md.push_str(&format!(
        "Invariants (no oversell, one order per user, Redis == MySQL, all accepted stored) in every run: {}\n\n",
        if m.invariants_pass { "PASS" } else { "FAIL" }
    ));
    md.push_str("## Rounds\n\n| round | P1 req/s | EVALSHA/s | P1 ratio | P2 orders/s | P2 drain s | P4 worker rows/s | P4 raw rows/s | P4 ratio | RSS MB start/end |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (i, r) in o.rounds.iter().enumerate() {
        md.push_str(&format!(
            "| {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.1}/{:.1} |\n",
            i + 1,
            r.p1_seckill_rps,
            r.p1_evalsha_rps,
            r.p1_ratio,
            r.p2_orders_per_s,
            r.p2_drain_s,
            r.p4_worker_rows_per_s,
            r.p4_raw_rows_per_s,
            r.p4_ratio,
            r.p5_rss_start_mb,
            r.p5_rss_end_mb
        ));
    }
    // Hand-written notes (profiling, before/after) survive regeneration.
    if let Some(notes) =
        std::fs::read_to_string(path).ok().and_then(|old| old.find(NOTES_HEADING).map(|i| old[i..].to_owned()))
    {
        md.push('\n');
        md.push_str(&notes);
    }
    std::fs::write(path, md)?;
    Ok(())
}
