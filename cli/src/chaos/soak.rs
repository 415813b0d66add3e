//! `cityhub chaos --soak MINUTES`: a steady accepted-path load for that
//! long, in a lab of its own. Every minute a new voucher goes on sale with
//! as much stock as a minute of requests, each request by a different
//! shopper, so nearly every request is a 202 that travels the whole path.
//! Payment times out after a minute, so the close job and the stock-release
//! events of the shared outbox run all along. Every 10 s it samples the
//! API's and the worker's RSS and the outbox backlog (events not yet
//! published); at the end every voucher's sale is counted with the shared
//! checker.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cityhub_core::config::Settings;
use cityhub_core::orders::OrderStatus;
use cityhub_testkit::invariants::{self, Tally};
use serde::{Deserialize, Serialize};

use super::lab::Lab;
use super::shoppers::{self, Pace, Shoppers};
use crate::platform::{rss_mb, Platform};

/// One sample.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub at_s: f64,
    pub api_rss_mb: f64,
    pub worker_rss_mb: f64,
    /// Outbox events not yet published.
    pub backlog: i64,
}

/// What a soak measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Soak {
    pub machine: String,
    pub minutes: u64,
    pub rate: u32,
    pub vouchers: usize,
    pub requests: usize,
    pub answers: BTreeMap<String, usize>,
    pub accepted: usize,
    pub stored: usize,
    /// Orders closed unpaid by the close job (their stock released through the outbox).
    pub closed: i64,
    pub lost: usize,
    pub oversold: i64,
    pub samples: Vec<Sample>,
}

/// From this far into the soak, RSS must stay within [`RSS_GROWTH_MAX`].
const SETTLED_S: f64 = 300.0;
/// How much RSS may grow from `SETTLED_S` to the end.
pub const RSS_GROWTH_MAX: f64 = 0.10;

impl Soak {
    /// Lost nothing, oversold nothing, and (for a soak that outlasts
    /// `SETTLED_S`) neither process's RSS grew by more than
    /// [`RSS_GROWTH_MAX`] after it.
    pub fn pass(&self) -> bool {
        let flat = |f: fn(&Sample) -> f64| self.growth(f).is_none_or(|g| g <= RSS_GROWTH_MAX);
        self.lost == 0
            && self.oversold == 0
            && self.stored >= self.accepted
            && flat(|s| s.api_rss_mb)
            && flat(|s| s.worker_rss_mb)
    }

    /// The growth of `f` from the first sample at `SETTLED_S` to the last
    /// (0.1 is 10%); `None` for a soak too short to have one.
    pub fn growth(&self, f: fn(&Sample) -> f64) -> Option<f64> {
        let settled = self.samples.iter().find(|s| s.at_s >= SETTLED_S)?;
        let last = self.samples.last()?;
        (last.at_s > settled.at_s && f(settled) > 0.0).then(|| f(last) / f(settled) - 1.0)
    }

    fn extremes(&self, f: impl Fn(&Sample) -> f64) -> (f64, f64, f64) {
        let first = self.samples.first().map_or(0.0, &f);
        let last = self.samples.last().map_or(0.0, &f);
        let max = self.samples.iter().map(&f).fold(0.0, f64::max);
        (first, last, max)
    }

    pub fn markdown(&self) -> String {
        let (api0, api1, api_max) = self.extremes(|s| s.api_rss_mb);
        let (w0, w1, w_max) = self.extremes(|s| s.worker_rss_mb);
        let (_, backlog_end, backlog_max) = self.extremes(|s| s.backlog as f64);
        let answers: Vec<String> = self.answers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let mut md = format!(
            "## Soak\n\n`cityhub chaos --soak {}`: {} requests/s on the accepted path for {} minutes, a new voucher \
             every minute ({} vouchers), unpaid orders closed after 60 s. Machine: {}.\n\n\
             | measure | start | end | max |\n|---|---|---|---|\n\
             | API RSS MB | {api0:.1} | {api1:.1} | {api_max:.1} |\n\
             | worker RSS MB | {w0:.1} | {w1:.1} | {w_max:.1} |\n\
             | outbox backlog (unpublished events) | - | {backlog_end:.0} | {backlog_max:.0} |\n\n\
             Requests {}, answers {}; accepted {}, stored {}, closed unpaid {}, lost {}, oversold {}: **{}**.\n\n",
            self.minutes,
            self.rate,
            self.minutes,
            self.vouchers,
            self.machine,
            self.requests,
            answers.join(", "),
            self.accepted,
            self.stored,
            self.closed,
            self.lost,
            self.oversold,
            if self.pass() { "PASS" } else { "FAIL" },
        );
        let growth = |f: fn(&Sample) -> f64| self.growth(f).map_or("n/a".to_owned(), |g| format!("{:+.1}%", g * 100.0));
        md.push_str(&format!(
            "RSS growth from {SETTLED_S:.0} s to the end (goal: at most {:.0}%): API {}, worker {}.\n\n",
            RSS_GROWTH_MAX * 100.0,
            growth(|s| s.api_rss_mb),
            growth(|s| s.worker_rss_mb),
        ));
        md.push_str("| t s | API RSS MB | worker RSS MB | backlog |\n|---|---|---|---|\n");
        for s in &self.samples {
            md.push_str(&format!("| {:.0} | {:.1} | {:.1} | {} |\n", s.at_s, s.api_rss_mb, s.worker_rss_mb, s.backlog));
        }
        md.push('\n');
        md
    }
}

/// Runs the soak for `minutes` at `rate` accepted requests a second.
pub async fn run(base: &Settings, minutes: u64, rate: u32) -> anyhow::Result<Soak> {
    let dir = super::scratch("soak");
    let lab = Lab::start(&dir).await?;
    let mut settings = super::lab_settings(&lab, base);
    settings.orders.payment_timeout_secs = Duration::from_secs(60);
    settings.orders.close_cron = "*/10 * * * * *".into();
    let platform = Platform::start(settings.clone(), &dir.join("logs")).await?;
    let result = soak(&settings, &platform, minutes, rate).await;
    platform.stop().await?;
    drop(lab);
    result
}

async fn soak(settings: &Settings, platform: &Platform, minutes: u64, rate: u32) -> anyhow::Result<Soak> {
    let services = cityhub_core::Services::connect(settings).await?;
    let (db, kv) = (services.db.clone(), services.kv.clone());
    let per_minute = rate as usize * 60;
    let auth = services.auth.clone();
    let users = crate::users::create(&auth, 0, per_minute).await?;
    let pids = (platform.api.as_ref().map_or(0, |p| p.pid()), platform.worker.as_ref().map_or(0, |p| p.pid()));
    let samples = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let sampler = {
        let (db, samples) = (db.clone(), Arc::clone(&samples));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(10));
            loop {
                tick.tick().await;
                let backlog: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM outbox WHERE published_at IS NULL")
                    .fetch_one(&db)
                    .await
                    .unwrap_or(-1);
                let sample = Sample {
                    at_s: started.elapsed().as_secs_f64(),
                    api_rss_mb: rss_mb(pids.0, "VmRSS").unwrap_or(0.0),
                    worker_rss_mb: rss_mb(pids.1, "VmRSS").unwrap_or(0.0),
                    backlog,
                };
                samples.lock().unwrap_or_else(|p| p.into_inner()).push(sample);
            }
        })
    };
    let plan = crate::flash_sale::Plan {
        api: platform.base(),
        users: per_minute,
        requests: per_minute,
        concurrency: 100,
        stock: per_minute as u32,
        buckets: 1,
        drain_timeout: 60,
        user_offset: 0,
        quiet: true,
    };
    let (mut sales, mut records) = (Vec::new(), Vec::new());
    for _ in 0..minutes {
        let voucher = crate::flash_sale::create_voucher(settings, &plan).await?;
        let shoppers = Shoppers::new(users.clone(), auth.clone());
        shoppers.release_hold(0);
        let url = format!("{}/vouchers/{voucher}/seckill", platform.base());
        Arc::clone(&shoppers).run(url, Pace { requests: per_minute, rate, concurrency: 100 }).await?;
        let answered = shoppers.records();
        sales.push((voucher, super::accepted(&answered)));
        records.extend(answered);
    }
    // One last sample once the drain is over.
    tokio::time::sleep(Duration::from_secs(10)).await;
    sampler.abort();
    let unanswered = super::unanswered(&records);
    let (mut accepted, mut stored, mut lost, mut oversold) = (0, 0, 0, 0);
    for (voucher, mine) in &sales {
        let t = Tally::of(mine, &unanswered, &invariants::load(&db, &kv, *voucher).await?);
        accepted += t.accepted;
        stored += t.stored;
        lost += t.lost;
        oversold = oversold.max(t.oversold);
    }
    let closed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE status = ?")
        .bind(OrderStatus::Closed.as_str())
        .fetch_one(&db)
        .await?;
    let samples = samples.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(Soak {
        machine: crate::platform::machine(),
        minutes,
        rate,
        vouchers: sales.len(),
        requests: records.len(),
        answers: shoppers::count(&records),
        accepted,
        stored,
        closed,
        lost,
        oversold,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soak(api: &[(f64, f64)]) -> Soak {
        Soak {
            machine: String::new(),
            minutes: 10,
            rate: 1,
            vouchers: 1,
            requests: 1,
            answers: BTreeMap::new(),
            accepted: 1,
            stored: 1,
            closed: 0,
            lost: 0,
            oversold: 0,
            samples: api
                .iter()
                .map(|&(at_s, mb)| Sample { at_s, api_rss_mb: mb, worker_rss_mb: 50.0, backlog: 0 })
                .collect(),
        }
    }

    #[test]
    fn rss_growth_counts_from_the_fifth_minute_and_fails_past_ten_percent() {
        // Early growth (warm-up) does not count; later growth does.
        let flat = soak(&[(10.0, 20.0), (300.0, 40.0), (600.0, 43.0)]);
        assert!((flat.growth(|s| s.api_rss_mb).unwrap() - 0.075).abs() < 1e-9);
        assert!(flat.pass());
        let leaking = soak(&[(10.0, 20.0), (300.0, 40.0), (600.0, 45.0)]);
        assert!(!leaking.pass());
        let short = soak(&[(10.0, 20.0), (290.0, 60.0)]);
        assert_eq!(short.growth(|s| s.api_rss_mb), None);
        assert!(short.pass());
    }
}
