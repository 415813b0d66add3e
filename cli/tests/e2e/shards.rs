//! `cityhub measure-shards` at a small size: every query of the table is
//! timed on a filled scratch database, which is dropped after.

use cityhub_cli::shards::{self, Plan};
use cityhub_testkit::TestEnv;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_query_is_timed_on_a_filled_shard_and_the_scratch_database_goes() {
    let env = TestEnv::new();
    let db = env.db().await;
    let plan = Plan { orders: 4_000, users: 400, follows: 3, shards: 2, samples: 8 };

    let report = shards::run(&env.settings, &plan).await.unwrap();

    assert_eq!((report.shard_orders, report.shard_users, report.shard_follows), (2_000, 200, 600));
    assert_eq!(report.costs.len(), 6, "{report:?}");
    assert!(report.costs.iter().all(|c| c.mean_ms > 0.0 && c.p99_ms >= c.mean_ms * 0.5), "{report:?}");
    let table = shards::markdown(&report, plan.shards);
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 7, "{table}");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?")
        .bind(&report.database)
        .fetch_one(&db)
        .await
        .unwrap();
    assert!(report.database.starts_with("cityhub_shard_"));
    assert_eq!(left, 0, "the scratch database is dropped");
}
