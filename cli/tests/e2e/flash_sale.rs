//! `cityhub flash-sale` at small scale: it must exit 0 with every invariant PASS.

use crate::E2e;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_flash_sale_prints_its_table_and_every_invariant_passes() {
    let e2e = E2e::start().await;
    let json = e2e.dir.join("report.json");
    let out = e2e
        .cli()
        .args(["flash-sale", "--api", &e2e.platform.base(), "--users", "300", "--requests", "600"])
        .args(["--concurrency", "40", "--stock", "50", "--quiet", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "flash-sale failed:\n{table}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "accepted",
        "sold out",
        "requests/s",
        "p99",
        "drain",
        "PASS not oversold",
        "PASS one order per user",
        "PASS every 202 stored",
        "PASS nothing stored without a 202",
        "PASS Redis agrees with MySQL",
    ] {
        assert!(table.split_whitespace().collect::<Vec<_>>().join(" ").contains(line), "missing {line:?} in:\n{table}");
    }
    assert!(!table.contains("FAIL"));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["accepted"], 50);
    assert_eq!(report["errors"], 0);
    // 300 users with 2 requests each: the other 550 answers are sold out or already bought.
    assert_eq!(report["sold_out"].as_u64().unwrap() + report["already_bought"].as_u64().unwrap(), 550);
    // After a sale, both binaries drain and exit on SIGTERM within their
    // grace: no producer or job is left for the client runtime to wait out.
    let killed = e2e.stop_drained().await;
    assert!(killed.is_empty(), "killed after {:?} of SIGTERM: {killed:?}", cityhub_cli::platform::STOP_GRACE);
}
