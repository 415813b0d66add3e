//! `cityhub demo`: a demo shop with a seckill voucher on sale now, and a few
//! hundred shops of every type scattered around one city centre (West Lake,
//! Hangzhou), so `GET /shops/nearby` has something to find. Everything goes
//! through the same rules as the admin API.

use chrono::{Duration, Utc};
use cityhub_core::config::Settings;
use cityhub_core::shops::{NewShop, Point};
use cityhub_core::vouchers::NewSeckillVoucher;
use cityhub_core::Services;
use rand::Rng;

/// The city centre: longitude, latitude.
const CENTRE: Point = Point { x: 120.1551, y: 30.2741 };
/// Shop types the migrations create (1..=10).
const TYPES: u64 = 10;
/// Degrees of latitude per metre (and of longitude at the centre's latitude).
const DEG_PER_M_Y: f64 = 1.0 / 111_320.0;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Units for sale.
    #[arg(long, default_value_t = 100, value_parser = crate::positive::<u32>())]
    pub stock: u32,
    /// Minutes the sale lasts.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(i64).range(1..))]
    pub minutes: i64,
    /// Shops to scatter around the city centre.
    #[arg(long, default_value_t = 300)]
    pub shops: u32,
    /// How far from the centre they may be, metres.
    #[arg(long, default_value_t = 8000.0, value_parser = crate::metres)]
    pub radius_m: f64,
    /// Only on an empty platform (no shop yet): a start-up step may run it
    /// every time and creates the demo once.
    #[arg(long)]
    pub once: bool,
}

pub async fn run(settings: &Settings, args: &Args) -> anyhow::Result<()> {
    let services = Services::connect(settings).await?;
    if args.once {
        let shops: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM shops").fetch_one(&services.db).await?;
        if shops > 0 {
            println!("{}", serde_json::json!({ "created": false, "shops": shops }));
            return Ok(());
        }
    }
    let shops = &services.shops;
    let noodles = NewShop {
        name: "CityHub Demo Noodles".into(),
        type_id: 1,
        address: "1 Demo Street".into(),
        position: Some(CENTRE),
        avg_price: 3500,
        score: 47,
        open_hours: "10:00-22:00".into(),
    };
    let shop_id = shops.create(&noodles).await?.id;
    let now = Utc::now();
    let voucher = services
        .vouchers
        .create_seckill(NewSeckillVoucher {
            shop_id,
            title: "100 off 150".into(),
            sub_title: "weekday lunch".into(),
            rules: "one per customer".into(),
            pay_value: 10_000,
            actual_value: 15_000,
            stock: args.stock,
            buckets: 1,
            begin_time: now,
            end_time: now + Duration::minutes(args.minutes),
        })
        .await?;
    for i in 1..=args.shops {
        shops.create(&scattered(i, args.radius_m)).await?;
    }
    let summary = serde_json::json!({
        "created": true, "shop_id": shop_id, "voucher_id": voucher.id, "stock": args.stock, "end_time": voucher.spec.end_time,
        "shops_scattered": args.shops, "centre": { "x": CENTRE.x, "y": CENTRE.y },
    });
    println!("{summary}");
    Ok(())
}

/// Shop `i`: a random type, at a uniformly random point of the disc.
fn scattered(i: u32, radius_m: f64) -> NewShop {
    let mut rng = rand::rng();
    let (r, angle) = (radius_m * rng.random::<f64>().sqrt(), rng.random::<f64>() * std::f64::consts::TAU);
    let dy = r * angle.sin() * DEG_PER_M_Y;
    let dx = r * angle.cos() * DEG_PER_M_Y / CENTRE.y.to_radians().cos();
    NewShop {
        name: format!("Demo shop {i}"),
        type_id: rng.random_range(1..=TYPES),
        address: format!("{i} Lakeside Road"),
        position: Some(Point { x: CENTRE.x + dx, y: CENTRE.y + dy }),
        avg_price: rng.random_range(1_000..=30_000),
        score: rng.random_range(30..=50),
        open_hours: "10:00-22:00".into(),
    }
}
