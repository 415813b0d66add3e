//! `cityhub`: operator commands that work on the same settings as the
//! binaries (`CITYHUB__*`, `config/cityhub.toml`).
//!
//! - `cityhub migrate`: create the database if missing and apply migrations.
//! - `cityhub demo`: create a demo shop and a seckill voucher, print their ids.

use anyhow::Context;
use chrono::{Duration, Utc};
use cityhub_core::config::Settings;
use cityhub_core::vouchers::{NewSeckillVoucher, Vouchers};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cityhub", about = "CityHub operator commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create the database if missing and apply pending migrations.
    Migrate,
    /// Create a demo shop and a seckill voucher that is on sale now.
    Demo {
        /// Units for sale.
        #[arg(long, default_value_t = 100)]
        stock: u32,
        /// Minutes the sale lasts.
        #[arg(long, default_value_t = 120)]
        minutes: i64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut settings = Settings::load().context("load settings")?;
    settings.log.filter = "warn".into();
    cityhub_core::telemetry::init(&settings.log);
    settings.database.migrate = true;
    let db = cityhub_core::db::connect(&settings.database)
        .await
        .context("connect to MySQL")?;
    match cli.command {
        Command::Migrate => println!("migrations applied"),
        Command::Demo { stock, minutes } => {
            let kv = cityhub_core::kv::Kv::connect(&settings.redis)
                .await
                .context("connect to Redis")?;
            let shop_id = sqlx::query("INSERT INTO shops (name, address, avg_price, score, open_hours) VALUES (?, ?, ?, ?, ?)")
                .bind("CityHub Demo Noodles")
                .bind("1 Demo Street")
                .bind(3500u64)
                .bind(47u32)
                .bind("10:00-22:00")
                .execute(&db)
                .await?
                .last_insert_id();
            let now = Utc::now();
            let voucher = Vouchers::new(db, kv)
                .create_seckill(NewSeckillVoucher {
                    shop_id,
                    title: "100 off 150".into(),
                    sub_title: "weekday lunch".into(),
                    rules: "one per customer".into(),
                    pay_value: 10_000,
                    actual_value: 15_000,
                    stock,
                    begin_time: now,
                    end_time: now + Duration::minutes(minutes),
                })
                .await?;
            println!(
                "{}",
                serde_json::json!({ "shop_id": shop_id, "voucher_id": voucher.id, "stock": stock, "end_time": voucher.end_time })
            );
        }
    }
    Ok(())
}
