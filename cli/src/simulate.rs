//! `cityhub simulate-buckets`: a hot voucher's sale split over 1, 4 and 16
//! stock buckets, run with the real scripts on the configured Redis (a
//! cluster when `redis.cluster_nodes` is set), to show what a split costs
//! and that it never oversells.
//!
//! Each split sells the same stock to more shoppers than units, all at
//! once, through the walk the API takes ([`walk::reserve`]). Then a part
//! of the orders is released into its buckets (as unpaid orders closed
//! mid-sale are; their shoppers do not come back) and every shopper who was
//! told sold out tries once more: the worst case for the walk's "passed"
//! marks, since each of them passed every bucket but their last. What it counts, per split: units sold in
//! each round, units left unsold at the end while shoppers were refused,
//! and the script calls a request took. What it checks: no bucket holds
//! more buyers than its share, no shopper holds two units, and each
//! bucket's stock plus live buyers is its share.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::seckill::scripts::{self, BuyerEntry, GiveBack, PASSED};
use cityhub_core::seckill::{walk, Outcome};
use cityhub_core::vouchers::buckets;
use cityhub_core::{OrderId, Sale, UserId, VoucherId};
use futures::StreamExt;
use rand::seq::SliceRandom;
use redis::AsyncCommands;
use serde::Serialize;

/// What to simulate.
#[derive(Debug, Clone, clap::Args)]
pub struct Plan {
    /// The splits to compare, comma-separated bucket counts.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub buckets: Vec<u16>,
    /// Units of the voucher.
    #[arg(long, default_value_t = 2_000, value_parser = crate::positive::<u32>())]
    pub stock: u32,
    /// Shoppers, each trying once at the start (more than the units).
    #[arg(long, default_value_t = 6_000, value_parser = crate::positive::<u32>())]
    pub shoppers: u32,
    /// Percent of the orders released mid-sale, then offered again to the
    /// shoppers who were told sold out.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub release_percent: u32,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 64, value_parser = crate::positive::<usize>())]
    pub concurrency: usize,
}

/// One split's run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub buckets: u16,
    pub stock: i64,
    pub shoppers: u32,
    pub sold_first: u64,
    pub released: u64,
    pub retried: u64,
    pub sold_again: u64,
    /// Units in some bucket at the end while a retrying shopper was told sold out.
    pub unsold: i64,
    /// Script calls a request that bought took, on average and at most (a
    /// request told sold out took one per bucket).
    pub calls_mean: f64,
    pub calls_max: u64,
    pub requests_per_sec: f64,
    /// Live buyers over the stock (must be 0).
    pub oversold: i64,
    /// Shoppers holding units in two buckets (must be 0).
    pub double_holders: u64,
    /// Buckets whose stock plus live buyers is not their share (must be 0).
    pub buckets_off: u64,
}

impl Run {
    pub fn pass(&self) -> bool {
        self.oversold == 0 && self.double_holders == 0 && self.buckets_off == 0
    }
}

/// Runs every split of `plan` on `kv` (under its key prefix), each on a
/// voucher id of its own, deleting the keys after.
pub async fn run(kv: &Kv, plan: &Plan) -> anyhow::Result<Vec<Run>> {
    let mut runs = Vec::new();
    for &n in &plan.buckets {
        anyhow::ensure!((1..=buckets::MAX).contains(&n) && u32::from(n) <= plan.stock, "{n} buckets");
        let voucher = VoucherId((1 << 40) + u64::from(rand::random::<u32>()));
        let run = split(kv, plan, voucher, n).await;
        for sale in buckets::sales(voucher, n) {
            let keys = [
                kv.keys.seckill_voucher(sale),
                kv.keys.seckill_buyers(sale),
                kv.keys.seckill_released(sale),
                kv.keys.seckill_revoked(sale),
            ];
            for key in keys {
                let _: Result<(), _> = kv.conn().del(key).await;
            }
        }
        runs.push(run?);
    }
    Ok(runs)
}

async fn split(kv: &Kv, plan: &Plan, voucher: VoucherId, n: u16) -> anyhow::Result<Run> {
    let stock = i64::from(plan.stock);
    let now = cityhub_platform::now_ms() as i64;
    for sale in buckets::sales(voucher, n) {
        buckets::preload(kv, sale, buckets::share(stock, n, sale.bucket), (now - 1_000, now + 3_600_000), 1).await?;
    }
    let ids = AtomicU64::new(1);
    let mut shoppers: Vec<UserId> = (1..=u64::from(plan.shoppers)).map(UserId).collect();
    shoppers.shuffle(&mut rand::rng());

    let started = Instant::now();
    let first = round(kv, voucher, n, &shoppers, &ids, plan.concurrency).await?;
    let mut sold: Vec<(UserId, Sale, OrderId)> = first.iter().filter_map(|a| a.sold).collect();
    sold.shuffle(&mut rand::rng());
    let released = sold.len() * plan.release_percent as usize / 100;
    for (i, (user, sale, order)) in sold.iter().take(released).enumerate() {
        let given = scripts::give_back(kv, &format!("sim:{i}"), *sale, *user, *order).await?;
        anyhow::ensure!(given == GiveBack::Released, "release of {order}: {given:?}");
    }
    let bought: std::collections::HashSet<UserId> = sold.iter().map(|(u, _, _)| *u).collect();
    let retrying: Vec<UserId> = shoppers.iter().copied().filter(|u| !bought.contains(u)).collect();
    let second = round(kv, voucher, n, &retrying, &ids, plan.concurrency).await?;
    let elapsed = started.elapsed().as_secs_f64().max(1e-3);

    let (left, live_per_bucket, double_holders, buckets_off) = audit(kv, voucher, n, stock).await?;
    let all = first.iter().chain(&second);
    let requests = all.clone().count();
    let calls: Vec<u64> = all.filter(|a| a.sold.is_some()).map(|a| a.calls).collect();
    let refused_at_end = second.iter().any(|a| a.sold.is_none());
    Ok(Run {
        buckets: n,
        stock,
        shoppers: plan.shoppers,
        sold_first: first.iter().filter(|a| a.sold.is_some()).count() as u64,
        released: released as u64,
        retried: retrying.len() as u64,
        sold_again: second.iter().filter(|a| a.sold.is_some()).count() as u64,
        unsold: if refused_at_end { left } else { 0 },
        calls_mean: calls.iter().sum::<u64>() as f64 / calls.len().max(1) as f64,
        calls_max: calls.iter().copied().max().unwrap_or(0),
        requests_per_sec: requests as f64 / elapsed,
        oversold: (live_per_bucket - stock).max(0),
        double_holders,
        buckets_off,
    })
}

/// One shopper's attempt: the unit won (user, bucket, order) and the
/// script calls it took.
struct Attempt {
    sold: Option<(UserId, Sale, OrderId)>,
    calls: u64,
}

/// Every shopper of `shoppers` tries once, `concurrency` at a time.
async fn round(
    kv: &Kv,
    voucher: VoucherId,
    n: u16,
    shoppers: &[UserId],
    ids: &AtomicU64,
    concurrency: usize,
) -> anyhow::Result<Vec<Attempt>> {
    futures::stream::iter(shoppers)
        .map(|&user| async move {
            let order = OrderId(ids.fetch_add(1, Ordering::Relaxed));
            let walked = walk::reserve(kv, voucher, n, user, order, &[]).await.map_err(|(_, err)| err)?;
            let (sale, outcome) = (walked.sale, walked.outcome);
            let calls = buckets::walk(user, n).position(|b| b == sale.bucket).unwrap_or(0) as u64 + 1;
            anyhow::ensure!(
                matches!(outcome, Outcome::Accepted | Outcome::SoldOut | Outcome::AlreadyBought),
                "{user}: {outcome:?}"
            );
            Ok(Attempt { sold: (outcome == Outcome::Accepted).then_some((user, sale, order)), calls })
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<anyhow::Result<Attempt>>>()
        .await
        .into_iter()
        .collect()
}

/// Units left over every bucket, live buyers over every bucket, shoppers
/// live in two buckets, and buckets whose stock plus live buyers is off
/// their share.
async fn audit(kv: &Kv, voucher: VoucherId, n: u16, stock: i64) -> anyhow::Result<(i64, i64, u64, u64)> {
    let (mut left, mut live, mut off) = (0, 0, 0);
    let mut holders: HashMap<UserId, u32> = HashMap::new();
    for sale in buckets::sales(voucher, n) {
        let units: i64 = kv.conn().hget(kv.keys.seckill_voucher(sale), "stock").await?;
        let entries: HashMap<UserId, String> = kv.conn().hgetall(kv.keys.seckill_buyers(sale)).await?;
        let mut here = 0;
        for (user, raw) in entries.iter().filter(|(_, e)| *e != PASSED) {
            let entry = BuyerEntry::parse(raw).ok_or_else(|| anyhow::anyhow!("entry {raw:?}"))?;
            if entry.live_order().is_some() {
                here += 1;
                *holders.entry(*user).or_default() += 1;
            }
        }
        off += u64::from(units + here != buckets::share(stock, n, sale.bucket));
        (left, live) = (left + units, live + here);
    }
    Ok((left, live, holders.values().filter(|&&c| c > 1).count() as u64, off))
}

/// The runs as a Markdown table.
pub fn markdown(runs: &[Run]) -> String {
    let mut out = String::from(
        "| buckets | stock | shoppers | sold at once | released | retried | sold again | unsold at the end \
         | script calls a purchase (mean, max) | requests/s | oversold | two units | buckets off |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n",
    );
    for r in runs {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2}, {} | {:.0} | {} | {} | {} |\n",
            r.buckets,
            r.stock,
            r.shoppers,
            r.sold_first,
            r.released,
            r.retried,
            r.sold_again,
            r.unsold,
            r.calls_mean,
            r.calls_max,
            r.requests_per_sec,
            r.oversold,
            r.double_holders,
            r.buckets_off
        ));
    }
    out
}
