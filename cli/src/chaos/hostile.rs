//! `cityhub chaos --hostile`: honest shoppers run a full-size sale while one
//! kind of hostile client runs against the same API, each scenario in a lab
//! of its own with the limits on, beside a quiet run (no hostile client) in
//! the same round to compare with. Shoppers and hostile clients come through
//! a trusted proxy (the lab's API trusts `X-Forwarded-For` from 127.0.0.1),
//! each shopper from an address of their own, as behind a real balancer.
//! The hostile client runs on a runtime and a thread of its own, as from
//! another machine, so its work does not delay the shoppers' clocks.
//!
//! A scenario: the hostile client starts alone and, after an idle phase of
//! the same length, its MySQL statements are counted (the lab's MariaDB
//! serves nothing else, so the difference of the two phases is the hostile
//! client's). Then the sale runs beside it; 5 s in, a targeted shopper (the
//! phone the login griefer aims at) asks for a code, reads it from the
//! API's log (the lab's "phone") and logs in, paying a proof of work when
//! asked. RSS is sampled 10 s into the sale (every shopper seen) and at its
//! last answer; the API's metric series when the hostile client starts and
//! when it stops. After the drain the sale's invariants are counted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::auth::Phone;
use cityhub_core::config::Settings;
use cityhub_testkit::invariants::{self, Tally};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::lab::Lab;
use super::shoppers::{self, paced, Pace, Record, Shoppers};
use super::Plan;
use crate::platform::{rss_mb, Platform};

/// One kind of hostile client (docs/OPERATIONS.md's threat model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Hostile {
    /// No hostile client: the reference.
    Quiet,
    /// Malformed code requests, code-less logins, code requests and wrong
    /// guesses at one shopper's phone, each from another address.
    LoginGriefer,
    /// Made-up methods (1,000 letters), paths and headers, oversized
    /// headers and bodies.
    Fuzzer,
    /// `GET /users/me` with tokens the platform never issued.
    TokenSprayer,
    /// Connections opened and never used, half of them after part of a
    /// request head (slow headers); each one closed is opened again.
    IdleConnections,
    /// Signed-in accounts, each from its own address, reading the lists of
    /// made-up user ids and made-up shop and voucher ids.
    Scraper,
}

impl Hostile {
    pub const EVERY: [Hostile; 6] = [
        Hostile::Quiet,
        Hostile::LoginGriefer,
        Hostile::Fuzzer,
        Hostile::TokenSprayer,
        Hostile::IdleConnections,
        Hostile::Scraper,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Hostile::Quiet => "quiet (no hostile client)",
            Hostile::LoginGriefer => "login griefer",
            Hostile::Fuzzer => "method, path and header fuzzer",
            Hostile::TokenSprayer => "token sprayer",
            Hostile::IdleConnections => "idle and slow connections",
            Hostile::Scraper => "scraper of made-up ids",
        }
    }
}

/// How hard the hostile clients push.
#[derive(Debug, Clone, clap::Args)]
pub struct HostilePlan {
    /// A hostile scenario to run (repeatable); none: every one.
    #[arg(long = "hostile-scenario", value_enum)]
    pub hostile_scenarios: Vec<Hostile>,
    /// Requests per second of each hostile client (not the idle connections).
    #[arg(long, default_value_t = 1000, value_parser = crate::positive::<u32>())]
    pub hostile_rate: u32,
    /// Distinct client addresses the login griefer, the token sprayer and
    /// the fuzzer send from.
    #[arg(long, default_value_t = 10_000, value_parser = crate::positive::<usize>())]
    pub hostile_addresses: usize,
    /// Connections the idle client holds open.
    #[arg(long, default_value_t = 2000, value_parser = crate::positive::<usize>())]
    pub idle_connections: usize,
    /// Accounts the scraper signs in with.
    #[arg(long, default_value_t = 200, value_parser = crate::positive::<usize>())]
    pub scraper_accounts: usize,
}

impl HostilePlan {
    pub fn scenarios(&self) -> Vec<Hostile> {
        if self.hostile_scenarios.is_empty() {
            Hostile::EVERY.to_vec()
        } else {
            self.hostile_scenarios.clone()
        }
    }
}

/// One scenario's line of the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostileRow {
    pub scenario: Hostile,
    /// Hostile requests (connections opened, for the idle client) and what they got.
    pub hostile_requests: usize,
    pub hostile_per_s: f64,
    pub hostile_answers: BTreeMap<String, usize>,
    pub honest_requests: usize,
    /// Honest requests answered by the sale (202, or 409 sold out / already bought).
    pub honest_served: usize,
    pub honest_answers: BTreeMap<String, usize>,
    pub honest_p99_ms: f64,
    /// The seckill route's p99 inside the API over the sale (the upper
    /// bound of its histogram bucket): what the API spent, without the
    /// load generator's and the network's share.
    #[serde(default)]
    pub api_p99_ms: f64,
    /// RSS 10 s into the sale and at its last answer.
    pub api_rss_mb: (f64, f64),
    pub worker_rss_mb: (f64, f64),
    /// MySQL statements per hostile request, hostile phase minus idle phase.
    pub mysql_per_request: Option<f64>,
    /// The API's metric series when the hostile client started, and after
    /// it ran alone (before the sale's own series appear).
    pub series: (usize, usize),
    /// Seconds from the targeted shopper's code request to their session.
    pub login_s: Option<f64>,
    /// The proof of work (zero bits) the targeted shopper's login paid.
    #[serde(default)]
    pub login_proof_bits: u32,
    pub tally: Tally,
}

/// The most metric series a hostile client may add: its own requests'
/// closed labels (`other`, `unmatched` and a few statuses of a few routes,
/// each a counter and a histogram of about 15 series), never its input
/// (1,000 made-up methods would add 15,000).
pub const SERIES_SLACK: usize = 200;
/// The most MySQL statements per hostile request.
pub const MYSQL_PER_REQUEST_MAX: f64 = 0.01;
/// How long the targeted shopper may take to log in.
pub const LOGIN_WITHIN: Duration = Duration::from_secs(60);
/// The most RSS may grow within the sale.
pub const RSS_GROWTH_MAX: f64 = 0.10;
/// Honest p99 at most this times the quiet run's.
pub const P99_FACTOR_MAX: f64 = 2.0;

impl HostileRow {
    /// Whether the row keeps every promise; `quiet_p99_ms` is the quiet run's
    /// of the same round, when there is one.
    pub fn pass(&self, quiet_p99_ms: Option<f64>) -> bool {
        let flat = |(start, end): (f64, f64)| start > 0.0 && end <= start * (1.0 + RSS_GROWTH_MAX);
        self.tally.clean()
            && self.tally.stored >= self.tally.accepted
            && self.login_s.is_some_and(|s| s <= LOGIN_WITHIN.as_secs_f64())
            && flat(self.api_rss_mb)
            && flat(self.worker_rss_mb)
            && self.mysql_per_request.is_none_or(|q| q <= MYSQL_PER_REQUEST_MAX)
            && self.series.1 <= self.series.0 + SERIES_SLACK
            && quiet_p99_ms.is_none_or(|q| self.honest_p99_ms <= q.max(1.0) * P99_FACTOR_MAX)
    }
}

/// A round: the rows of the scenarios run, with what they ran at.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostileRun {
    pub machine: String,
    pub plan: serde_json::Value,
    pub rows: Vec<HostileRow>,
}

impl HostileRun {
    pub fn quiet_p99_ms(&self) -> Option<f64> {
        self.rows.iter().find(|r| r.scenario == Hostile::Quiet).map(|r| r.honest_p99_ms)
    }

    pub fn pass(&self) -> bool {
        self.rows.iter().all(|r| r.pass(self.quiet_p99_ms()))
    }

    pub fn markdown(&self) -> String {
        let quiet = self.quiet_p99_ms();
        let mut md = format!(
            "## Hostile clients\n\n`cityhub chaos --hostile`: honest shoppers run a full-size sale (limits on, each \
             shopper from an address of their own through a trusted proxy) while one hostile client runs against \
             the same API, each scenario in a lab of its own. Machine: {}. Settings: `{}`.\n\n\
             | scenario | hostile requests (per s) | honest served | honest p99 ms | API's own p99 ms | API RSS MB | worker RSS MB | \
             MySQL per hostile request | metric series | targeted shopper logged in | accepted / stored / oversold / \
             lost | result |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            self.machine, self.plan
        );
        for r in &self.rows {
            let served = 100.0 * r.honest_served as f64 / r.honest_requests.max(1) as f64;
            let p99 = match quiet {
                Some(q) if r.scenario != Hostile::Quiet => {
                    format!("{:.1} ({:.2}x quiet)", r.honest_p99_ms, r.honest_p99_ms / q.max(1.0))
                }
                _ => format!("{:.1}", r.honest_p99_ms),
            };
            let mysql = r.mysql_per_request.map_or("-".to_owned(), |q| format!("{q:.4}"));
            let login = match (r.login_s, r.login_proof_bits) {
                (None, _) => "**no**".to_owned(),
                (Some(s), 0) => format!("yes, in {:.0} ms", s * 1000.0),
                (Some(s), bits) => format!("yes, in {:.0} ms with a proof of {bits} bits", s * 1000.0),
            };
            md.push_str(&format!(
                "| {} | {} ({:.0}/s) | {:.2}% of {} | {} | ≤ {} | {:.1} → {:.1} | {:.1} → {:.1} | {} | {} → {} | {} | {} / {} / {} / {} | {} |\n",
                r.scenario.name(),
                r.hostile_requests,
                r.hostile_per_s,
                served,
                r.honest_requests,
                p99,
                r.api_p99_ms,
                r.api_rss_mb.0,
                r.api_rss_mb.1,
                r.worker_rss_mb.0,
                r.worker_rss_mb.1,
                mysql,
                r.series.0,
                r.series.1,
                login,
                r.tally.accepted,
                r.tally.stored,
                r.tally.oversold,
                r.tally.lost,
                if r.pass(quiet) { "PASS" } else { "FAIL" },
            ));
        }
        md.push_str(&format!(
            "\n*honest served*: answered by the sale (202, or 409 sold out or already bought); *honest p99*: as the \
             shoppers' load generator saw it (the hostile client runs on a runtime and a thread of its own, as from \
             another machine: it shares the cores, not the shoppers' scheduler); *API's own p99*: the seckill route's inside the API over the sale (the \
             upper bound of its histogram bucket), without the load generator's and the kernel's share; *RSS*: 10 s into the \
             sale (every shopper seen once), then at its last answer; *MySQL per hostile request*: statements the \
             lab's MariaDB ran while the hostile client ran alone, less those of an idle phase as long, per hostile \
             request; *metric series*: on the API's `/metrics` when the hostile client started and after it ran \
             alone (the sale's own series come later); *targeted shopper*: the phone the login griefer aims at (in every scenario) asks for a code 5 s \
             into the sale and logs in with the code the API logged for it. PASS needs nothing lost, oversold or \
             stranded, the targeted shopper in within {} s, RSS growth at most {:.0}%, at most {} MySQL \
             statements per hostile request, at most {} new series, and honest p99 at most {}x the quiet run's.\n\n",
            LOGIN_WITHIN.as_secs(),
            RSS_GROWTH_MAX * 100.0,
            MYSQL_PER_REQUEST_MAX,
            SERIES_SLACK,
            P99_FACTOR_MAX,
        ));
        md.push_str("| scenario | hostile answers | honest answers |\n|---|---|---|\n");
        let join =
            |m: &BTreeMap<String, usize>| m.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
        for r in &self.rows {
            md.push_str(&format!(
                "| {} | {} | {} |\n",
                r.scenario.name(),
                join(&r.hostile_answers),
                join(&r.honest_answers)
            ));
        }
        md.push('\n');
        md
    }
}

/// Runs every chosen scenario, each in a lab of its own.
pub async fn run(base: &Settings, plan: &Plan, hostile: &HostilePlan) -> anyhow::Result<HostileRun> {
    let mut rows = Vec::new();
    for scenario in hostile.scenarios() {
        println!("  hostile: {} ...", scenario.name());
        let row = run_scenario(base, plan, hostile, scenario).await.with_context(|| scenario.name())?;
        println!(
            "    honest p99 {:.1} ms, served {}/{}, hostile {} at {:.0}/s, login {:?} s, MySQL/request {:?}, RSS API {:.1} -> {:.1} MB",
            row.honest_p99_ms,
            row.honest_served,
            row.honest_requests,
            row.hostile_requests,
            row.hostile_per_s,
            row.login_s,
            row.mysql_per_request,
            row.api_rss_mb.0,
            row.api_rss_mb.1
        );
        rows.push(row);
    }
    let plan = serde_json::json!({
        "users": plan.users, "requests": plan.requests, "stock": plan.stock, "rate": plan.rate,
        "concurrency": plan.concurrency, "hostile_rate": hostile.hostile_rate,
        "hostile_addresses": hostile.hostile_addresses, "idle_connections": hostile.idle_connections,
        "scraper_accounts": hostile.scraper_accounts,
    });
    Ok(HostileRun { machine: crate::platform::machine(), plan, rows })
}

/// How long the idle phase and the hostile client's phase alone last.
const PHASE: Duration = Duration::from_secs(5);
/// When the targeted shopper asks for a code, into the sale.
const LOGIN_AT: Duration = Duration::from_secs(5);
/// When RSS is first sampled, into the sale.
const RSS_AT: Duration = Duration::from_secs(10);

pub async fn run_scenario(
    base: &Settings,
    plan: &Plan,
    hostile: &HostilePlan,
    scenario: Hostile,
) -> anyhow::Result<HostileRow> {
    let dir = super::scratch("hostile");
    let lab = Lab::start(&dir).await.context("start the lab")?;
    let mut settings = super::lab_settings(&lab, base);
    settings.limits.enabled = true;
    settings.http.trusted_proxies = "127.0.0.1".into();
    settings.auth.log_codes = true;
    let platform = Platform::start(settings, &dir.join("logs")).await?;
    let result = Sale::prepare(&platform, plan, hostile).await;
    let result = match result {
        Ok(run) => run.run(&platform, plan, hostile, scenario).await,
        Err(err) => Err(err),
    };
    if result.is_err() {
        eprintln!("{}", platform.api.as_ref().map_or(String::new(), |p| p.log_tail(40)));
    }
    let _ = platform.stop().await;
    drop(lab);
    result
}

struct Sale {
    db: MySqlPool,
    kv: cityhub_platform::kv::Kv,
    voucher: cityhub_core::VoucherId,
    shoppers: Arc<Shoppers>,
    scraper: Vec<String>,
    victim: Phone,
    base: String,
    metrics: String,
}

impl Sale {
    async fn prepare(platform: &Platform, plan: &Plan, hostile: &HostilePlan) -> anyhow::Result<Self> {
        let settings = &platform.settings;
        let services = cityhub_core::Services::connect(settings).await?;
        let voucher = crate::flash_sale::create_voucher(settings, &plan.sale(platform.base())).await?;
        let auth = services.auth.clone();
        let users = crate::users::create(&auth, 0, plan.users).await?;
        let scraper = crate::users::create(&auth, 500_000, hostile.scraper_accounts).await?;
        Ok(Self {
            db: services.db.clone(),
            kv: services.kv.clone(),
            voucher,
            shoppers: Shoppers::proxied(users, auth),
            scraper: scraper.into_iter().map(|u| u.token).collect(),
            victim: crate::users::phones(900_000, 1).remove(0),
            base: platform.base(),
            metrics: format!("http://{}/metrics", settings.http.metrics_addr),
        })
    }

    async fn run(
        self,
        platform: &Platform,
        plan: &Plan,
        hostile: &HostilePlan,
        scenario: Hostile,
    ) -> anyhow::Result<HostileRow> {
        let pids = (platform.api.as_ref().map_or(0, |p| p.pid()), platform.worker.as_ref().map_or(0, |p| p.pid()));
        let client = Arc::new(Client::new(scenario, hostile, &self));
        let stop = CancellationToken::new();
        // The idle phase, then the hostile client alone.
        let (series, attack, mysql_per_request) = if scenario == Hostile::Quiet {
            let now = series(&self.metrics).await?;
            ((now, now), None, None)
        } else {
            let q0 = questions(&self.db).await?;
            tokio::time::sleep(PHASE).await;
            let q1 = questions(&self.db).await?;
            let series_start = series(&self.metrics).await?;
            let attack = apart(Arc::clone(&client), stop.clone());
            tokio::time::sleep(PHASE).await;
            let (q2, sent) = (questions(&self.db).await?, client.requests());
            let per = ((q2 - q1) as f64 - (q1 - q0) as f64).max(0.0) / sent.max(1) as f64;
            ((series_start, series(&self.metrics).await?), Some(attack), Some(per))
        };
        // The sale, the targeted shopper's login, and the RSS samples.
        let histogram_before = reqwest::get(&self.metrics).await?.text().await?;
        let sale_started = Instant::now();
        let url = format!("{}/vouchers/{}/seckill", self.base, self.voucher);
        self.shoppers.release_hold(0);
        let pace = Pace { requests: plan.requests, rate: plan.rate, concurrency: plan.concurrency };
        let stampede = tokio::spawn(Arc::clone(&self.shoppers).run(url, pace));
        let login = tokio::spawn(log_in(platform.log_path("api.log"), self.base.clone(), self.victim.clone()));
        tokio::time::sleep(RSS_AT).await;
        let rss_start = (rss_mb(pids.0, "VmRSS").unwrap_or(0.0), rss_mb(pids.1, "VmRSS").unwrap_or(0.0));
        stampede.await??;
        let rss_end = (rss_mb(pids.0, "VmRSS").unwrap_or(0.0), rss_mb(pids.1, "VmRSS").unwrap_or(0.0));
        let histogram_after = reqwest::get(&self.metrics).await?.text().await?;
        let sale_s = sale_started.elapsed().as_secs_f64();
        let (login_s, login_proof_bits) = login.await?.map_or((None, 0), |(s, bits)| (Some(s), bits));
        stop.cancel();
        if let Some(attack) = attack {
            tokio::task::spawn_blocking(move || attack.join())
                .await?
                .map_err(|_| anyhow::anyhow!("the hostile client panicked"))??;
        }
        let records = self.shoppers.records();
        let tally = self.drained(&records, Duration::from_secs(plan.recover_timeout_secs)).await?;
        let honest_answers = shoppers::count(&records);
        let served = records.iter().filter(|r| served(r)).count();
        let hostile_requests = client.requests();
        Ok(HostileRow {
            scenario,
            hostile_requests,
            hostile_per_s: hostile_requests as f64 / (sale_s + PHASE.as_secs_f64()),
            hostile_answers: client.answers(),
            honest_requests: records.len(),
            honest_served: served,
            honest_answers,
            honest_p99_ms: p99_ms(&records),
            api_p99_ms: seckill_p99_ms(&histogram_before, &histogram_after),
            api_rss_mb: (rss_start.0, rss_end.0),
            worker_rss_mb: (rss_start.1, rss_end.1),
            mysql_per_request,
            series,
            login_s,
            login_proof_bits,
            tally,
        })
    }

    /// The sale's tally once every 202 is stored and Redis agrees (or the timeout).
    async fn drained(&self, records: &[Record], timeout: Duration) -> anyhow::Result<Tally> {
        let (accepted, unanswered) = (super::accepted(records), super::unanswered(records));
        let started = Instant::now();
        loop {
            let tally = Tally::of(&accepted, &unanswered, &invariants::load(&self.db, &self.kv, self.voucher).await?);
            if (tally.clean() && tally.stored >= tally.accepted) || started.elapsed() > timeout {
                return Ok(tally);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Runs the hostile client on a runtime of its own, on a thread of its
/// own, as a client on another machine would: it shares the cores but not
/// the scheduler of the honest shoppers, whose tasks take the times the p99
/// is made of.
fn apart(client: Arc<Client>, stop: CancellationToken) -> std::thread::JoinHandle<anyhow::Result<()>> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(client.run(stop))
    })
}

/// Whether the sale answered the request (202, or 409 sold out / already bought).
fn served(r: &Record) -> bool {
    match &r.answer {
        shoppers::Answer::Accepted(_) => true,
        shoppers::Answer::Refused(409, code) => code == "sold_out" || code == "already_bought",
        _ => false,
    }
}

fn p99_ms(records: &[Record]) -> f64 {
    let mut took: Vec<Duration> = records.iter().map(|r| r.took).collect();
    took.sort();
    took.get((took.len() * 99 / 100).min(took.len().saturating_sub(1))).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// The seckill route's p99 in the API between two scrapes of its
/// `/metrics`: the upper bound (ms) of the first duration bucket that holds
/// 99% of the requests between them, every status together.
fn seckill_p99_ms(before: &str, after: &str) -> f64 {
    let buckets = |text: &str| {
        let mut by_le = std::collections::BTreeMap::<u64, f64>::new();
        let prefix = format!("{}_bucket{{", cityhub_platform::metrics::HTTP_DURATION);
        for line in text.lines().filter(|l| l.starts_with(&prefix) && l.contains("route=\"/vouchers/{id}/seckill\"")) {
            let le = line.split("le=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("+Inf");
            let le_us = le.parse::<f64>().map_or(u64::MAX, |s| (s * 1e6).round() as u64);
            let count: f64 = line.rsplit(' ').next().and_then(|c| c.parse().ok()).unwrap_or(0.0);
            *by_le.entry(le_us).or_insert(0.0) += count;
        }
        by_le
    };
    let (before, after) = (buckets(before), buckets(after));
    let cumulative: Vec<(u64, f64)> =
        after.iter().map(|(le, n)| (*le, n - before.get(le).copied().unwrap_or(0.0))).collect();
    let total = cumulative.last().map_or(0.0, |(_, n)| *n);
    cumulative.iter().find(|(_, n)| *n >= total * 0.99).map_or(0.0, |(le, _)| {
        if *le == u64::MAX {
            f64::INFINITY
        } else {
            *le as f64 / 1000.0
        }
    })
}

/// MariaDB's count of statements run (`Questions`).
async fn questions(db: &MySqlPool) -> anyhow::Result<i64> {
    let (_, value): (String, String) = sqlx::query_as("SHOW GLOBAL STATUS LIKE 'Questions'").fetch_one(db).await?;
    Ok(value.parse()?)
}

/// The metric series on the API's `/metrics`.
async fn series(url: &str) -> anyhow::Result<usize> {
    let text = reqwest::get(url).await?.text().await?;
    Ok(text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).count())
}

/// The targeted shopper: asks for a code from an address of their own, reads
/// the code the API logged for their phone, and logs in (with a proof of work
/// when asked). Tries again with a fresh challenge until [`LOGIN_WITHIN`].
/// Answers the seconds it took and the proof's bits.
async fn log_in(log: std::path::PathBuf, base: String, phone: Phone) -> anyhow::Result<(f64, u32)> {
    tokio::time::sleep(LOGIN_AT).await;
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
    let started = Instant::now();
    let post = |path: &str, body: serde_json::Value| {
        http.post(format!("{base}{path}")).header("x-forwarded-for", "192.168.77.7").json(&body).send()
    };
    while started.elapsed() < LOGIN_WITHIN {
        let asked = post("/auth/code", serde_json::json!({ "phone": phone.as_str() })).await?;
        let status = asked.status();
        let body: serde_json::Value = asked.json().await.unwrap_or_default();
        if status != 200 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        let challenge = body["challenge"].as_str().unwrap_or_default().to_owned();
        let Some(code) = logged_code(&log, phone.as_str()) else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let bits = body["proof_bits"].as_u64().unwrap_or(0) as u32;
        let mut login = serde_json::json!({ "phone": phone.as_str(), "code": code, "challenge": challenge });
        if bits > 0 {
            let c = challenge.clone();
            login["proof"] =
                tokio::task::spawn_blocking(move || cityhub_core::auth::guard::solve(&c, bits)).await?.into();
        }
        if post("/auth/login", login).await?.status() == 200 {
            return Ok((started.elapsed().as_secs_f64(), bits));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    anyhow::bail!("the targeted shopper did not log in within {LOGIN_WITHIN:?}")
}

/// The last login code the API logged for `phone` (`code=123456` or JSON).
fn logged_code(log: &std::path::Path, phone: &str) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().rev().filter(|l| l.contains("login code") && l.contains(phone)).find_map(|l| {
        let at = l.find("code=").map(|i| i + 5).or_else(|| l.find("\"code\":\"").map(|i| i + 8))?;
        let digits: String = l[at..].chars().filter(|c| *c != '"').take(6).collect();
        (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
    })
}

/// The hostile client of a scenario and what it got back.
struct Client {
    kind: Hostile,
    rate: u32,
    addresses: usize,
    idle: usize,
    base: String,
    victim: String,
    scraper: Vec<String>,
    /// The latest challenge the griefer got for the victim's phone.
    challenge: Mutex<String>,
    sent: AtomicUsize,
    answers: Mutex<BTreeMap<String, usize>>,
    http: reqwest::Client,
}

/// Requests a hostile client keeps in flight at most.
const HOSTILE_CONCURRENCY: usize = 200;

impl Client {
    fn new(kind: Hostile, plan: &HostilePlan, sale: &Sale) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(HOSTILE_CONCURRENCY)
            .build()
            .expect("an HTTP client");
        Self {
            kind,
            rate: plan.hostile_rate,
            addresses: plan.hostile_addresses,
            idle: plan.idle_connections,
            base: sale.base.clone(),
            victim: sale.victim.as_str().to_owned(),
            scraper: sale.scraper.clone(),
            challenge: Mutex::new(format!("{:032x}", rand::random::<u128>())),
            sent: AtomicUsize::new(0),
            answers: Mutex::new(BTreeMap::new()),
            http,
        }
    }

    fn requests(&self) -> usize {
        self.sent.load(Ordering::Relaxed)
    }

    fn answers(&self) -> BTreeMap<String, usize> {
        self.answers.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn count(&self, label: String) {
        *self.answers.lock().unwrap_or_else(|p| p.into_inner()).entry(label).or_insert(0) += 1;
    }

    /// Hostile client `i`'s address: 172.16.x.y, one of `addresses`.
    fn address(&self, i: usize) -> String {
        let n = (i % self.addresses) as u32 + 1;
        format!("172.{}.{}.{}", 16 + ((n >> 16) & 0x0f), (n >> 8) & 0xff, n & 0xff)
    }

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        match self.kind {
            Hostile::Quiet => Ok(()),
            Hostile::IdleConnections => self.hold_idle(stop).await,
            _ => {
                let this = Arc::clone(&self);
                paced(
                    self.rate,
                    HOSTILE_CONCURRENCY,
                    &stop,
                    |_| true,
                    move |i| {
                        let this = Arc::clone(&this);
                        this.sent.fetch_add(1, Ordering::Relaxed);
                        async move {
                            let label = match this.request(i).await {
                                Ok(response) => this.label(response).await,
                                Err(err) if err.is_connect() => "not connected".to_owned(),
                                Err(_) => "no answer".to_owned(),
                            };
                            this.count(label);
                        }
                    },
                )
                .await
            }
        }
    }

    async fn label(&self, response: reqwest::Response) -> String {
        let status = response.status().as_u16();
        if self.kind == Hostile::LoginGriefer && status == 200 {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            if let Some(challenge) = body["challenge"].as_str() {
                *self.challenge.lock().unwrap_or_else(|p| p.into_inner()) = challenge.to_owned();
            }
            return "200".to_owned();
        }
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        match body["code"].as_str() {
            Some(code) => format!("{status} {code}"),
            None => status.to_string(),
        }
    }

    fn request(&self, i: usize) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> {
        let from = self.address(i);
        let request = match self.kind {
            Hostile::LoginGriefer => self.griefer(i),
            Hostile::Fuzzer => self.fuzzer(i),
            Hostile::TokenSprayer => {
                let token = match i % 2 {
                    0 => format!("{:040x}{:040x}", rand::random::<u128>(), rand::random::<u128>()),
                    _ => random_text(i % 300 + 1),
                };
                self.http.get(format!("{}/users/me", self.base)).bearer_auth(token)
            }
            Hostile::Scraper => self.scraper(i),
            Hostile::Quiet | Hostile::IdleConnections => unreachable!("no requests"),
        };
        let request = match self.kind {
            // The scraper's accounts each keep to an address of their own.
            Hostile::Scraper => request.header("x-forwarded-for", format!("172.31.0.{}", i % self.scraper.len() + 1)),
            _ => request.header("x-forwarded-for", from),
        };
        request.send()
    }

    /// Malformed code requests, code-less logins, code requests, and three
    /// wrong guesses with the latest challenge, each from another address.
    fn griefer(&self, i: usize) -> reqwest::RequestBuilder {
        let (code, login) = (format!("{}/auth/code", self.base), format!("{}/auth/login", self.base));
        let phone = self.victim.as_str();
        match i % 6 {
            0 => self.http.post(code).json(&serde_json::json!({ "phone": phone, "x": 1 })),
            1 => self.http.post(login).json(&serde_json::json!({ "phone": phone })),
            2 => self.http.post(code).json(&serde_json::json!({ "phone": phone })),
            _ => {
                let challenge = self.challenge.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let guess = format!("{:06}", rand::random::<u32>() % 1_000_000);
                self.http
                    .post(login)
                    .json(&serde_json::json!({ "phone": phone, "code": guess, "challenge": challenge }))
            }
        }
    }

    /// Made-up methods, paths and headers; every tenth request an oversized
    /// head or body.
    fn fuzzer(&self, i: usize) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(random_letters(1000).as_bytes()).expect("letters make a method");
        let path = format!("{}/{}", self.base, random_text(200));
        let mut request = match i % 4 {
            0 => self.http.request(method, path),
            1 => self.http.get(path),
            2 => self.http.request(method, format!("{}/shops/1", self.base)),
            _ => self.http.post(format!("{}/notes", self.base)),
        };
        for _ in 0..5 {
            request = request.header(format!("x-{}", random_letters(20).to_lowercase()), random_letters(100));
        }
        match i % 10 {
            0 => request.header("x-oversized", "a".repeat(20_000)),
            5 => request.body(vec![b'{'; 256 << 10]),
            _ => request,
        }
    }

    /// Lists and common follows of made-up users, made-up shops and
    /// vouchers, round the accounts.
    fn scraper(&self, i: usize) -> reqwest::RequestBuilder {
        let token = &self.scraper[i % self.scraper.len()];
        let made_up = 9_000_000_000u64 + rand::random::<u32>() as u64;
        let path = match i % 5 {
            0 => format!("/users/{made_up}/followers?limit=100"),
            1 => format!("/users/{made_up}/followings?limit=100"),
            2 => format!("/shops/{made_up}"),
            3 => format!("/vouchers/{made_up}"),
            _ => format!("/users/{made_up}/common-follows?limit=100"),
        };
        self.http.get(format!("{}{path}", self.base)).bearer_auth(token)
    }

    /// Holds `idle` connections open until `stop`: half send part of a
    /// request head first. Each one the API closes is opened again (each
    /// opening counts as a request).
    async fn hold_idle(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        let addr = self.base.trim_start_matches("http://").to_owned();
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..self.idle {
            let (this, stop, addr) = (Arc::clone(&self), stop.clone(), addr.clone());
            tasks.spawn(async move {
                while !stop.is_cancelled() {
                    this.sent.fetch_add(1, Ordering::Relaxed);
                    let Ok(mut conn) = tokio::net::TcpStream::connect(&addr).await else {
                        this.count("not connected".into());
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    if n % 2 == 1 {
                        let _ = conn.write_all(b"GET /shops/1 HTTP/1.1\r\nHost: cityhub\r\nX-Slow: ").await;
                    }
                    let closed = tokio::select! {
                        _ = stop.cancelled() => false,
                        _ = until_closed(&mut conn) => true,
                    };
                    if closed {
                        this.count("closed by the API".into());
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            });
            // Open them at the hostile rate, not all in one instant.
            if n % 100 == 99 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }
}

/// Reads (and drops) whatever comes until the peer closes.
async fn until_closed(conn: &mut tokio::net::TcpStream) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = conn.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}

fn random_letters(n: usize) -> String {
    (0..n).map(|_| (b'A' + rand::random::<u8>() % 26) as char).collect()
}

/// URL-safe made-up text.
fn random_text(n: usize) -> String {
    const SAFE: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-._~/";
    (0..n).map(|_| SAFE[rand::random::<u8>() as usize % SAFE.len()] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seckill_p99_is_read_from_the_difference_of_two_scrapes() {
        let scrape = |fast: u32, slow: u32| {
            let line = |status: &str, le: &str, n: u32| {
                format!("cityhub_http_request_duration_seconds_bucket{{method=\"POST\",route=\"/vouchers/{{id}}/seckill\",status=\"{status}\",le=\"{le}\"}} {n}\n")
            };
            [line("202", "0.005", fast), line("202", "0.05", fast + slow), line("202", "+Inf", fast + slow)].concat()
        };
        // Before: 100 fast. After: 1,100 fast and 5 slow (p99 fast); then 50 slow (p99 slow).
        assert_eq!(seckill_p99_ms(&scrape(100, 0), &scrape(1100, 5)), 5.0);
        assert_eq!(seckill_p99_ms(&scrape(100, 0), &scrape(1100, 50)), 50.0);
    }

    #[test]
    fn a_logged_code_is_read_from_text_and_json_lines() {
        let dir = std::env::temp_dir().join(format!("cityhub-hostile-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("api.log");
        std::fs::write(
            &log,
            "x INFO login code (development: no SMS is sent) phone=17000900000 code=123456\n\
             {\"message\":\"login code (development: no SMS is sent)\",\"phone\":\"17000900000\",\"code\":\"654321\"}\n\
             x INFO login code (development: no SMS is sent) phone=17000900001 code=111111\n",
        )
        .unwrap();
        assert_eq!(logged_code(&log, "17000900000").as_deref(), Some("654321"));
        assert_eq!(logged_code(&log, "17000900001").as_deref(), Some("111111"));
        assert_eq!(logged_code(&log, "17000900002"), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
