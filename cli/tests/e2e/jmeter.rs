//! The seckill stampede plan under real JMeter (installed by `jmeter/run.sh`
//! if missing), then the invariants in MySQL and Redis.

use std::time::Duration;

use cityhub_cli::flash_sale::{self, Plan};
use cityhub_testkit::invariants::{self, Accepted, Scope};

use crate::E2e;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jmeter_stampede_plan_sells_exactly_the_stock_and_everything_agrees() {
    let e2e = E2e::start().await;
    let settings = e2e.platform.settings.clone();
    let db = cityhub_platform::db::connect(&settings.database).await.unwrap();
    let kv = cityhub_core::connect_redis(&settings.redis).await.unwrap();
    let plan = Plan {
        api: e2e.platform.base(),
        users: 200,
        requests: 200,
        concurrency: 200,
        stock: 50,
        buckets: 1,
        drain_timeout: 60,
        user_offset: 0,
        quiet: true,
    };
    let voucher = flash_sale::create_voucher(&settings, &plan).await.unwrap();
    let csv = e2e.dir.join("users.csv");
    let made = e2e.cli().args(["users", "--count", "200", "--csv"]).arg(&csv).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));

    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let jtl = e2e.dir.join("results.jtl");
    let port = settings.http.addr.rsplit(':').next().unwrap().to_owned();
    let run = std::process::Command::new(format!("{root}/jmeter/run.sh"))
        .arg(format!("{root}/jmeter/seckill-stampede.jmx"))
        .arg(&jtl)
        .args(["-Jhost=127.0.0.1", &format!("-Jport={port}"), "-Jthreads=200", "-Jloops=1", "-Jrampup=1"])
        .arg(format!("-Jvoucher={voucher}"))
        .arg(format!("-Jcsv={}", csv.display()))
        .output()
        .unwrap();
    assert!(run.status.success(), "JMeter did not run:\n{}", String::from_utf8_lossy(&run.stderr));
    let summary =
        std::process::Command::new("python3").arg(format!("{root}/jmeter/summarize.py")).arg(&jtl).output().unwrap();
    let summary_text = String::from_utf8_lossy(&summary.stdout);
    assert!(summary.status.success(), "JMeter assertions failed:\n{summary_text}");

    let results = std::fs::read_to_string(&jtl).unwrap();
    let mut lines = results.lines();
    // JMeter quotes the names (and values) of sample variables.
    let header: Vec<&str> = lines.next().unwrap().split(',').map(|h| h.trim_matches('"')).collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}: {header:?}"));
    let (code, user, order) = (column("responseCode"), column("user_id"), column("order_id"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').map(|v| v.trim_matches('"')).collect()).collect();
    assert_eq!(rows.len(), 200, "one sample per user");
    let accepted: Vec<Accepted> = rows
        .iter()
        .filter(|r| r[code] == "202")
        .map(|r| Accepted { order_id: r[order].parse().unwrap(), user_id: r[user].parse().unwrap() })
        .collect();
    assert_eq!(accepted.len(), 50, "{summary_text}");
    assert_eq!(rows.iter().filter(|r| r[code] == "409").count(), 150);

    flash_sale::drain(&db, voucher, accepted.len(), Duration::from_secs(60), true).await.unwrap();
    let state = invariants::load(&db, &kv, voucher).await.unwrap();
    for check in invariants::check(&accepted, &state, Scope::WholeSale) {
        assert!(check.pass, "{}: {}", check.name, check.detail);
    }
    e2e.stop().await;
}
