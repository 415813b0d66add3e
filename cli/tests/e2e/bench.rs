//! `cityhub bench` at a tiny size: it runs every figure and writes its report.

use crate::E2e;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_benchmark_command_runs_at_a_tiny_size_and_writes_its_report() {
    let e2e = E2e::start().await;
    let (md, json) = (e2e.dir.join("BENCH.md"), e2e.dir.join("BENCH.json"));
    let out = e2e
        .cli()
        .args([
            "bench",
            "--rounds",
            "1",
            "--p1-seconds",
            "1",
            "--p3-seconds",
            "1",
            "--p1-users",
            "100",
            "--connections",
            "10",
        ])
        .args([
            "--orders",
            "150",
            "--accepted-concurrency",
            "20",
            "--evalsha-calls",
            "2000",
            "--p6-followings",
            "20",
            "--relay-rate",
            "200",
            "--relay-seconds",
            "2",
            "--out",
        ])
        .arg(&md)
        .arg("--json")
        .arg(&json)
        .arg("--logs")
        .arg(e2e.dir.join("bench-logs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "bench failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report = std::fs::read_to_string(&md).unwrap();
    for figure in [
        "P1 flash-sale path",
        "P1 with rate limits",
        "P2 accepted path",
        "P2 with its HTTP stage",
        "P3 shop read",
        "P4 worker insert rate",
        "P4b worker against an empty consumer",
        "P4 with batches of",
        "Consumer modes",
        "P5 API RSS",
        "P6 recommendations",
        "Invariants",
    ] {
        assert!(report.contains(figure), "{figure} missing from:\n{report}");
    }
    let data: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let median = &data["median"];
    for key in [
        "p1_seckill_rps",
        "p1_evalsha_rps",
        "p1_limited_rps",
        "p2_orders_per_s",
        "p3_shop_rps",
        "p3_trivial_rps",
        "p4_worker_rows_per_s",
        "p4_raw_rows_per_s",
        "p6_recs_cold_ms",
        "p6_recs_warm_ms",
        "p6_reference_ms",
    ] {
        assert!(median[key].as_f64().unwrap() > 0.0, "{key}: {median}");
    }
    // P2 over its composed stage limit: every stage measured, and the ratio is theirs.
    let stages = &median["p2_stages"];
    let rates: Vec<f64> = ["evalsha", "send", "drain", "insert"].iter().map(|k| stages[k].as_f64().unwrap()).collect();
    assert!(rates.iter().all(|r| *r > 0.0), "{stages}");
    let limit = 1.0 / rates.iter().map(|r| 1.0 / r).sum::<f64>();
    assert!((median["p2_limit"].as_f64().unwrap() - limit).abs() / limit < 1e-6, "{median}");
    assert!(report.contains("composed stage limit"), "{report}");
    // P4b: the worker's rows/s over the empty consumer's drain of the same round.
    let p4b = median["p4_worker_rows_per_s"].as_f64().unwrap() / stages["drain"].as_f64().unwrap();
    let rounds = data["rounds"].as_array().unwrap();
    assert!(rounds.iter().all(|r| r["p4b_ratio"].as_f64().is_some_and(|x| x > 0.0)), "{rounds:?}");
    if rounds.len() == 1 {
        assert!((median["p4b_ratio"].as_f64().unwrap() - p4b).abs() / p4b < 1e-6, "{median}");
    }
    // The consumer modes, each drained in full; P2's drain stage is the worker's mode.
    let modes = &median["consumer_modes"];
    for mode in ["push", "push_large", "push_more_queues", "lite_pull"] {
        assert!(modes[mode].as_f64().is_some_and(|x| x > 0.0), "{mode}: {modes}");
    }
    assert_eq!(modes["push"], stages["drain"], "{median}");
    assert!(median["p4_large_rows_per_s"].as_f64().is_some_and(|x| x > 0.0), "{median}");
    // The outbox relays side by side: both delivered every event, and the
    // poll relay queries an idle database while the binlog relay does not
    // (it only samples the backlog every few seconds).
    assert!(report.contains("## Outbox relays"), "{report}");
    let relays = &median["relays"];
    for relay in ["poll", "binlog"] {
        let r = &relays[relay];
        assert!(r["p50_ms"].as_f64().is_some_and(|x| x > 0.0), "{relay}: {r}");
        assert!(r["p99_ms"].as_f64().unwrap() >= r["p50_ms"].as_f64().unwrap(), "{relay}: {r}");
        assert!(r["busy_qps"].as_f64().is_some_and(|x| x > 0.0), "{relay}: {r}");
    }
    assert!(relays["poll"]["idle_qps"].as_f64().unwrap() > relays["binlog"]["idle_qps"].as_f64().unwrap(), "{relays}");
    // P4's transactions, from the worker's step histograms: each step was
    // timed, and the rows per transaction are those of real transactions.
    assert!(report.contains("P4's transactions"), "{report}");
    for tx in ["p4_tx", "p4_large_tx"] {
        let t = &median[tx];
        for step in ["begin_ms", "insert_ms", "stock_ms", "commit_ms"] {
            assert!(t[step].as_f64().is_some_and(|x| x > 0.0), "{tx}.{step}: {t}");
        }
        let rows = t["rows"].as_f64().unwrap();
        assert!((1.0..=1024.0).contains(&rows), "{tx}: {t}");
    }
    let p3 = median["p3_shop_rps"].as_f64().unwrap() / median["p3_trivial_rps"].as_f64().unwrap();
    assert!((median["p3_ratio"].as_f64().unwrap() - p3).abs() < 1e-9, "{median}");
    assert!(data["p5_peak_rss_mb"].as_f64().unwrap() > 1.0);
    assert_eq!(median["invariants_pass"], true);
    e2e.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_benchmark_runs_p1_and_p2_through_the_balancer_and_writes_its_section() {
    let e2e = E2e::start().await;
    let (md, json) = (e2e.dir.join("BENCH.md"), e2e.dir.join("BENCH.json"));
    // A report with its own notes: the section goes before them.
    std::fs::write(&md, "# Benchmarks\n\n## Profile and fix\n\nkept\n").unwrap();
    let out = e2e
        .cli()
        .args(["bench", "--topology", "cluster", "--rounds", "1", "--p1-seconds", "1", "--p1-users", "100"])
        .args(["--connections", "10", "--orders", "150", "--accepted-concurrency", "20", "--out"])
        .arg(&md)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "bench failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report = std::fs::read_to_string(&md).unwrap();
    let section = report.find("## Cluster topology").expect("the cluster section");
    assert!(section < report.find("## Profile and fix\n\nkept").expect("the notes kept"), "{report}");
    for figure in ["P1 flash-sale path", "P2 accepted path", "in every run: PASS"] {
        assert!(report.contains(figure), "{figure} missing from:\n{report}");
    }
    let data: serde_json::Value =
        serde_json::from_slice(&std::fs::read(e2e.dir.join("BENCHMARKS-cluster.json")).unwrap()).unwrap();
    let round = &data["rounds"][0];
    for key in ["p1_balanced_rps", "p1_one_api_rps", "p2_balanced_orders_per_s", "p2_one_api_orders_per_s"] {
        assert!(round[key].as_f64().unwrap() > 0.0, "{key}: {round}");
    }
    let ratio = round["p1_balanced_rps"].as_f64().unwrap() / round["p1_one_api_rps"].as_f64().unwrap();
    assert!((round["p1_ratio"].as_f64().unwrap() - ratio).abs() < 1e-9, "{round}");
    assert_eq!(round["invariants_pass"], true);
    e2e.stop().await;
}
