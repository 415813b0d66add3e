//! `cityhub bench --topology cluster`: P1 and P2 on the scale-out shape
//! ([`crate::chaos::cluster::start_shape`]: a Redis Cluster of 3 masters
//! with a replica each, two brokers, two workers, two APIs behind HAProxy),
//! each through the balancer over the same run against one of the APIs
//! directly, in the same round on the same services: what the balancer and
//! the second API add or cost on this machine. Then the hot-voucher row: a
//! sale where every request wins, through the balancer, on a voucher split
//! into one stock bucket per master against the same sale on one bucket.
//! Writes `BENCHMARKS-cluster.json` and the "Cluster topology" section of
//! `BENCHMARKS.md`, next to the single-process figures.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_testkit::invariants::Check;
use serde::Serialize;

use super::Args;
use crate::chaos::cluster::start_shape;
use crate::chaos::lab::Lab;
use crate::flash_sale;

/// The section of `BENCHMARKS.md` this run writes (kept by the single run).
pub const HEADING: &str = "## Cluster topology";

#[derive(Debug, Clone, Serialize)]
pub struct Round {
    p1_balanced_rps: f64,
    p1_balanced_p99_ms: f64,
    p1_one_api_rps: f64,
    p1_ratio: f64,
    p2_balanced_orders_per_s: f64,
    p2_balanced_p99_ms: f64,
    p2_one_api_orders_per_s: f64,
    p2_ratio: f64,
    hot_buckets_rps: f64,
    hot_buckets_p99_ms: f64,
    hot_one_bucket_rps: f64,
    hot_ratio: f64,
    invariants_pass: bool,
}

/// The hot voucher's buckets: one per master of the shape's cluster.
const HOT_BUCKETS: u16 = 3;

pub async fn run(base: &Settings, args: &Args) -> anyhow::Result<()> {
    let dir = crate::chaos::scratch("bench-cluster");
    let lab = Lab::start(&dir).await.context("start the lab")?;
    let mut settings = lab.settings(base);
    settings.log.filter = "warn".into();
    // One load generator, one address: limits off, as for the single run's P1 and P2.
    settings.limits.enabled = false;
    let (platform, shape) = start_shape(&lab, settings, &dir.join("logs"), Duration::from_secs(120)).await?;
    let settings = platform.settings.clone();
    let services = cityhub_core::Services::connect(&settings).await?;
    let (balanced, one_api) = (shape.parts.base(), platform.base());
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        eprintln!("cluster round {}/{}", round + 1, args.rounds);
        let offset = 10_000_000 * (round as u64 + 1);
        rounds.push(one_round(&settings, &services, &balanced, &one_api, args, offset).await?);
    }
    // The clients first, then what they talk to.
    drop(services);
    let stopped = platform.stop().await;
    drop(shape);
    stopped?;
    let median = |f: fn(&Round) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let spread = |f: fn(&Round) -> f64| {
        let v: Vec<f64> = rounds.iter().map(f).collect();
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(0.0, f64::max))
    };
    let json = args.json.with_file_name("BENCHMARKS-cluster.json");
    let output = serde_json::json!({
        "machine": crate::platform::machine(),
        "settings": {
            "rounds": args.rounds, "p1_seconds": args.p1_seconds, "p1_users": args.p1_users,
            "connections": args.connections, "orders": args.orders, "accepted_concurrency": args.accepted_concurrency,
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        },
        "rounds": rounds,
    });
    std::fs::write(&json, serde_json::to_vec_pretty(&output)?)?;
    let single: Option<serde_json::Value> =
        std::fs::read(&args.json).ok().and_then(|raw| serde_json::from_slice(&raw).ok());
    type Fields = [fn(&Round) -> f64; 4];
    // (figure, unit, balanced, its p99, one API, ratio; the single run's field and unit)
    let figures: [(&str, &str, Fields, &str, &str); 2] = [
        (
            "P1 flash-sale path",
            "seckill req/s",
            [|r| r.p1_balanced_rps, |r| r.p1_balanced_p99_ms, |r| r.p1_one_api_rps, |r| r.p1_ratio],
            "p1_seckill_rps",
            "req/s",
        ),
        (
            "P2 accepted path",
            "orders/s HTTP to MySQL",
            [|r| r.p2_balanced_orders_per_s, |r| r.p2_balanced_p99_ms, |r| r.p2_one_api_orders_per_s, |r| r.p2_ratio],
            "p2_orders_per_s",
            "orders/s",
        ),
    ];
    let mut md = format!(
        "{HEADING}\n\n`cityhub bench --topology cluster`, {rounds} rounds, medians (ratio range over the rounds): \
         two APIs behind HAProxy, two workers in one group, a Redis Cluster of 3 masters with a replica each and \
         two brokers, all on this one machine ({machine}). Each figure's reference is the same run against one \
         of the two APIs directly, in the same round, on the same services.\n\n\
         | figure | through the balancer (2 APIs) | one API directly (reference) | ratio | one process, one Redis (table above) |\n\
         |---|---|---|---|---|\n",
        rounds = args.rounds,
        machine = crate::platform::machine(),
    );
    for (figure, unit, [balanced, p99, one, ratio], single_field, single_unit) in figures {
        let single = single.as_ref().and_then(|s| s["median"][single_field].as_f64());
        let (low, high) = spread(ratio);
        md.push_str(&format!(
            "| {figure} | {:.0} {unit} (p99 {:.1} ms) | {:.0} {unit} | **{:.2}** ({low:.2}-{high:.2}) | {} |\n",
            median(balanced),
            median(p99),
            median(one),
            median(ratio),
            single.map_or("-".to_owned(), |v| format!("{v:.0} {single_unit}")),
        ));
    }
    let (hot_low, hot_high) = spread(|r| r.hot_ratio);
    md.push_str(&format!(
        "\nA hot voucher: every request wins, through the balancer, the voucher's stock split into \
         {HOT_BUCKETS} buckets (one per master) against the same sale on one bucket, same round.\n\n\
         | figure | {HOT_BUCKETS} buckets | 1 bucket (reference) | ratio |\n|---|---|---|---|\n\
         | hot voucher, accepted path | {:.0} req/s (p99 {:.1} ms) | {:.0} req/s | **{:.2}** ({hot_low:.2}-{hot_high:.2}) |\n\n",
        median(|r| r.hot_buckets_rps),
        median(|r| r.hot_buckets_p99_ms),
        median(|r| r.hot_one_bucket_rps),
        median(|r| r.hot_ratio),
    ));
    md.push_str(&format!(
        "Invariants (no oversell, one order per user, Redis == MySQL, all accepted stored) in every run: {}\n\n",
        if rounds.iter().all(|r| r.invariants_pass) { "PASS" } else { "FAIL" }
    ));
    write_section(&args.out, &md)?;
    eprintln!("wrote {} and the cluster section of {}", json.display(), args.out.display());
    anyhow::ensure!(rounds.iter().all(|r| r.invariants_pass), "an invariant failed during the cluster benchmarks");
    Ok(())
}

async fn one_round(
    settings: &Settings,
    services: &cityhub_core::Services,
    balanced: &str,
    one_api: &str,
    args: &Args,
    offset: u64,
) -> anyhow::Result<Round> {
    let (db, kv, auth) = (&services.db, &services.kv, services.auth.clone());
    let plan = super::sale_plan;
    // P1: a stampede that sells out early, through the balancer, then on one API.
    let p1_plan = plan(balanced, args.p1_users, 0, args.connections, 100, offset);
    let users = crate::users::create(&auth, p1_plan.user_offset, p1_plan.users).await?;
    let (wb, _, balanced_checks) = super::p1(balanced, settings, db, kv, &p1_plan, &users, args).await?;
    let (wo, _, one_checks) = super::p1(one_api, settings, db, kv, &p1_plan, &users, args).await?;
    // P2: every request wins, HTTP to MySQL, both workers draining.
    let n = args.orders;
    let p2b = flash_sale::run(settings, &plan(balanced, n, n, args.accepted_concurrency, n as u32, offset + 1_000_000))
        .await?;
    let p2o = flash_sale::run(settings, &plan(one_api, n, n, args.accepted_concurrency, n as u32, offset + 2_000_000))
        .await?;
    // The hot voucher: every request wins, through the balancer, split or not.
    let hot = |buckets, skip| flash_sale::Plan {
        buckets,
        ..plan(balanced, n, n, args.accepted_concurrency, n as u32, offset + skip)
    };
    let hot_split = flash_sale::run(settings, &hot(HOT_BUCKETS, 3_000_000)).await?;
    let hot_one = flash_sale::run(settings, &hot(1, 4_000_000)).await?;
    let checks = [&balanced_checks, &one_checks, &p2b.checks, &p2o.checks, &hot_split.checks, &hot_one.checks];
    let failed: Vec<&Check> = checks.into_iter().flatten().filter(|c| !c.pass).collect();
    for f in &failed {
        eprintln!("FAIL {}: {}", f.name, f.detail);
    }
    let errors = wb.errors + wo.errors + p2b.errors + p2o.errors + hot_split.errors + hot_one.errors;
    if errors > 0 {
        eprintln!("FAIL {errors} requests failed");
    }
    Ok(Round {
        p1_balanced_rps: wb.rps,
        p1_balanced_p99_ms: wb.p99_ms,
        p1_one_api_rps: wo.rps,
        p1_ratio: wb.rps / wo.rps,
        p2_balanced_orders_per_s: p2b.orders_per_second,
        p2_balanced_p99_ms: p2b.p99_ms,
        p2_one_api_orders_per_s: p2o.orders_per_second,
        p2_ratio: p2b.orders_per_second / p2o.orders_per_second,
        hot_buckets_rps: hot_split.requests_per_second,
        hot_buckets_p99_ms: hot_split.p99_ms,
        hot_one_bucket_rps: hot_one.requests_per_second,
        hot_ratio: hot_split.requests_per_second / hot_one.requests_per_second,
        invariants_pass: failed.is_empty() && errors == 0,
    })
}

/// Replaces (or adds, before the hand-written notes) the cluster section of
/// the report at `path`.
fn write_section(path: &Path, section: &str) -> anyhow::Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let (before, after) = split_section(&old);
    std::fs::write(path, format!("{before}{section}{after}"))?;
    Ok(())
}

/// `report` without its cluster section: what comes before it, and what
/// comes after it (the next `## ` heading on).
pub fn split_section(report: &str) -> (&str, &str) {
    match report.find(HEADING) {
        Some(start) => {
            let rest = &report[start + HEADING.len()..];
            let end = rest.find("\n## ").map_or(report.len(), |i| start + HEADING.len() + i + 1);
            (&report[..start], &report[end..])
        }
        None => match report.find(super::report::NOTES_HEADING) {
            Some(notes) => (&report[..notes], &report[notes..]),
            None => (report, ""),
        },
    }
}

/// The cluster section of `report`, if it has one.
pub fn section(report: &str) -> Option<&str> {
    let (before, after) = split_section(report);
    report.find(HEADING).map(|_| &report[before.len()..report.len() - after.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_section_is_found_replaced_and_kept_apart_from_the_notes() {
        let report = "# B\n\n| t |\n\n## Cluster topology\n\nold\n\n## Profile and fix\n\nnotes\n";
        assert_eq!(section(report), Some("## Cluster topology\n\nold\n\n"));
        let (before, after) = split_section(report);
        assert_eq!(before, "# B\n\n| t |\n\n");
        assert_eq!(after, "## Profile and fix\n\nnotes\n");
        let fresh = "# B\n\n## Profile and fix\n\nnotes\n";
        assert_eq!(split_section(fresh), ("# B\n\n", "## Profile and fix\n\nnotes\n"));
        assert_eq!(section(fresh), None);
    }
}
