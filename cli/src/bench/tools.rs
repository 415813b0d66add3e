//! The external load tools the benchmarks drive: `wrk` (P1 load) and
//! `redis-benchmark` (the script alone).

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::{OrderId, VoucherId};

use super::Args;

pub struct Wrk {
    pub rps: f64,
    /// Order ids of the 202 answers wrk saw.
    pub accepted: Vec<OrderId>,
    pub p99_ms: f64,
    /// Socket errors and timeouts.
    pub errors: usize,
}

/// A P1 stampede with `wrk` (Debian package `wrk`): `connections`
/// connections for `p1_seconds`, each request a different shopper.
pub async fn wrk(
    api: &str,
    voucher: VoucherId,
    users: &[cityhub_core::auth::Issued],
    args: &Args,
) -> anyhow::Result<Wrk> {
    let dir = std::env::temp_dir().join(format!("cityhub-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (script, tokens) = (dir.join("seckill.lua"), dir.join("tokens.txt"));
    std::fs::write(&script, include_str!("../../wrk/seckill.lua"))?;
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
        accepted: text.lines().filter_map(|l| l.strip_prefix("ACCEPTED ")?.trim().parse().ok()).collect(),
    })
}

/// Requests/s of plain `GET <api><path>` under `wrk` with the P1 connection
/// count, for `seconds` (P3: the same load generator for both sides).
pub async fn wrk_get(api: &str, path: &str, seconds: u64, args: &Args) -> anyhow::Result<f64> {
    let mut wrk = tokio::process::Command::new("wrk");
    wrk.args(["-t2", &format!("-c{}", args.connections), &format!("-d{seconds}s")]).arg(format!("{api}{path}"));
    requests_per_sec(&mut wrk, path).await
}

/// As [`wrk_get`], each request from another of `addresses` client
/// addresses (`X-Forwarded-For`, which the API trusts from 127.0.0.1).
pub async fn wrk_get_from(api: &str, path: &str, seconds: u64, args: &Args, addresses: usize) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("cityhub-wrk-reads-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("reads.lua");
    std::fs::write(&script, include_str!("../../wrk/reads.lua"))?;
    let mut wrk = tokio::process::Command::new("wrk");
    wrk.args(["-t2", &format!("-c{}", args.connections), &format!("-d{seconds}s"), "-s"]).arg(&script).arg(api);
    wrk.args(["--", path, &addresses.to_string()]);
    let rps = requests_per_sec(&mut wrk, path).await;
    let _ = std::fs::remove_dir_all(&dir);
    rps
}

/// Runs a `wrk` of GETs of `path` and reads its requests/s; any non-2xx
/// answer fails it.
async fn requests_per_sec(wrk: &mut tokio::process::Command, path: &str) -> anyhow::Result<f64> {
    let out = wrk.output().await.context("run wrk (Debian package wrk)")?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    anyhow::ensure!(out.status.success(), "wrk failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    anyhow::ensure!(!text.contains("Non-2xx"), "GET {path} answered errors under load: {text}");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Requests/sec:")?.trim().parse().ok())
        .with_context(|| format!("unexpected wrk output: {text}"))
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
pub async fn redis_benchmark(settings: &Settings, kv: &Kv, voucher: VoucherId, args: &Args) -> anyhow::Result<f64> {
    let url = settings.redis.url.expose();
    let hostport = url.trim_start_matches("redis://").trim_end_matches('/');
    let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "6379"));
    let generation = kv.generation.current(&kv.keys.seckill_voucher(voucher)).await?;
    let out = tokio::process::Command::new("redis-benchmark")
        .args(["-h", host, "-p", port, "-c", &args.connections.to_string(), "-n", &args.evalsha_calls.to_string()])
        .args(["-r", "100000000", "-q", "--csv", "EVALSHA", cityhub_core::seckill::scripts::reserve_sha(), "3"])
        .arg(kv.generation.mark_for(&kv.keys.seckill_voucher(voucher)))
        .arg(kv.keys.seckill_voucher(voucher))
        .arg(kv.keys.seckill_buyers(voucher))
        .arg(&*generation)
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
