//! `cityhub flash-sale`: a stampede at a running API, then the invariants.
//!
//! Creates a voucher (through the admin API) and users, fires `requests`
//! seckill requests with `concurrency` in flight (request i is user
//! i mod users), waits for the worker to drain, and checks the exact set of
//! 202 answers against MySQL and Redis with the shared checker
//! ([`cityhub_testkit::invariants`]).

use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::auth::Issued;
use cityhub_core::config::Settings;
use cityhub_core::{OrderId, ShopId, UserId, VoucherId};
use cityhub_testkit::invariants::{self, Accepted, Check, Scope};
use futures::StreamExt;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use sqlx::MySqlPool;

/// What to fire.
#[derive(Debug, Clone, clap::Args)]
pub struct Plan {
    /// API base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub api: String,
    /// Distinct shoppers.
    #[arg(long, default_value_t = 1000, value_parser = crate::positive::<usize>())]
    pub users: usize,
    /// Requests in all (request i is made by user i mod users).
    #[arg(long, default_value_t = 1000, value_parser = crate::positive::<usize>())]
    pub requests: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 50, value_parser = crate::positive::<usize>())]
    pub concurrency: usize,
    /// Units for sale.
    #[arg(long, default_value_t = 100, value_parser = crate::positive::<u32>())]
    pub stock: u32,
    /// Stock buckets the voucher is split into (a hot sale over several Redis masters).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub buckets: u16,
    /// Longest wait for the worker to store every accepted order, in seconds.
    #[arg(long, default_value_t = 120, value_parser = crate::positive::<u64>())]
    pub drain_timeout: u64,
    /// First phone number suffix of the generated users (vary it between runs for fresh users).
    #[arg(long, default_value_t = 0)]
    pub user_offset: u64,
    /// No progress bars (for scripts).
    #[arg(long)]
    pub quiet: bool,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub voucher_id: VoucherId,
    pub requests: usize,
    pub accepted: usize,
    pub sold_out: usize,
    pub already_bought: usize,
    pub errors: usize,
    pub seconds: f64,
    pub requests_per_second: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// From the first request to the last accepted order in MySQL.
    pub orders_per_second: f64,
    /// From the end of the stampede to the last order in MySQL.
    pub drain_seconds: f64,
    pub checks: Vec<Check>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }
}

enum Outcome {
    Accepted(OrderId),
    SoldOut,
    AlreadyBought,
    Error,
}

fn bar(quiet: bool, len: u64, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!("{what:>9} [{{bar:40}}] {{pos}}/{{len}} {{per_sec}} {{elapsed}}"))
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

/// Runs the reconciler once through the API (`POST /admin/reconcile/{id}`)
/// after the drain: it must find Redis and MySQL consistent.
async fn reconciler_verdict(settings: &Settings, plan: &Plan, voucher_id: VoucherId) -> anyhow::Result<Check> {
    let (status, report) = reconcile_now(settings, &plan.api, voucher_id).await?;
    let verdict = report["verdict"].as_str().unwrap_or("unknown").to_owned();
    let differences = report["differences"].as_array().map_or(0, Vec::len);
    Ok(Check {
        name: "reconciler verdict",
        pass: status.is_success() && verdict == "consistent",
        detail: format!("{verdict}, {differences} differences (HTTP {status})"),
    })
}

/// `POST /admin/reconcile/{voucher_id}` on `api` as the operator: the HTTP
/// status and the report.
pub async fn reconcile_now(
    settings: &Settings,
    api: &str,
    voucher_id: VoucherId,
) -> anyhow::Result<(reqwest::StatusCode, serde_json::Value)> {
    crate::operator::Api::connect(settings, api).await?.post_raw(&format!("/admin/reconcile/{voucher_id}")).await
}

/// What a stampede measured.
pub struct Stampede {
    /// Every 202: its order id and the user who asked.
    pub accepted: Vec<Accepted>,
    pub sold_out: usize,
    pub already_bought: usize,
    pub errors: usize,
    pub took: Duration,
    pub latency: Histogram<u64>,
}

/// Runs the whole plan against the API described by `settings`' database
/// and Redis: voucher, users, stampede, drain, invariants.
pub async fn run(settings: &Settings, plan: &Plan) -> anyhow::Result<Report> {
    let services = cityhub_core::Services::connect(settings).await?;
    let (db, kv) = (services.db.clone(), services.kv.clone());
    let voucher_id = create_voucher(settings, plan).await?;
    let users = crate::users::create(&services.auth, plan.user_offset, plan.users).await?;
    let s = stampede(plan, voucher_id, &users).await?;
    let drain = drain(&db, voucher_id, s.accepted.len(), Duration::from_secs(plan.drain_timeout), plan.quiet).await?;
    let mut checks = invariants::check(&s.accepted, &invariants::load(&db, &kv, voucher_id).await?, Scope::WholeSale);
    checks.push(reconciler_verdict(settings, plan, voucher_id).await?);
    let ms = |q: f64| s.latency.value_at_quantile(q) as f64 / 1000.0;
    Ok(Report {
        voucher_id,
        requests: plan.requests,
        accepted: s.accepted.len(),
        sold_out: s.sold_out,
        already_bought: s.already_bought,
        errors: s.errors,
        seconds: s.took.as_secs_f64(),
        requests_per_second: plan.requests as f64 / s.took.as_secs_f64(),
        p50_ms: ms(0.5),
        p90_ms: ms(0.9),
        p99_ms: ms(0.99),
        max_ms: s.latency.max() as f64 / 1000.0,
        orders_per_second: s.accepted.len() as f64 / (s.took + drain).as_secs_f64(),
        drain_seconds: drain.as_secs_f64(),
        checks,
    })
}

/// Fires `plan.requests` seckill requests at `voucher_id`, `plan.concurrency` at a time.
pub async fn stampede(plan: &Plan, voucher_id: VoucherId, users: &[Issued]) -> anyhow::Result<Stampede> {
    let http = reqwest::Client::builder().pool_max_idle_per_host(plan.concurrency).build()?;
    let progress = bar(plan.quiet, plan.requests as u64, "stampede");
    let url = format!("{}/vouchers/{voucher_id}/seckill", plan.api);
    let started = Instant::now();
    let mut s = Stampede {
        accepted: Vec::new(),
        sold_out: 0,
        already_bought: 0,
        errors: 0,
        took: Duration::ZERO,
        latency: Histogram::<u64>::new(3)?,
    };
    let mut outcomes = futures::stream::iter(0..plan.requests)
        .map(|i| fire(&http, &url, &users[i % users.len()]))
        .buffer_unordered(plan.concurrency);
    while let Some((user_id, outcome, took)) = outcomes.next().await {
        s.latency.record(took.as_micros().max(1) as u64)?;
        match outcome {
            Outcome::Accepted(order_id) => s.accepted.push(Accepted { order_id, user_id }),
            Outcome::SoldOut => s.sold_out += 1,
            Outcome::AlreadyBought => s.already_bought += 1,
            Outcome::Error => s.errors += 1,
        }
        progress.inc(1);
    }
    s.took = started.elapsed();
    progress.finish();
    Ok(s)
}

/// Waits until `expected` orders of `voucher_id` are in MySQL (or `timeout`); returns the wait.
pub async fn drain(
    db: &MySqlPool,
    voucher_id: VoucherId,
    expected: usize,
    timeout: Duration,
    quiet: bool,
) -> anyhow::Result<Duration> {
    let progress = bar(quiet, expected as u64, "drain");
    let started = Instant::now();
    loop {
        let stored = order_count(db, voucher_id).await? as u64;
        progress.set_position(stored);
        if stored >= expected as u64 || started.elapsed() > timeout {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    progress.finish();
    Ok(started.elapsed())
}

async fn fire(http: &reqwest::Client, url: &str, user: &Issued) -> (UserId, Outcome, Duration) {
    let started = Instant::now();
    let outcome = match http.post(url).bearer_auth(&user.token).send().await {
        Ok(r) if r.status() == 202 => match r.json::<serde_json::Value>().await {
            Ok(body) => {
                body["order_id"].as_str().and_then(|id| id.parse().ok()).map_or(Outcome::Error, Outcome::Accepted)
            }
            Err(_) => Outcome::Error,
        },
        Ok(r) if r.status() == 409 => match r.json::<serde_json::Value>().await {
            Ok(body) if body["code"] == "sold_out" => Outcome::SoldOut,
            Ok(body) if body["code"] == "already_bought" => Outcome::AlreadyBought,
            _ => Outcome::Error,
        },
        _ => Outcome::Error,
    };
    (user.session.user_id, outcome, started.elapsed())
}

/// Creates a shop and a seckill voucher of `plan.stock` units, on sale now, through the admin API.
pub async fn create_voucher(settings: &Settings, plan: &Plan) -> anyhow::Result<VoucherId> {
    let http = reqwest::Client::new();
    let admin = crate::admin::operator_token(settings, "flash-sale").await?;
    let r = http
        .post(format!("{}/admin/shops", plan.api))
        .bearer_auth(&admin)
        .json(&serde_json::json!({ "name": "flash-sale shop", "type_id": 1 }))
        .send()
        .await
        .context("create the shop")?;
    anyhow::ensure!(r.status().is_success(), "creating the shop answered {}", r.status());
    let shop: serde_json::Value = r.json().await?;
    let shop: ShopId = shop["id"].as_str().context("shop id")?.parse()?;
    let now = chrono::Utc::now();
    let body = serde_json::json!({
        "shop_id": shop, "title": "flash sale", "pay_value": 100, "actual_value": 1000, "stock": plan.stock,
        "buckets": plan.buckets,
        "begin_time": now - chrono::Duration::seconds(1), "end_time": now + chrono::Duration::hours(2),
    });
    let r = http
        .post(format!("{}/admin/vouchers", plan.api))
        .bearer_auth(&admin)
        .json(&body)
        .send()
        .await
        .context("reach the API")?;
    anyhow::ensure!(r.status() == 201, "voucher creation answered {}: {}", r.status(), r.text().await?);
    let created: serde_json::Value = r.json().await?;
    created["id"].as_str().and_then(|id| id.parse().ok()).context("voucher id")
}

pub async fn order_count(db: &MySqlPool, voucher_id: VoucherId) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE voucher_id = ?").bind(voucher_id).fetch_one(db).await?)
}

/// The report as a table.
pub fn print(r: &Report) {
    println!();
    println!("  voucher            {}", r.voucher_id);
    println!("  requests           {}", r.requests);
    println!("  accepted           {}", r.accepted);
    println!("  sold out           {}", r.sold_out);
    println!("  already bought     {}", r.already_bought);
    println!("  errors             {}", r.errors);
    println!("  requests/s         {:.0}", r.requests_per_second);
    println!("  latency ms         p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}", r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms);
    println!("  drain              {:.2} s", r.drain_seconds);
    println!("  orders/s           {:.0} (first request to last order in MySQL)", r.orders_per_second);
    println!();
    for c in &r.checks {
        println!("  {:<4} {:<28} {}", if c.pass { "PASS" } else { "FAIL" }, c.name, c.detail);
    }
}
