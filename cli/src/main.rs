//! `cityhub`: operator commands on the same settings as the binaries
//! (`CITYHUB__*`, `config/cityhub.toml`).
//!
//! - `cityhub migrate`: create the database if missing and apply migrations.
//! - `cityhub demo`: a demo shop with a seckill voucher on sale now, and a
//!   few hundred shops around one city centre for nearby search.
//! - `cityhub users`: N shoppers with tokens, as a CSV for JMeter.
//! - `cityhub flash-sale`: a stampede at a running API, then invariant checks.
//! - `cityhub bench`: the benchmark suite, written to `BENCHMARKS.md`.
//! - `cityhub chaos`: flash sales while processes die, written to `CHAOS.md`.
//! - `cityhub parked`: list and replay messages the consumers parked.
//! - `cityhub admin key create|list|revoke`: operator keys.
//! - `cityhub order close`, `cityhub reconcile`: an operator's actions
//!   through the running API.

use std::path::PathBuf;

use anyhow::Context;
use cityhub_cli::{admin, bench, chaos, demo, flash_sale, operator, parked, shards, simulate, topology, users};
use cityhub_core::config::Settings;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cityhub", version, about = "CityHub operator commands", propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create the database if missing and apply pending migrations.
    Migrate,
    /// Create a demo shop with a seckill voucher on sale now, and shops around a city centre.
    Demo(demo::Args),
    /// Create shoppers with tokens and write `user_id,token` lines.
    Users {
        /// Shoppers to create (or find, by phone).
        #[arg(long, default_value_t = 200, value_parser = cityhub_cli::positive::<usize>())]
        count: usize,
        /// Where the `user_id,token` lines go.
        #[arg(long, default_value = "jmeter/users.csv")]
        csv: PathBuf,
        /// First phone number suffix (vary it for fresh users).
        #[arg(long, default_value_t = 0)]
        offset: u64,
    },
    /// Fire a seckill stampede at a running API and check the invariants.
    FlashSale {
        #[command(flatten)]
        plan: flash_sale::Plan,
        /// Also write the report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Run the benchmarks and write BENCHMARKS.md and BENCHMARKS.json.
    Bench(bench::Args),
    /// Flash sales while processes die; writes CHAOS.md and CHAOS.json.
    Chaos {
        #[command(flatten)]
        plan: chaos::Plan,
        /// Instead of the scenarios: a steady accepted-path load for this many minutes.
        #[arg(long)]
        soak: Option<u64>,
        /// Accepted requests per second of the soak.
        #[arg(long, default_value_t = 200)]
        soak_rate: u32,
        /// Instead of the scenarios: a sale beside each kind of hostile client.
        #[arg(long, conflicts_with = "soak")]
        hostile: bool,
        #[command(flatten)]
        hostile_plan: chaos::hostile::HostilePlan,
        /// The report to write (its data goes beside it as .json).
        #[arg(long, default_value = "CHAOS.md")]
        out: PathBuf,
    },
    /// Start the scale-out shape on this machine and keep it up until Ctrl-C:
    /// a Redis Cluster (3 masters, 3 replicas), a name server with two
    /// brokers, MariaDB, two workers and two APIs behind HAProxy.
    Topology {
        /// Where its data and logs go (default: a new folder on tmpfs).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// A hot voucher sold from 1, 4 and 16 stock buckets with the real
    /// scripts on the configured Redis: units unsold, calls a request, oversell.
    SimulateBuckets {
        #[command(flatten)]
        plan: simulate::Plan,
    },
    /// What the queries that grow with users cost on one shard when the
    /// orders and follows tables are split by user id (a scratch database).
    MeasureShards {
        #[command(flatten)]
        plan: shards::Plan,
    },
    /// List and replay messages the consumers parked.
    Parked {
        #[command(subcommand)]
        action: parked::Action,
    },
    /// Operator keys: the credential of the admin routes and the console.
    Admin {
        #[command(subcommand)]
        action: admin::Action,
    },
    /// An order, through the running API (as the operator account).
    Order {
        #[command(subcommand)]
        action: operator::OrderAction,
    },
    /// Reconcile a seckill voucher's Redis state with MySQL now, through the
    /// running API, and print the report (exit 1 on drift).
    Reconcile {
        /// The seckill voucher id.
        #[arg(value_parser = cityhub_cli::positive::<u64>())]
        voucher: u64,
        /// Only report what differs and what would be repaired.
        #[arg(long)]
        dry_run: bool,
        /// The running API's base URL.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        api: String,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut settings = Settings::load().context("load settings")?;
    settings.log.filter = "warn".into();
    cityhub_platform::telemetry::init(&settings.log);
    match cli.command {
        Command::Migrate => {
            settings.database.migrate = true;
            cityhub_platform::db::connect(&settings.database).await.context("connect to MySQL")?;
            println!("migrations applied");
        }
        Command::Demo(args) => demo::run(&settings, &args).await?,
        Command::Topology { dir } => {
            let dir = dir.unwrap_or_else(|| chaos::scratch("topology"));
            topology::run(&settings, dir).await?
        }
        Command::Users { count, csv, offset } => {
            let services = cityhub_core::Services::connect(&settings).await?;
            let users = users::create(&services.auth, offset, count).await?;
            users::write_csv(&csv, &users)?;
            println!("{count} users written to {}", csv.display());
        }
        Command::FlashSale { plan, json } => {
            let report = flash_sale::run(&settings, &plan).await?;
            flash_sale::print(&report);
            if let Some(path) = json {
                std::fs::write(&path, serde_json::to_vec_pretty(&report)?)?;
            }
            if !report.passed() {
                std::process::exit(1);
            }
        }
        Command::Bench(args) => bench::run(&settings, &args).await?,
        Command::Chaos { plan, soak, soak_rate, hostile, hostile_plan, out } => {
            let pass = match soak {
                _ if hostile => {
                    let run = chaos::hostile::run(&settings, &plan, &hostile_plan).await?;
                    print!("{}", run.markdown());
                    let pass = run.pass();
                    chaos::report::update(&out, |r| r.hostile = Some(run))?;
                    pass
                }
                Some(minutes) => {
                    let soak = chaos::soak::run(&settings, minutes, soak_rate).await?;
                    print!("{}", soak.markdown());
                    let pass = soak.pass();
                    chaos::report::update(&out, |r| r.soak = Some(soak))?;
                    pass
                }
                None => {
                    let rows = chaos::run(&settings, &plan).await?;
                    let pass = rows.iter().all(|r| r.pass);
                    chaos::report::update(&out, |r| {
                        r.scenarios = Some(chaos::report::Scenarios::merged(r.scenarios.take(), &plan, rows))
                    })?;
                    pass
                }
            };
            if !pass {
                std::process::exit(1);
            }
        }
        Command::SimulateBuckets { plan } => {
            let kv = cityhub_core::connect_redis(&settings.redis).await.context("connect to Redis")?;
            let runs = simulate::run(&kv, &plan).await?;
            print!("{}", simulate::markdown(&runs));
            if !runs.iter().all(simulate::Run::pass) {
                std::process::exit(1);
            }
        }
        Command::MeasureShards { plan } => {
            let report = shards::run(&settings, &plan).await?;
            print!("{}", shards::markdown(&report, plan.shards));
        }
        Command::Parked { action } => parked::run(&settings, action).await?,
        Command::Admin { action } => admin::run(&settings, action).await?,
        Command::Order { action } => operator::order(&settings, action).await?,
        Command::Reconcile { voucher, dry_run, api } => operator::reconcile(&settings, &api, voucher, dry_run).await?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Cli;

    /// Every command and every argument, flag or positional, says what it is for.
    #[test]
    fn every_command_and_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            if cmd.get_about().is_none() {
                missing.push(path.clone());
            }
            for arg in cmd.get_arguments().filter(|a| !matches!(a.get_id().as_str(), "help" | "version")) {
                if arg.get_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                walk(sub, &path, missing);
            }
        }
        let cmd = Cli::command();
        cmd.clone().debug_assert();
        let mut missing = Vec::new();
        walk(&cmd, "", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:?}");
    }

    #[test]
    fn counts_of_zero_and_unknown_kinds_are_refused_by_the_parser() {
        for args in [
            &["cityhub", "flash-sale", "--users", "0"][..],
            &["cityhub", "flash-sale", "--buckets", "65"],
            &["cityhub", "chaos", "--rate", "0"],
            &["cityhub", "bench", "--rounds", "0"],
            &["cityhub", "users", "--count", "0"],
            &["cityhub", "simulate-buckets", "--buckets", "1,0"],
            &["cityhub", "demo", "--radius-m", "NaN"],
            &["cityhub", "parked", "replay", "--kind", "gave-up"],
            &["cityhub", "parked", "replay", "0"],
            &["cityhub", "order", "close", "0"],
            &["cityhub", "reconcile", "x"],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?} parsed");
        }
        assert!(Cli::try_parse_from(["cityhub", "parked", "replay", "--kind", "gave_up"]).is_ok());
    }
}
