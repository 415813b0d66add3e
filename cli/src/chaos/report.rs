//! The chaos report: a table on the terminal as each scenario ends, and
//! `CHAOS.md` rendered from `CHAOS.json`, whose three parts (the scenarios,
//! the soak and the hostile clients) are each replaced only by a run of
//! their own kind. A run
//! of some scenarios at the same settings replaces their rows and keeps the
//! others'.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::hostile::HostileRun;
use super::soak::Soak;
use super::{Plan, Row};

/// Everything `CHAOS.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Report {
    pub scenarios: Option<Scenarios>,
    pub soak: Option<Soak>,
    #[serde(default)]
    pub hostile: Option<HostileRun>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Scenarios {
    pub machine: String,
    pub plan: serde_json::Value,
    pub rows: Vec<Row>,
}

impl Scenarios {
    pub fn new(plan: &Plan, rows: Vec<Row>) -> Self {
        let plan = serde_json::json!({
            "users": plan.users, "requests": plan.requests, "stock": plan.stock, "rate": plan.rate,
            "concurrency": plan.concurrency, "worker_down_secs": plan.worker_down_secs,
            "broker_down_secs": plan.broker_down_secs, "namesrv_down_secs": plan.namesrv_down_secs,
            "database_down_secs": plan.database_down_secs, "api_down_secs": plan.api_down_secs,
            "recover_timeout_secs": plan.recover_timeout_secs, "follow_rate": plan.follow_rate,
        });
        Self { machine: crate::platform::machine(), plan, rows }
    }

    /// This run's rows, with the rows of `previous` for the scenarios it did
    /// not run when `previous` was run at the same settings; in the order of
    /// [`Scenario::EVERY`](super::Scenario::EVERY).
    pub fn merged(previous: Option<Scenarios>, plan: &Plan, rows: Vec<Row>) -> Self {
        let mut this = Self::new(plan, rows);
        if let Some(previous) = previous.filter(|p| p.plan == this.plan) {
            let ran: Vec<_> = this.rows.iter().map(|r| r.scenario).collect();
            this.rows.extend(previous.rows.into_iter().filter(|old| !ran.contains(&old.scenario)));
            let rank = |row: &Row| super::Scenario::EVERY.iter().position(|s| *s == row.scenario);
            this.rows.sort_by_key(rank);
        }
        this
    }
}

const HEADER: [&str; 12] = [
    "scenario",
    "requests",
    "accepted",
    "stored",
    "oversold",
    "dup buyers",
    "lost",
    "stranded",
    "served s",
    "storing s",
    "whole s",
    "result",
];

fn cells(row: &Row) -> [String; 12] {
    let seconds = |s: Option<f64>| s.map_or("–".into(), |s| format!("{s:.1}"));
    let t = &row.tally;
    [
        row.scenario.name().to_owned(),
        row.requests.to_string(),
        t.accepted.to_string(),
        t.stored.to_string(),
        t.oversold.to_string(),
        t.duplicate_buyers.to_string(),
        t.lost.to_string(),
        t.stranded.to_string(),
        seconds(row.recovery.served_s),
        seconds(row.recovery.storing_s),
        row.recovery.consistent_s.map_or("not whole".into(), |s| format!("{s:.1}")),
        if row.pass { "PASS".into() } else { "FAIL".into() },
    ]
}

pub fn print_header() {
    println!(
        "{:<38} {:>8} {:>8} {:>7} {:>8} {:>10} {:>5} {:>8} {:>8} {:>9} {:>9}  result",
        HEADER[0],
        HEADER[1],
        HEADER[2],
        HEADER[3],
        HEADER[4],
        HEADER[5],
        HEADER[6],
        HEADER[7],
        HEADER[8],
        HEADER[9],
        HEADER[10]
    );
}

pub fn print_row(row: &Row) {
    let c = cells(row);
    println!(
        "{:<38} {:>8} {:>8} {:>7} {:>8} {:>10} {:>5} {:>8} {:>8} {:>9} {:>9}  {}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
    );
    if !row.pass {
        println!(
            "    unexplained orders {}, Redis agrees {}, reconciler {}, drain {:.1} s",
            row.tally.unexplained, row.tally.redis_agrees, row.verdict, row.drain_s
        );
    }
    if row.relay.is_some() {
        let figures: Vec<String> =
            RELAY_HEADER.iter().zip(relay_cells(row)).skip(1).map(|(h, v)| format!("{h} {v}")).collect();
        println!("    {}", figures.join(", "));
    }
}

const RELAY_HEADER: [&str; 13] = [
    "scenario",
    "events",
    "applied",
    "published",
    "pairs off",
    "counts off (MySQL, Redis)",
    "lag p50 / p99 / max ms",
    "relay max ms",
    "duplicates",
    "reconnects",
    "failed sends",
    "swept",
    "follow answers while the fault lasted",
];

/// A `binlog relay:` row's figures, in [`RELAY_HEADER`]'s order (empty
/// for another scenario).
fn relay_cells(row: &Row) -> Vec<String> {
    let Some(r) = &row.relay else { return Vec::new() };
    let t = &r.relayed;
    let during: Vec<String> =
        row.faults.iter().flat_map(|f| f.follow_answers.iter().map(|(k, v)| format!("{k}: {v}"))).collect();
    vec![
        row.scenario.name().to_owned(),
        t.events.to_string(),
        t.applied.to_string(),
        t.published.to_string(),
        t.pairs_disagree.to_string(),
        format!("{}, {}", t.mysql_counts_disagree, t.redis_counts_disagree),
        format!("{:.0} / {:.0} / {:.0}", t.lag_p50_ms, t.lag_p99_ms, t.lag_max_ms),
        format!("{:.0}", t.published_max_ms),
        r.duplicates.to_string(),
        r.restarts.to_string(),
        r.publish_failures.to_string(),
        r.swept.to_string(),
        during.join(", "),
    ]
}

/// The follow events of the `binlog relay:` scenarios.
fn relay_table(rows: &[Row]) -> String {
    if rows.iter().all(|r| r.relay.is_none()) {
        return String::new();
    }
    let mut md = String::from(
        "\n## The binlog outbox relay under faults\n\nIn the `binlog relay:` scenarios the worker's outbox relay \
         reads MariaDB's row binlog (`outbox.relay = \"binlog\"`) while the shoppers also follow and unfollow each \
         other through the API, so follow events stream through the relay when the fault strikes (after the \
         first 100 were applied). *events*: follow changes committed (outbox rows); *applied*: recorded by the \
         follow consumer; *published*: marked by the relay; *pairs off*: `follows` rows whose state and version \
         the projection lacks, or projection rows with no such row; *counts off*: users whose MySQL or Redis \
         counts differ from `follows` (the count-correction job is off for the run, so it cannot hide an event \
         counted twice); *lag*: commit to applied, on MariaDB's clock; *relay max*: the longest commit to \
         marked published (the relay's share); *duplicates*: redeliveries the consumer \
         recognised, since the worker's last start; *reconnects*, *failed sends*: the relay's, since then; \
         *swept*: rows the sweep published because the relay had not within `outbox.sweep_after_secs`. PASS \
         needs every event applied and published, nothing off, and the relay streaming (not fallen back to \
         polling) at the end.\n\n",
    );
    md.push_str(&format!("| {} |\n|{}\n", RELAY_HEADER.join(" | "), "---|".repeat(RELAY_HEADER.len())));
    for row in rows.iter().filter(|r| r.relay.is_some()) {
        md.push_str(&format!("| {} |\n", relay_cells(row).join(" | ")));
    }
    md
}

/// Reads `CHAOS.json` beside `md` (empty if missing), lets `update` change
/// it, writes it back and renders `md`.
pub fn update(md: &Path, update: impl FnOnce(&mut Report)) -> anyhow::Result<()> {
    let json = md.with_extension("json");
    let mut report: Report =
        std::fs::read(&json).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    update(&mut report);
    std::fs::write(&json, serde_json::to_vec_pretty(&report)?)?;
    std::fs::write(md, render(&report))?;
    Ok(())
}

fn render(r: &Report) -> String {
    let mut md = String::from(
        "# CityHub under faults\n\nWritten by `cityhub chaos` (see \"Failures\" in docs/OPERATIONS.md for what \
         each fault means to an operator). Each scenario is one flash sale in a lab of its own (MariaDB, Redis, \
         name server and broker on their own ports), with one fault injected while the stampede runs. The \
         `cluster:` scenarios run on the scale-out shape instead (scripts/topology): a Redis Cluster of 3 masters \
         with a replica each (`cluster-node-timeout` 5 s), two brokers on one name server, two workers in one \
         group and two APIs behind HAProxy, the shoppers coming through the balancer.\n\n",
    );
    if let Some(s) = &r.scenarios {
        md.push_str(&format!("- Machine: {}\n- Settings: `{}`\n\n", s.machine, s.plan));
        md.push_str(&format!("| {} |\n|{}\n", HEADER.join(" | "), "---|".repeat(HEADER.len())));
        for row in &s.rows {
            md.push_str(&format!("| {} |\n", cells(row).join(" | ")));
        }
        md.push_str(
            "\n*accepted*: distinct 202s; *stored*: orders in MySQL (a request that reached the API and got no \
             answer may have bought: each such request explains at most one order of its shopper; a refused \
             connection explains none); *lost*: a \
             202 never stored; *stranded*: a Redis reservation with no order after the drain. Recovery, in \
             seconds after the fault cleared (its part's start command returned and its port answered, or the \
             fault's last step ended), the longest of a sequence: *served s*: until the first answer from which \
             every answer was a 202 or a 409; *storing s*: until MySQL held more orders than when the fault \
             cleared, or every 202 so far (\"–\": not measured); *whole s*: until shoppers were served (20 answers \
             in a row were 202s or 409s), every 202 so far was stored, nothing was stranded and Redis agreed with \
             MySQL. PASS also needs the reconciler to say `consistent` after the drain.\n\n",
        );
        md.push_str("## What shoppers saw while each fault lasted\n\n| scenario | fault | from s | to s | answers |\n|---|---|---|---|---|\n");
        for row in &s.rows {
            for f in &row.faults {
                let answers: Vec<String> = f.answers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                md.push_str(&format!(
                    "| {} | {} | {:.1} | {:.1} | {} |\n",
                    row.scenario.name(),
                    f.fault.name(),
                    f.from_s,
                    f.to_s,
                    answers.join(", ")
                ));
            }
        }
        md.push_str(
            "\n## Every answer of each sale\n\n| scenario | answers | orders without a 202 (one unanswered request \
             each) | reconciler repairs | drain s |\n|---|---|---|---|---|\n",
        );
        for row in &s.rows {
            let answers: Vec<String> = row.answers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let repairs: Vec<String> = row.repairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            md.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} |\n",
                row.scenario.name(),
                answers.join(", "),
                row.tally.stored_unanswered,
                if repairs.is_empty() { "none".to_owned() } else { repairs.join(", ") },
                row.drain_s
            ));
        }
        md.push_str(&relay_table(&s.rows));
        md.push('\n');
    }
    if let Some(soak) = &r.soak {
        md.push_str(&soak.markdown());
    }
    if let Some(hostile) = &r.hostile {
        md.push_str(&hostile.markdown());
    }
    md
}
