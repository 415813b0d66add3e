//! The chaos report: a table on the terminal as each scenario ends, and
//! `CHAOS.md` rendered from `CHAOS.json`, whose two parts (the scenarios
//! and the soak) are each replaced only by a run of their own kind. A run
//! of some scenarios at the same settings replaces their rows and keeps the
//! others'.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::soak::Soak;
use super::{Plan, Row};

/// Everything `CHAOS.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Report {
    pub scenarios: Option<Scenarios>,
    pub soak: Option<Soak>,
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
            "recover_timeout_secs": plan.recover_timeout_secs,
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

const HEADER: [&str; 10] =
    ["scenario", "requests", "accepted", "stored", "oversold", "dup buyers", "lost", "stranded", "recover s", "result"];

fn cells(row: &Row) -> [String; 10] {
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
        row.recover_s.map_or("not recovered".into(), |s| format!("{s:.1}")),
        if row.pass { "PASS".into() } else { "FAIL".into() },
    ]
}

pub fn print_header() {
    println!(
        "{:<38} {:>8} {:>8} {:>7} {:>8} {:>10} {:>5} {:>8} {:>9}  result",
        HEADER[0], HEADER[1], HEADER[2], HEADER[3], HEADER[4], HEADER[5], HEADER[6], HEADER[7], HEADER[8]
    );
}

pub fn print_row(row: &Row) {
    let c = cells(row);
    println!(
        "{:<38} {:>8} {:>8} {:>7} {:>8} {:>10} {:>5} {:>8} {:>9}  {}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
    );
    if !row.pass {
        println!(
            "    unexplained orders {}, Redis agrees {}, reconciler {}, drain {:.1} s",
            row.tally.unexplained, row.tally.redis_agrees, row.verdict, row.drain_s
        );
    }
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
             202 never stored; *stranded*: a Redis reservation with no order after the drain; *recover s*: from \
             the fault until shoppers were served again (20 answers in a row were 202s or 409s), every 202 so far \
             was stored, nothing was stranded and Redis agreed with MySQL (the longest of a sequence). PASS also needs the reconciler to say `consistent` after the drain.\n\n",
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
        md.push('\n');
    }
    if let Some(soak) = &r.soak {
        md.push_str(&soak.markdown());
    }
    md
}
