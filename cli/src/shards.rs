//! `cityhub measure-shards`: what the queries that grow with users cost on
//! one shard, when the orders and follows tables are split by user id over
//! `--shards` MySQL shards (`docs/SCALING.md`).
//!
//! It fills a scratch database on the configured MySQL with one shard's
//! part of `--orders` orders (users and vouchers spread evenly) and of the
//! follows, then times the project's own functions on it, one call at a
//! time: the time a query takes on the shard that holds its rows. How many
//! shards each query touches follows from its key; a query that touches
//! every shard costs the slowest shard's answer when sent in parallel, and
//! the sum of all of them in shard work. The scratch database and keys are
//! dropped at the end.

use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::orders::{self, store};
use cityhub_core::seckill::OrderMessage;
use cityhub_core::{OrderId, Sale, Services, UserId};
use cityhub_testkit::fakes::Fakes;
use serde::Serialize;

/// What to measure.
#[derive(Debug, Clone, clap::Args)]
pub struct Plan {
    /// Orders of the whole platform.
    #[arg(long, default_value_t = 50_000_000, value_parser = crate::positive::<u64>())]
    pub orders: u64,
    /// Users of the whole platform.
    #[arg(long, default_value_t = 10_000_000, value_parser = crate::positive::<u64>())]
    pub users: u64,
    /// Follows per user.
    #[arg(long, default_value_t = 20, value_parser = crate::positive::<u64>())]
    pub follows: u64,
    /// Shards the tables are split into by user id.
    #[arg(long, default_value_t = 256, value_parser = crate::positive::<u64>())]
    pub shards: u64,
    /// Calls timed per query.
    #[arg(long, default_value_t = 200, value_parser = crate::positive::<usize>())]
    pub samples: usize,
}

/// One query's cost on its shard.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    pub query: &'static str,
    pub code: &'static str,
    pub mean_ms: f64,
    pub p99_ms: f64,
    /// Shards it touches when split by user id (at most all), or every one (0).
    pub shards: u64,
}

/// The measured costs, and the shard's size.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The scratch database (dropped).
    pub database: String,
    pub shard_orders: u64,
    pub shard_users: u64,
    pub shard_follows: u64,
    pub costs: Vec<Cost>,
}

/// Vouchers the orders are spread over.
const VOUCHERS: u64 = 500;
/// Orders of one worker batch.
const BATCH: u64 = 128;
/// Orders stored per seeding batch (the worker's own writer).
const SEED_BATCH: usize = 2_000;

pub async fn run(base: &Settings, plan: &Plan) -> anyhow::Result<Report> {
    anyhow::ensure!(plan.shards > 0 && plan.samples > 0, "--shards and --samples must be positive");
    let id = format!("{:08x}", rand::random::<u32>());
    let mut settings = base.clone();
    let url = settings.database.url.expose().to_owned();
    let server = url.rsplit_once('/').map_or(url.as_str(), |(server, _)| server);
    let db_name = format!("cityhub_shard_{id}");
    settings.database.url = cityhub_platform::config::Secret::new(format!("{server}/{db_name}"));
    settings.database.migrate = true;
    settings.redis.key_prefix = format!("shard{id}:");
    let services = Services::connect(&settings).await.context("create the scratch database")?;
    let report = measure(&services, plan).await;
    let _ = sqlx::query(&format!("DROP DATABASE `{db_name}`")).execute(&services.db).await;
    Ok(Report { database: db_name, ..report? })
}

async fn measure(services: &Services, plan: &Plan) -> anyhow::Result<Report> {
    let (db, kv) = (&services.db, &services.kv);
    let shard_orders = (plan.orders / plan.shards).max(1);
    let shard_users = (plan.users / plan.shards).max(2);
    let shard_follows = shard_users * plan.follows;
    eprintln!("filling one shard: {shard_orders} orders, {shard_users} users, {shard_follows} follows");

    let shop = services.shop("shard").await;
    let mut vouchers = Vec::new();
    for _ in 0..VOUCHERS {
        vouchers.push(services.voucher().stock(10_000_000).at_shop(shop).create().await);
    }
    let message = |n: u64| OrderMessage {
        order_id: OrderId((1 << 40) + n),
        user_id: UserId(1 + n % shard_users),
        // One order per user and voucher: pair n is (n mod users, n / users).
        voucher_id: vouchers[((n / shard_users) % VOUCHERS) as usize],
        bucket: 0,
        pay_amount: 100,
        created_at_ms: cityhub_platform::now_ms() - 86_400_000,
        request_id: None,
    };
    let all: Vec<u64> = (0..shard_orders).collect();
    for chunk in all.chunks(SEED_BATCH) {
        let batch: Vec<OrderMessage> = chunk.iter().map(|&n| message(n)).collect();
        store::store_batch(db, &batch).await?;
    }
    // Orders of a past day: most paid or closed, a tenth unpaid past the timeout.
    sqlx::query(
        "UPDATE orders SET stored_at = created_at, \
         status = IF(id % 10 < 7, 'paid', IF(id % 10 < 9, 'closed', 'unpaid'))",
    )
    .execute(db)
    .await?;
    seed_social(db, shard_users, plan.follows).await?;

    let window = services.lifecycle.window();
    let pick = |i: usize| 1 + (i as u64 * 7_919) % shard_users;
    let mut costs = Vec::new();
    costs.push(
        time("a shopper's orders, newest page", "orders::list_for_user", 1, plan.samples, |i| async move {
            orders::list_for_user(db, window, UserId(pick(i)), None, 20).await.map(drop)
        })
        .await?,
    );
    costs.push(
        time("one order by id (routed by the id)", "orders::find_for_user", 1, plan.samples, |i| {
            let m = message((i as u64 * 104_729) % shard_orders);
            async move { orders::find_for_user(db, kv, window, m.order_id, m.user_id).await.map(drop) }
        })
        .await?,
    );
    // A batch's 128 orders come from 128 shoppers: under a split by user id
    // each shard gets about one of them.
    let mut next = shard_orders;
    costs.push(
        time(
            "a worker batch of 128 orders: its row on one shard",
            "orders::store::store_batch",
            BATCH,
            plan.samples,
            |_| {
                let batch = [message(next)];
                next += 1;
                async move { store::store_batch(db, &batch).await.map(drop).map_err(anyhow::Error::from) }
            },
        )
        .await?,
    );
    costs.push(
        time("the close job's unpaid orders past the timeout", "Lifecycle::expired", 0, plan.samples, |_| async {
            services.lifecycle.expired(100).await.map(drop)
        })
        .await?,
    );
    // Each voucher's slot verifies its generation mark on first use: not timed.
    for &voucher in &vouchers {
        cityhub_core::reconcile::snapshot::load(db, kv, Sale::from(voucher), Default::default()).await?;
    }
    costs.push(
        time("the reconciler's reading of one voucher", "reconcile::snapshot::load", 0, plan.samples, |i| {
            let sale = Sale::from(vouchers[i % vouchers.len()]);
            async move { cityhub_core::reconcile::snapshot::load(db, kv, sale, Default::default()).await.map(drop) }
        })
        .await?,
    );
    let social = &services.social;
    costs.push(
        time(
            "a follow (the row, its event, the blocks both ways)",
            "Social::follow",
            2,
            plan.samples,
            |i| async move {
                let me = UserId(pick(i));
                let them = UserId(1 + (me.get() + 1 + i as u64 % 1_000) % shard_users);
                social.follow(me, them).await.map(drop)
            },
        )
        .await?,
    );
    Ok(Report { database: String::new(), shard_orders, shard_users, shard_follows, costs })
}

/// Users and their follows, straight into the tables (the follows' events
/// and projections are not what is measured).
async fn seed_social(db: &sqlx::MySqlPool, users: u64, follows: u64) -> anyhow::Result<()> {
    for start in (1..=users).step_by(5_000) {
        let end = (start + 5_000).min(users + 1);
        let mut q = sqlx::QueryBuilder::<sqlx::MySql>::new("INSERT INTO users (id, phone) ");
        q.push_values(start..end, |mut row, id| {
            row.push_bind(id).push_bind(format!("1{id:010}"));
        });
        q.build().execute(db).await?;
        let pairs: Vec<(u64, u64)> =
            (start..end).flat_map(|u| (1..=follows).map(move |k| (u, 1 + (u + k * 37) % users))).collect();
        for chunk in pairs.chunks(10_000) {
            let mut q = sqlx::QueryBuilder::<sqlx::MySql>::new(
                "INSERT IGNORE INTO follows (follower_id, followee_id, status, version, followed_at) ",
            );
            q.push_values(chunk.iter().filter(|(a, b)| a != b), |mut row, (a, b)| {
                row.push_bind(a).push_bind(b).push_bind("following").push_bind(1).push_bind(chrono::Utc::now());
            });
            q.build().execute(db).await?;
        }
    }
    Ok(())
}

/// Times `samples` calls of `call`, one at a time.
async fn time<F, Fut, E>(
    query: &'static str,
    code: &'static str,
    shards: u64,
    samples: usize,
    mut call: F,
) -> anyhow::Result<Cost>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
    E: Into<anyhow::Error>,
{
    let mut took = Vec::with_capacity(samples);
    for i in 0..samples.max(1) {
        let started = Instant::now();
        call(i).await.map_err(Into::into).context(code)?;
        took.push(started.elapsed());
    }
    took.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    let mean_ms = took.iter().map(|d| ms(*d)).sum::<f64>() / took.len() as f64;
    let p99_ms = ms(took[(took.len() * 99 / 100).min(took.len() - 1)]);
    Ok(Cost { query, code, mean_ms, p99_ms, shards })
}

/// The report as a Markdown table, with what a query costs over `shards`.
pub fn markdown(report: &Report, shards: u64) -> String {
    let mut out = format!(
        "One shard of {shards}: {} orders, {} users, {} follows.\n\n\
         | query | code | on its shard, mean (p99) | shards touched | over {shards} shards: answer (parallel) / shard work |\n\
         |---|---|---|---|---|\n",
        report.shard_orders, report.shard_users, report.shard_follows
    );
    for c in &report.costs {
        let touched = if c.shards == 0 { shards } else { c.shards.min(shards) };
        out.push_str(&format!(
            "| {} | `{}` | {:.2} ms ({:.2} ms) | {} | {:.2} ms / {:.1} ms |\n",
            c.query,
            c.code,
            c.mean_ms,
            c.p99_ms,
            if c.shards == 0 { "all".to_owned() } else { touched.to_string() },
            if touched > 1 { c.p99_ms } else { c.mean_ms },
            c.mean_ms * touched as f64,
        ));
    }
    out
}
