//! `cityhub simulate-buckets`: a hot voucher split over 1, 4 and 16 stock
//! buckets sells exactly its stock, never a unit twice or two to a shopper,
//! and every released unit is either sold again or counted as unsold.

use cityhub_cli::simulate::{self, Plan};
use cityhub_testkit::TestEnv;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_split_sells_its_stock_once_and_accounts_for_each_released_unit() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let plan = Plan { buckets: vec![1, 4, 16], stock: 200, shoppers: 600, release_percent: 10, concurrency: 32 };

    let runs = simulate::run(&kv, &plan).await.unwrap();

    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert!(r.pass(), "{r:?}");
        assert_eq!(r.sold_first, 200, "with more shoppers than units every unit sells at once: {r:?}");
        assert_eq!(r.released, 20);
        assert_eq!(r.retried, 600 - 200, "the shoppers told sold out try again");
        assert_eq!(r.sold_again as i64 + r.unsold, 20, "a released unit is sold again or left: {r:?}");
        assert!(r.calls_max <= u64::from(r.buckets) && r.calls_mean >= 1.0, "{r:?}");
    }
    assert_eq!((runs[0].unsold, runs[0].calls_max), (0, 1), "one bucket: no walk, nothing left");
    assert!(simulate::markdown(&runs).lines().count() == 5);
}

#[test]
fn the_command_prints_the_table_and_refuses_a_split_beyond_the_stock() {
    let env = TestEnv::new();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_cityhub"))
            .envs(env.settings.to_vars())
            .arg("simulate-buckets")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--buckets", "1,4", "--stock", "40", "--shoppers", "100"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("| buckets |") && text.lines().count() == 4, "{text}");
    assert!(!run(&["--buckets", "8", "--stock", "4"]).status.success());
}
