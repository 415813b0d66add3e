//! `cityhub chaos` at small size: each scenario in a lab of its own must
//! pass (nothing oversold, doubled, lost, stranded or unexplained; Redis
//! agrees; the reconciler says consistent; recovered in time), and the fault
//! must have been visible to shoppers where it should be.

use cityhub_cli::chaos::{self, Plan, Row, Scenario};
use cityhub_core::config::Settings;

fn small() -> Plan {
    Plan {
        scenarios: Vec::new(),
        users: 100,
        requests: 400,
        stock: 40,
        rate: 200,
        concurrency: 20,
        worker_down_secs: 2,
        broker_down_secs: 3,
        namesrv_down_secs: 5,
        database_down_secs: 5,
        api_down_secs: 1,
        recover_timeout_secs: 90,
        keep: false,
    }
}

async fn run(scenario: Scenario) -> Row {
    let row = chaos::run_scenario(&Settings::defaults(), &small(), scenario).await.expect("the scenario runs");
    assert!(row.pass, "{} failed: {row:#?}", scenario.name());
    let t = &row.tally;
    assert_eq!((t.oversold, t.duplicate_buyers, t.lost, t.stranded, t.unexplained), (0, 0, 0, 0, 0), "{row:#?}");
    // Every unit sold: 100 shoppers want 40 units and faults only delay them.
    assert_eq!(t.stored, 40, "{row:#?}");
    assert_eq!(row.verdict, "consistent");
    assert_eq!(row.faults.len(), if scenario == Scenario::All { 6 } else { 1 });
    row
}

/// How many answers labelled `label` shoppers got while the faults lasted.
fn during(row: &Row, label: &str) -> usize {
    row.faults.iter().map(|f| f.answers.get(label).copied().unwrap_or(0)).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_worker_kill_mid_drain_loses_nothing() {
    let row = run(Scenario::WorkerKill).await;
    let f = &row.faults[0];
    assert!(f.to_s - f.from_s >= 2.0, "the worker stayed down: {f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_broker_kill_answers_503_and_loses_nothing() {
    let row = run(Scenario::BrokerKill).await;
    assert!(during(&row, "503 order_queue_unavailable") > 0, "{:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_name_server_down_changes_nothing_for_shoppers() {
    let row = run(Scenario::NamesrvDown).await;
    let f = &row.faults[0];
    let unusual: usize =
        f.answers.iter().filter(|(k, _)| k.starts_with('5') || *k == "no answer").map(|(_, v)| v).sum();
    assert_eq!(unusual, 0, "{f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_database_stop_mid_drain_loses_nothing() {
    let row = run(Scenario::DatabaseStop).await;
    assert!(row.faults[0].to_s - row.faults[0].from_s >= 5.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_redis_restart_pauses_the_sale_and_rebuilds_without_oversell() {
    let row = run(Scenario::RedisRestart).await;
    assert!(during(&row, "503 sale_paused") + during(&row, "401 unauthorized") > 0, "{:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_api_kill_strands_nothing_after_the_reconciler() {
    let row = run(Scenario::ApiKill).await;
    assert!(during(&row, "no answer") > 0, "{:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_every_fault_in_one_sale() {
    run(Scenario::All).await;
}
