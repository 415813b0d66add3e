//! `cityhub parked`: a message the worker parked is listed, replayed once,
//! and refused a second replay.

use std::time::Duration;

use cityhub_platform::mq::publisher::{BatchConfig, BatchPublisher};
use cityhub_testkit::{eventually, mq_client};

use crate::E2e;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_message_is_listed_replayed_once_and_not_twice() {
    let e2e = E2e::start().await;
    let s = e2e.platform.settings.clone();
    let db = cityhub_platform::db::connect(&s.database).await.unwrap();
    let producer = cityhub_platform::mq::start_producer(&mq_client(), &s.mq, "e2e_parked").await.unwrap();
    let publisher = BatchPublisher::spawn(producer, s.mq.order_topic.clone(), BatchConfig::from(&s.mq));
    publisher.publish("junk".into(), b"not an order".to_vec()).await.unwrap();
    let parked = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM parked_messages").fetch_one(&db).await.unwrap() == 1
    };
    assert!(eventually(Duration::from_secs(60), parked).await, "the worker parked the junk message");
    let id: u64 = sqlx::query_scalar("SELECT id FROM parked_messages").fetch_one(&db).await.unwrap();

    let list = e2e.cli().args(["parked", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{text}");
    assert!(text.contains("unparsable") && text.contains("1 message(s)"), "{text}");

    let replay = e2e.cli().args(["parked", "replay", &id.to_string()]).output().unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    assert!(String::from_utf8_lossy(&replay.stdout).contains(&format!("replayed {id}")));
    let again = e2e.cli().args(["parked", "replay", &id.to_string()]).output().unwrap();
    assert!(!again.status.success(), "a message is replayed once");
    assert!(String::from_utf8_lossy(&again.stderr).contains("replayed already"));
    e2e.stop().await;
}
