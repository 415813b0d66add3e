//! `cityhub demo`: a demo shop and a seckill voucher on sale now, created
//! through the same rules as the admin API.

use anyhow::Context;
use chrono::{Duration, Utc};
use cityhub_core::config::Settings;
use cityhub_core::vouchers::{NewSeckillVoucher, Vouchers};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Units for sale.
    #[arg(long, default_value_t = 100)]
    pub stock: u32,
    /// Minutes the sale lasts.
    #[arg(long, default_value_t = 120)]
    pub minutes: i64,
}

pub async fn run(settings: &Settings, args: &Args) -> anyhow::Result<()> {
    let db = cityhub_core::db::connect(&settings.database).await.context("connect to MySQL")?;
    let kv = cityhub_core::kv::Kv::connect(&settings.redis).await.context("connect to Redis")?;
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
            stock: args.stock,
            begin_time: now,
            end_time: now + Duration::minutes(args.minutes),
        })
        .await?;
    let summary = serde_json::json!({ "shop_id": shop_id, "voucher_id": voucher.id, "stock": args.stock, "end_time": voucher.end_time });
    println!("{summary}");
    Ok(())
}
