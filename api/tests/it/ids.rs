//! Order-id node leases on the real Redis: a process issues ids only while it
//! holds its lease, a taken fixed node is refused, and after Redis loses the
//! leases no two processes issue as one node at once.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use cityhub_api::AppState;
use cityhub_platform::ids::{IdError, LeaseError, NodeLease};
use cityhub_testkit::{mq_client, TestEnv};
use redis::AsyncCommands;

use crate::app::{accepted, Options, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_makes_seckill_answer_503_until_it_is_held_again_and_no_id_repeats() {
    let mut app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.ids.node_id = Some(7);
        s.ids.lease_window_ms = Duration::from_millis(300);
        s.ids.lease_ttl_ms = Duration::from_millis(3000);
    })
    .await;
    let voucher = app.on_sale(200).await;
    let users = app.users(200).await;
    let mut next = users.iter();
    let mut answers = Vec::new();
    let mut sold = Vec::new();
    for user in next.by_ref().take(5) {
        answers.push(app.seckill(&user.1, voucher).await);
        sold.push(user.clone());
    }
    assert!(answers.iter().all(|(s, _)| *s == 202), "{answers:?}");

    // Another process takes node 7 (as after a Redis failover).
    let lease = app.kv.keys.id_node_lease(7);
    let opts = redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(2500));
    let _: () = app.kv.conn().set_options(&lease, "intruder", opts).await.unwrap();

    let mut refused = false;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let user = next.next().unwrap();
        let (status, body) = app.seckill(&user.1, voucher).await;
        if status == 503 {
            assert_eq!(body["code"], "order_ids_unavailable", "{body}");
            refused = true;
            break;
        }
        answers.push((status, body));
        sold.push(user.clone());
    }
    assert!(refused, "seckill kept issuing ids after the lease was lost");

    // While the intruder holds node 7, a second process configured with it is refused.
    let second = AppState::build(app.env.settings.clone(), mq_client()).await;
    let err = second.err().expect("a taken fixed node is refused");
    assert!(format!("{err:#}").contains("held by another process"), "{err:#}");

    // The intruder's lease expires; node 7 is held again and sales resume.
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(15), "seckill never resumed once node 7 was free again");
        let user = next.next().unwrap();
        let answer = app.seckill(&user.1, voucher).await;
        if answer.0 == 202 {
            sold.push(user.clone());
            answers.push(answer);
            break;
        }
        assert_eq!(answer.1["code"], "order_ids_unavailable", "{answer:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let ids: Vec<u64> = answers.iter().map(|(_, b)| b["order_id"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "an order id repeated: {ids:?}");
    app.start_worker().await;
    assert_eq!(app.wait_for_orders(voucher, ids.len() as i64, Duration::from_secs(60)).await, ids.len() as i64);
    app.assert_invariants(voucher, &accepted(&sold, &answers)).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_redis_loses_a_lease_key_two_holders_of_one_node_never_issue_at_once() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    // Renewals every second, the first as the lease is granted; the flush
    // below comes 300 ms after it, so the new holder takes node 5 long before
    // the old one looks again, even on a loaded machine.
    let timing =
        cityhub_platform::ids::LeaseTiming { ttl: Duration::from_millis(6000), window: Duration::from_millis(3000) };
    let old = NodeLease::acquire(&kv, Some(5), timing).await.unwrap();
    let old_ids = old.ids();
    assert!(old_ids.next_id().is_ok());
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Redis lost the lease key (evicted, or a failover to a replica that
    // never saw it), whatever else it kept.
    let _: () = kv.conn().del(kv.keys.id_node_lease(5)).await.unwrap();
    let flushed = Instant::now();

    // A new process takes node 5 at once; it may issue only once the old
    // holder must have noticed, and the old holder must stop by then.
    let issuing = {
        let old_ids = old_ids.clone();
        tokio::spawn(async move {
            let mut issued = Vec::new();
            while flushed.elapsed() < timing.window + Duration::from_secs(1) {
                if let Ok(id) = old_ids.next_id() {
                    issued.push((Instant::now(), id));
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            issued
        })
    };
    let new =
        NodeLease::acquire(&kv, Some(5), timing).await.expect("the new holder takes node 5 before the old one renews");
    let new_from = Instant::now();
    assert!(new_from - flushed >= timing.window, "the new holder did not wait out the old holder's window");
    let new_ids: Vec<u64> = (0..1000).map(|_| new.ids().next_id().unwrap()).collect();
    let old_issued = issuing.await.unwrap();

    assert!(old_issued.iter().all(|(at, _)| *at < new_from), "the old holder issued after the new one started");
    assert_eq!(old_ids.next_id(), Err(IdError::NoLease), "the old holder cannot win node 5 back");
    let all: HashSet<u64> = old_issued.iter().map(|(_, id)| *id).chain(new_ids.iter().copied()).collect();
    assert_eq!(all.len(), old_issued.len() + new_ids.len(), "an id repeated");

    // A third process asking for node 5 is refused while it is held.
    assert!(matches!(NodeLease::acquire(&kv, Some(5), timing).await, Err(LeaseError::Taken(5))));
    new.release().await;
    old.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_given_up_cleanly_is_taken_again_at_once_and_only_then() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let timing =
        cityhub_platform::ids::LeaseTiming { ttl: Duration::from_millis(6000), window: Duration::from_millis(3000) };
    let first = NodeLease::acquire(&kv, Some(9), timing).await.unwrap();
    first.release().await;
    let asked = Instant::now();
    let second = NodeLease::acquire(&kv, Some(9), timing).await.unwrap();
    assert!(asked.elapsed() < timing.window / 2, "a cleanly freed node made its taker wait {:?}", asked.elapsed());
    assert!(second.ids().next_id().is_ok());
    second.release().await;

    // A "free" mark of another generation (a copy of Redis from the past) is not trusted.
    let _: () = kv.conn().set(kv.keys.id_node_lease(9), "free:1").await.unwrap();
    let asked = Instant::now();
    let third = NodeLease::acquire(&kv, Some(9), timing).await.unwrap();
    assert!(asked.elapsed() >= timing.window, "a stale free mark was trusted");
    third.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_whose_lease_key_redis_lost_takes_it_back_without_a_pause_in_issuing() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let timing =
        cityhub_platform::ids::LeaseTiming { ttl: Duration::from_millis(6000), window: Duration::from_millis(3000) };
    let lease = NodeLease::acquire(&kv, Some(11), timing).await.unwrap();
    let key = kv.keys.id_node_lease(11);
    let owner: String = kv.conn().get(&key).await.unwrap();

    // Redis lost the key (a restart, a failover to a replica that never saw it).
    let _: () = kv.conn().del(&key).await.unwrap();
    let lost = Instant::now();
    let mut refused = 0;
    let mut issued = 0;
    // At least two renewals (every window / 3) come and go meanwhile.
    while lost.elapsed() < timing.window {
        match lease.ids().next_id() {
            Ok(_) => issued += 1,
            Err(_) => refused += 1,
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let now: Option<String> = kv.conn().get(&key).await.unwrap();
    assert_eq!(now.as_deref(), Some(owner.as_str()), "the holder did not take its node back");
    assert_eq!(refused, 0, "issuing paused after the key was lost ({issued} issued)");
    lease.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taker_that_waited_out_a_missing_key_does_not_issue_if_the_earlier_holder_took_it_back() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let timing =
        cityhub_platform::ids::LeaseTiming { ttl: Duration::from_millis(6000), window: Duration::from_millis(1500) };
    let key = kv.keys.id_node_lease(12);
    let taking = {
        let kv = kv.clone();
        tokio::spawn(async move { NodeLease::acquire(&kv, Some(12), timing).await })
    };
    // The taker found no key and waits its window; the earlier holder, whose
    // key Redis lost, takes the node back meanwhile.
    let started = Instant::now();
    loop {
        let held: Option<String> = kv.conn().get(&key).await.unwrap();
        if held.is_some() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the taker never wrote its token");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _: () = kv.conn().set(&key, "earlier-holder").await.unwrap();
    let taken = taking.await.unwrap();
    assert!(matches!(taken, Err(LeaseError::Taken(12))), "the taker issued as a node taken back from it");
}
