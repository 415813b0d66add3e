//! `cityhub chaos` at small size: each scenario in a lab of its own must
//! pass (nothing oversold, doubled, lost, stranded or unexplained; Redis
//! agrees; the reconciler says consistent; recovered in time), and the fault
//! must have been visible to shoppers where it should be.

use std::time::{Duration, Instant};

use cityhub_cli::chaos::lab::{Lab, Part};
use cityhub_cli::chaos::{self, Plan, RelayRow, Row, Scenario};
use cityhub_core::config::Settings;
use cityhub_platform::mq::publisher::BatchPublisher;
use cityhub_platform::outbox::relay::{Outgoing, Relay};
use cityhub_testkit::eventually;
use futures::FutureExt;

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
        follow_rate: 50,
        // The platform runs at its default timings: a reservation left by a
        // dead API is re-published after the 60 s grace period, by a
        // reconciler that runs every 30 s.
        recover_timeout_secs: 180,
        keep: false,
        next_bin_dir: None,
    }
}

async fn run(scenario: Scenario) -> Row {
    run_with(scenario, small()).await
}

async fn run_with(scenario: Scenario, plan: Plan) -> Row {
    let row = chaos::run_scenario(&Settings::defaults(), &plan, scenario).await.expect("the scenario runs");
    assert!(row.pass, "{} failed: {row:#?}", scenario.name());
    let t = &row.tally;
    assert_eq!((t.oversold, t.duplicate_buyers, t.lost, t.stranded, t.unexplained), (0, 0, 0, 0, 0), "{row:#?}");
    // Every unit sold: 100 shoppers want 40 units and faults only delay them.
    assert_eq!(t.stored, 40, "{row:#?}");
    assert_eq!(row.verdict, "consistent");
    assert_eq!(row.faults.len(), if scenario == Scenario::All { 6 } else { 1 });
    row
}

/// Shoppers were told the sale is paused, and nobody was logged out.
fn paused_not_logged_out(row: &Row) {
    assert!(during(row, "503 sale_paused") > 0, "{:?}", row.faults);
    assert_eq!(during(row, "401 unauthorized"), 0, "{:?}", row.faults);
}

/// Runs a Redis scenario: the sale pauses and a reconciler repairs `kind`.
async fn paused_then_rebuilt(scenario: Scenario, kind: &str) {
    let row = run(scenario).await;
    paused_not_logged_out(&row);
    assert!(row.repairs.get(kind).is_some_and(|n| *n >= 1), "{:?}", row.repairs);
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

/// A lab whose broker serves `topic`, and its settings.
async fn lab_serving(topic: &str) -> (Lab, Settings) {
    // The lab is handed out once its broker serves a topic (see `Lab::start`);
    // the topic under test still needs its own route first.
    let dir = std::env::temp_dir().join(format!("cityhub-renewal-{:08x}", rand::random::<u32>()));
    let lab = Lab::start(&dir).await.expect("the lab starts");
    let s = lab.settings(&Settings::defaults());
    let client = cityhub_testkit::mq_client();
    let admin = cityhub_platform::mq::start_producer(&client, &s.mq, "renewal_admin").await.unwrap();
    let routed = eventually(Duration::from_secs(90), || async {
        cityhub_platform::mq::ensure_topic(&admin, topic, 2).await
            && cityhub_platform::mq::topic_reachable(&admin, topic, Duration::from_secs(5)).await
    })
    .await;
    assert!(routed, "the broker never served the topic; its log ends:\n{}", lab.log_tail(Part::Broker, 60));
    (lab, s)
}

/// Kills the lab's broker while `send` keeps being tried (as in a sale,
/// every connect fails and the client's breaker opens), starts it again and
/// answers how long `send` took to go through after the broker was back.
async fn resend_after_broker_returns<F, Fut>(lab: &mut Lab, send: F) -> Duration
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let sent = eventually(Duration::from_secs(60), &send).await;
    assert!(sent, "nothing was sent to a healthy broker; its log ends:\n{}", lab.log_tail(Part::Broker, 30));
    lab.kill(Part::Broker).await.unwrap();
    let down = Instant::now();
    while down.elapsed() < Duration::from_secs(6) {
        assert!(!send().await, "a send went through to a dead broker");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    lab.start_part(Part::Broker).await.unwrap();
    let back = Instant::now();
    assert!(eventually(Duration::from_secs(60), &send).await, "nothing was sent again");
    back.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_a_publisher_sends_again_within_5_s_of_its_broker_coming_back() {
    let topic = format!("renewal_{:08x}", rand::random::<u32>());
    let (mut lab, s) = lab_serving(&topic).await;
    let publisher = BatchPublisher::start(&cityhub_testkit::mq_client(), &s.mq, "renewal", topic).await.unwrap();
    let took =
        resend_after_broker_returns(&mut lab, || async { publisher.publish("k".into(), b"{}".to_vec()).await.is_ok() })
            .await;
    // The client alone keeps its breaker open for 30 s.
    assert!(took < Duration::from_secs(5), "the first publish after the broker came back took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_an_outbox_relay_sends_again_within_5_s_of_its_broker_coming_back_with_no_renewal() {
    let topic = format!("relay_renewal_{:08x}", rand::random::<u32>());
    let (mut lab, s) = lab_serving(&topic).await;
    let db = cityhub_platform::db::connect(&s.database).await.unwrap();
    let client = cityhub_testkit::mq_client();
    let producer = cityhub_platform::mq::start_producer(&client, &s.mq, "relay_renewal").await.unwrap();
    let relay = Relay::new(db, producer, s.outbox.clone(), &s.mq);
    let event = Outgoing { id: 1, topic, msg_key: "k".into(), payload: "{}".into() };
    let took =
        resend_after_broker_returns(&mut lab, || relay.send(std::slice::from_ref(&event)).map(|r| r.is_ok())).await;
    assert!(took < Duration::from_secs(5), "the relay's first send after the broker came back took {took:?}");
}

/// Collects the bodies it is handed.
struct Collect(tokio::sync::mpsc::UnboundedSender<Vec<u8>>);

impl cityhub_platform::mq::consumer::BatchHandler for Collect {
    async fn handle(
        &self,
        batch: Vec<cityhub_platform::mq::consumer::Delivery>,
    ) -> cityhub_platform::mq::consumer::Ack {
        for d in batch {
            let _ = self.0.send(d.body.to_vec());
        }
        cityhub_platform::mq::consumer::Ack::Done
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_a_consumer_receives_again_within_5_s_of_its_broker_coming_back() {
    let topic = format!("consume_renewal_{:08x}", rand::random::<u32>());
    let (mut lab, s) = lab_serving(&topic).await;
    let client = cityhub_testkit::mq_client();
    let (tx, received) = tokio::sync::mpsc::unbounded_channel();
    let received = tokio::sync::Mutex::new(received);
    let consumer =
        cityhub_platform::mq::consumer::Consumer::start(&client, &s.mq, "consume_renewal", &topic, Collect(tx).into())
            .await
            .unwrap();
    let publisher = BatchPublisher::start(&client, &s.mq, "consume_renewal_p", topic).await.unwrap();
    let next = std::sync::atomic::AtomicU32::new(0);
    // Each attempt publishes a body of its own and answers whether the
    // consumer was handed it within a second.
    let delivered = || async {
        let body = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string().into_bytes();
        if publisher.publish("k".into(), body.clone()).await.is_err() {
            return false;
        }
        let mut received = received.lock().await;
        let wait = tokio::time::timeout(Duration::from_secs(1), async {
            while let Some(got) = received.recv().await {
                if got == body {
                    return;
                }
            }
        });
        wait.await.is_ok()
    };
    // While the broker is down every pull fails and the client's breaker for
    // its address opens; the client alone keeps it open for 30 s, pauses 3 s
    // after each failed pull and re-balances every 20 s.
    let took = resend_after_broker_returns(&mut lab, delivered).await;
    assert!(took < Duration::from_secs(5), "the first delivery after the broker came back took {took:?}");
    consumer.shutdown().await;
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
    // Shoppers are told the sale is paused; sessions live in MySQL, so no one is logged out.
    paused_then_rebuilt(Scenario::RedisRestart, "keys_missing").await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_redis_restored_from_an_older_snapshot_pauses_and_sells_no_unit_twice() {
    paused_then_rebuilt(Scenario::RedisStaleRestore, "stale_copy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_redis_failover_to_a_replica_behind_pauses_and_sells_no_unit_twice() {
    paused_then_rebuilt(Scenario::RedisFailover, "stale_copy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_two_reconcilers_rebuilding_at_once_sell_each_unit_once() {
    paused_then_rebuilt(Scenario::RebuildRace, "keys_missing").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_mysql_down_past_the_details_ttl_does_not_stop_the_sale() {
    // Slow enough that units are still sold after the details' TTL ran out
    // inside the outage.
    let row = run_with(Scenario::DatabaseOutlastsTtl, Plan { rate: 10, ..small() }).await;
    let f = &row.faults[0];
    assert!(during(&row, "202") > 0, "{f:?}");
    let refused: usize = ["503 cache_busy", "503 cache_unavailable", "503 database_unavailable"]
        .iter()
        .map(|label| during(&row, label))
        .sum();
    assert_eq!(refused, 0, "the sale path needed MySQL: {f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_a_batch_retried_after_a_lock_wait_timeout_while_redis_restarts_is_applied_before_the_rebuild() {
    // The scenario itself fails unless the worker logged the lock-wait timeout.
    paused_then_rebuilt(Scenario::LockWaitDuringLoss, "keys_missing").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_one_of_two_workers_killed_right_after_redis_restarts_sells_each_unit_once() {
    paused_then_rebuilt(Scenario::WorkerKillAfterLoss, "keys_missing").await;
}

// The binlog outbox relay: follow events stream through it while the sale
// runs; every one committed must be applied once in effect.

/// Runs a `relay-` scenario: the sale passes, and every follow event (at
/// least the 100 streamed before the fault) was applied and published, the
/// projection and counts agree with `follows`, and the relay still streams.
async fn relayed(scenario: Scenario) -> (Row, RelayRow) {
    let row = run(scenario).await;
    let relay = row.relay.clone().expect("a relay scenario reports its follow events");
    let t = &relay.relayed;
    assert!(t.events >= 100, "{relay:#?}");
    assert_eq!((t.applied, t.published), (t.events, t.events), "{relay:#?}");
    assert_eq!((t.pairs_disagree, t.mysql_counts_disagree, t.redis_counts_disagree), (0, 0, 0), "{relay:#?}");
    assert!(!relay.polling, "the relay fell back to polling: {relay:#?}");
    eprintln!("{}: {relay:?}", scenario.name());
    // The relay carried every event itself: the sweep of old rows had nothing to do.
    assert_eq!(relay.swept, 0.0, "{relay:#?}");
    (row, relay)
}

/// Follow answers while the faults lasted whose label starts with `prefix`.
fn follows_during(row: &Row, prefix: &str) -> usize {
    row.faults.iter().flat_map(|f| &f.follow_answers).filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| v).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_binlog_relay_killed_mid_stream_resumes_and_applies_every_follow_once() {
    let (row, relay) = relayed(Scenario::RelayKill).await;
    // Follows went on committing while the relay was dead, and waited for it.
    assert!(follows_during(&row, "200") > 0, "{:?}", row.faults);
    assert!(relay.relayed.lag_max_ms >= 2000.0, "no event waited out the outage: {relay:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_binlog_relay_reconnects_after_mariadb_restarts_and_applies_every_follow_once() {
    let (row, relay) = relayed(Scenario::RelayDatabaseRestart).await;
    // The relay saw its stream end and reconnected in the same process (a
    // follow sent meanwhile may wait for a connection, or get a 503).
    assert!(relay.restarts >= 1.0, "{relay:#?}");
    assert!(row.faults[0].follow_answers.values().sum::<usize>() > 0, "{:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_binlog_relay_holds_its_position_while_the_broker_is_down_and_sends_the_backlog() {
    let (row, relay) = relayed(Scenario::RelayBrokerDown).await;
    // Follows commit without the broker; their events waited in the binlog.
    assert_eq!(follows_during(&row, "5"), 0, "{:?}", row.faults);
    assert!(follows_during(&row, "200") > 0, "{:?}", row.faults);
    assert!(relay.publish_failures >= 1.0, "the relay never met the dead broker: {relay:#?}");
    let published_max = relay.relayed.published_max_ms;
    assert!(published_max >= 2000.0, "no event waited out the outage in the relay: {relay:#?}");
    // The relay sent again soon after the broker's return (the outage is 3 s;
    // the consumer's client may wait out its 30 s breaker before it pulls).
    assert!(published_max < 20_000.0, "the relay was slow to send again: {relay:#?}");
    // Shoppers of the sale were told the order queue was away.
    assert!(during(&row, "503 order_queue_unavailable") > 0, "{:?}", row.faults);
}

// The cluster shape: a Redis Cluster of 3 masters with a replica each, two
// brokers on one name server, two APIs behind HAProxy, two workers in one
// consumer group.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_cluster_master_kill_pauses_its_slots_and_the_promoted_replica_sells_no_unit_twice() {
    // The promoted replica holds the master's data under another identity:
    // the voucher is paused (a copy that may be behind) and rebuilt.
    paused_then_rebuilt(Scenario::ClusterMasterKill, "stale_copy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_cluster_one_broker_killed_the_other_takes_the_orders() {
    let row = run(Scenario::ClusterBrokerKill).await;
    assert!(during(&row, "202") > 0, "no order was accepted through the other broker: {:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_cluster_one_api_killed_behind_the_balancer_the_other_serves() {
    let row = run(Scenario::ClusterApiKill).await;
    assert!(during(&row, "202") > 0, "the other API served nobody: {:?}", row.faults);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_cluster_one_worker_killed_the_other_drains() {
    let row = run(Scenario::ClusterWorkerKill).await;
    let f = &row.faults[0];
    assert!(f.to_s - f.from_s >= 2.0, "the worker stayed down: {f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_cluster_rolling_deploy_of_every_part_fails_no_shopper_request() {
    // `run` fails the row on any answer but 202 or 409 during the deploy.
    let row = run(Scenario::ClusterRollingDeploy).await;
    assert!(during(&row, "202") > 0, "no order was accepted during the deploy: {:?}", row.faults);
    assert_eq!(during(&row, "no answer") + during(&row, "not connected"), 0, "{:?}", row.faults);
}

/// A hostile scenario at small size: the sale runs 10 s beside the hostile
/// client (200 requests/s from 1,000 addresses), limits on.
async fn hostile(scenario: chaos::hostile::Hostile) -> chaos::hostile::HostileRow {
    let plan = Plan { users: 100, requests: 2000, stock: 40, rate: 200, ..small() };
    let hostile = chaos::hostile::HostilePlan {
        hostile_scenarios: vec![scenario],
        hostile_rate: 200,
        hostile_addresses: 1000,
        idle_connections: 200,
        scraper_accounts: 20,
    };
    let row = chaos::hostile::run_scenario(&Settings::defaults(), &plan, &hostile, scenario).await.expect("it runs");
    let t = &row.tally;
    assert_eq!((t.oversold, t.duplicate_buyers, t.lost, t.stranded, t.unexplained), (0, 0, 0, 0, 0), "{row:#?}");
    assert_eq!(t.stored, 40, "every unit sold: {row:#?}");
    assert!(row.hostile_requests > 1000, "the hostile client ran: {row:#?}");
    assert!(row.login_s.is_some_and(|s| s <= 60.0), "the targeted shopper logged in: {row:#?}");
    let mysql = row.mysql_per_request.expect("measured");
    assert!(mysql <= chaos::hostile::MYSQL_PER_REQUEST_MAX, "{mysql} MySQL statements per hostile request");
    assert!(row.series.1 <= row.series.0 + chaos::hostile::SERIES_SLACK, "metric series grew: {:?}", row.series);
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_hostile_login_griefer_from_a_thousand_addresses_cannot_keep_the_targeted_shopper_out() {
    let row = hostile(chaos::hostile::Hostile::LoginGriefer).await;
    let got = |label: &str| row.hostile_answers.get(label).copied().unwrap_or(0);
    assert!(
        got("422 invalid_body") > 0 && got("200") > 0 && got("403 proof_required") > 0,
        "{:?}",
        row.hostile_answers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_hostile_fuzzer_adds_no_metric_series_and_costs_no_mysql_work() {
    let row = hostile(chaos::hostile::Hostile::Fuzzer).await;
    assert!(row.hostile_answers.keys().any(|l| l.starts_with("431")), "{:?}", row.hostile_answers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_hostile_token_sprayer_costs_no_mysql_work() {
    let row = hostile(chaos::hostile::Hostile::TokenSprayer).await;
    assert!(row.hostile_answers.get("401 unauthorized").is_some_and(|n| *n > 1000), "{:?}", row.hostile_answers);
}
