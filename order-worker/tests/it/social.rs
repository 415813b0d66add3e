//! The follow flow behind the API: the consumer keeps the follower table,
//! the Redis lists and the counts in step with `follows` whatever order and
//! however often events arrive; the relay's duplicates change nothing; the
//! correction job repairs counts that drifted.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::social::{List, Social, SocialError};
use cityhub_core::UserId;
use cityhub_order_worker::jobs::follow_counts::CountJob;
use cityhub_order_worker::jobs::follow_events::FollowHandler;
use cityhub_platform::mq::consumer::{Ack, BatchHandler, Delivery};
use cityhub_testkit::eventually;
use cityhub_testkit::fakes::Fakes;
use sqlx::MySqlPool;

use crate::harness::{Harness, DRAIN};

/// A small deterministic generator (xorshift), so a failing storm can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `n` users, registered as the login rules do (so the users' Bloom filter
/// knows them).
async fn make_users(h: &Harness, n: usize) -> Vec<UserId> {
    h.services.users(n).await
}

fn social(h: &Harness) -> Social {
    h.services.social.clone()
}

/// What the test meant: the pairs following and the blocks, after each call's answer.
#[derive(Default)]
struct Model {
    follows: HashSet<(UserId, UserId)>,
    blocks: HashSet<(UserId, UserId)>,
}

impl Model {
    fn out(&self, user: UserId) -> BTreeSet<UserId> {
        self.follows.iter().filter(|p| p.0 == user).map(|p| p.1).collect()
    }

    fn into_(&self, user: UserId) -> BTreeSet<UserId> {
        self.follows.iter().filter(|p| p.1 == user).map(|p| p.0).collect()
    }
}

/// Every follow event in the outbox, as the relay would publish it.
async fn outbox_deliveries(h: &Harness) -> Vec<Delivery> {
    let rows: Vec<(u64, String)> = sqlx::query_as("SELECT id, payload FROM outbox WHERE topic = ? ORDER BY id")
        .bind(&h.env.settings.social.follow_topic)
        .fetch_all(&h.db)
        .await
        .unwrap();
    rows.into_iter()
        .map(|(id, payload)| Delivery {
            msg_id: format!("m{id}"),
            topic: h.env.settings.social.follow_topic.clone(),
            body: format!("{{\"event_id\":{id},\"payload\":{payload}}}").into_bytes().into(),
            reconsume_times: 0,
            queue_id: 0,
            queue_offset: id as i64,
        })
        .collect()
}

async fn following_set(db: &MySqlPool, table: &str) -> HashSet<(UserId, UserId)> {
    let rows: Vec<(UserId, UserId)> =
        sqlx::query_as(&format!("SELECT follower_id, followee_id FROM {table} WHERE status = 'following'"))
            .fetch_all(db)
            .await
            .unwrap();
    rows.into_iter().collect()
}

async fn zset(kv: &Kv, user: UserId, list: List) -> Option<BTreeSet<UserId>> {
    let key = kv.keys.follow_list(user, list.name());
    let exists: bool = redis::cmd("EXISTS").arg(&key).query_async(&mut kv.conn()).await.unwrap();
    let members: Vec<String> = redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).query_async(&mut kv.conn()).await.unwrap();
    exists.then(|| members.iter().filter(|m| *m != "-").map(|m| m.parse().unwrap()).collect())
}

async fn redis_counts(kv: &Kv, user: UserId) -> (Option<i64>, Option<i64>) {
    redis::cmd("HMGET")
        .arg(kv.keys.follow_counts(user))
        .arg("followers")
        .arg("followings")
        .query_async(&mut kv.conn())
        .await
        .unwrap()
}

async fn mysql_counts(db: &MySqlPool) -> HashMap<UserId, (i64, i64)> {
    let rows: Vec<(UserId, i64, i64)> =
        sqlx::query_as("SELECT user_id, followers, followings FROM follow_counts").fetch_all(db).await.unwrap();
    rows.into_iter().map(|(u, a, b)| (u, (a, b))).collect()
}

/// Every copy agrees with `model`: the follows table, the follower table,
/// every user's two ZSets, and the counts in MySQL and Redis.
async fn assert_agrees(h: &Harness, users: &[UserId], model: &Model) {
    assert_eq!(following_set(&h.db, "follows").await, model.follows, "follows table");
    assert_eq!(following_set(&h.db, "followers").await, model.follows, "followers table");
    let counts = mysql_counts(&h.db).await;
    for &u in users {
        let (out, into) = (model.out(u), model.into_(u));
        assert_eq!(zset(&h.kv, u, List::Followings).await.as_ref(), Some(&out), "followings ZSet of {u}");
        assert_eq!(zset(&h.kv, u, List::Followers).await.as_ref(), Some(&into), "followers ZSet of {u}");
        let want = (into.len() as i64, out.len() as i64);
        assert_eq!(counts.get(&u).copied().unwrap_or((0, 0)), want, "MySQL counts of {u}");
        let (a, b) = redis_counts(&h.kv, u).await;
        assert_eq!((a.unwrap_or(0), b.unwrap_or(0)), want, "Redis counts of {u}");
    }
}

/// Hands `batch` to the consumer until it takes it.
async fn deliver(handler: &FollowHandler, batch: Vec<Delivery>) {
    for _ in 0..20 {
        if handler.handle(batch.clone()).await == Ack::Done {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the consumer kept refusing a batch");
}

#[tokio::test]
async fn a_storm_of_follows_unfollows_and_blocks_delivered_out_of_order_and_twice_leaves_every_copy_agreeing() {
    let h = Harness::start(false, |_| {}).await;
    let users = make_users(&h, 200).await;
    let social = social(&h);
    // Every list is built (empty) first, so the consumer has to keep them.
    for &u in &users {
        social.list(u, List::Followings, None, 1).await.unwrap();
        social.list(u, List::Followers, None, 1).await.unwrap();
    }
    // 3,000 operations among 200 users, on a few hot users so pairs change often.
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let mut model = Model::default();
    for _ in 0..3000 {
        let pick = |rng: &mut Rng| if rng.below(3) == 0 { users[rng.below(10)] } else { users[rng.below(users.len())] };
        let (a, b) = (pick(&mut rng), pick(&mut rng));
        if a == b {
            assert!(matches!(social.follow(a, b).await, Err(SocialError::Myself)));
            continue;
        }
        match rng.below(10) {
            0..=5 => match social.follow(a, b).await {
                Ok(_) => {
                    model.follows.insert((a, b));
                }
                Err(SocialError::BlockedByThem) => assert!(model.blocks.contains(&(b, a))),
                Err(SocialError::BlockedByMe) => assert!(model.blocks.contains(&(a, b))),
                Err(other) => panic!("follow failed: {other}"),
            },
            6..=7 => {
                social.unfollow(a, b).await.unwrap();
                model.follows.remove(&(a, b));
            }
            8 => {
                social.block(a, b).await.unwrap();
                model.blocks.insert((a, b));
                model.follows.remove(&(a, b));
                model.follows.remove(&(b, a));
            }
            _ => {
                social.unblock(a, b).await.unwrap();
                model.blocks.remove(&(a, b));
            }
        }
    }
    // The consumer's input: every event, a quarter of them twice, shuffled,
    // in batches of 8 handed to four consumers at once.
    let events = outbox_deliveries(&h).await;
    assert!(events.len() > 1000, "the storm wrote {} events", events.len());
    let mut input = events.clone();
    for e in &events {
        if rng.below(4) == 0 {
            input.push(e.clone());
        }
    }
    for i in (1..input.len()).rev() {
        input.swap(i, rng.below(i + 1));
    }
    let handler = Arc::new(FollowHandler::new(h.db.clone(), h.kv.clone()));
    let batches: Vec<Vec<Delivery>> = input.chunks(8).map(<[Delivery]>::to_vec).collect();
    let lanes: Vec<Vec<Vec<Delivery>>> =
        (0..4).map(|lane| batches.iter().skip(lane).step_by(4).cloned().collect()).collect();
    let tasks = lanes.into_iter().map(|lane| {
        let handler = Arc::clone(&handler);
        tokio::spawn(async move {
            for batch in lane {
                deliver(&handler, batch).await;
            }
        })
    });
    for task in tasks {
        task.await.unwrap();
    }
    assert_agrees(&h, &users, &model).await;
    let (consumed,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM consumed_events").fetch_one(&h.db).await.unwrap();
    assert_eq!(consumed as usize, events.len(), "each event recorded once");
}

#[tokio::test]
async fn a_relay_dying_between_publishing_and_marking_sends_duplicates_that_change_nothing() {
    let mut h = Harness::start(true, |_| {}).await;
    // The binlog relay's first position, stored before any event was written.
    let binlog = h.env.settings.outbox.relay == cityhub_platform::config::RelayKind::Binlog;
    let first_position = || async {
        sqlx::query_as::<_, (String, u64)>("SELECT file, pos FROM outbox_relay_position WHERE relay = 'binlog'")
            .fetch_optional(&h.db)
            .await
            .unwrap()
    };
    if binlog {
        assert!(eventually(DRAIN, || async { first_position().await.is_some() }).await);
    }
    let start = first_position().await;
    let users = make_users(&h, 6).await;
    let social = social(&h);
    for &u in &users {
        social.list(u, List::Followers, None, 1).await.unwrap();
        social.list(u, List::Followings, None, 1).await.unwrap();
    }
    let mut model = Model::default();
    for (i, &a) in users.iter().enumerate() {
        for &b in &users[i + 1..] {
            social.follow(a, b).await.unwrap();
            model.follows.insert((a, b));
        }
    }
    social.unfollow(users[0], users[1]).await.unwrap();
    model.follows.remove(&(users[0], users[1]));
    let db = h.db.clone();
    let consumed = || async {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM consumed_events").fetch_one(&db).await.unwrap();
        n
    };
    assert!(eventually(DRAIN, || async { consumed().await == 16 }).await, "16 events applied");
    assert_agrees(&h, &users, &model).await;
    // The relay "dies" after publishing: its marks roll back (and the binlog
    // relay's position with them), so every event is published again.
    h.stop_worker().await;
    let topic = &h.env.settings.social.follow_topic;
    sqlx::query("UPDATE outbox SET published_at = NULL WHERE topic = ?").bind(topic).execute(&h.db).await.unwrap();
    if let Some((file, pos)) = start {
        sqlx::query("UPDATE outbox_relay_position SET file = ?, pos = ? WHERE relay = 'binlog'")
            .bind(file)
            .bind(pos)
            .execute(&h.db)
            .await
            .unwrap();
    }
    h.start_worker().await;
    let metrics = cityhub_core::metrics::install();
    let duplicates = || {
        let text = metrics.render();
        text.lines()
            .find(|l| l.starts_with("cityhub_follow_events_total") && l.contains("result=\"duplicate\""))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    assert!(eventually(DRAIN, || async { duplicates() >= 16.0 }).await, "the duplicates arrived");
    assert_eq!(consumed().await, 16);
    assert_agrees(&h, &users, &model).await;
}

#[tokio::test]
async fn wrong_counts_in_mysql_and_redis_are_repaired_by_the_correction_job() {
    // The slow sweep takes two users a round.
    let h = Harness::start(false, |s| s.social.count_sweep_batch = 2).await;
    let users = make_users(&h, 5).await;
    let social = social(&h);
    let mut model = Model::default();
    for &a in &users[1..] {
        social.follow(a, users[0]).await.unwrap();
        model.follows.insert((a, users[0]));
    }
    social.follow(users[0], users[1]).await.unwrap();
    model.follows.insert((users[0], users[1]));
    let handler = FollowHandler::new(h.db.clone(), h.kv.clone());
    deliver(&handler, outbox_deliveries(&h).await).await;
    for &u in &users {
        social.list(u, List::Followers, None, 1).await.unwrap();
        social.list(u, List::Followings, None, 1).await.unwrap();
    }
    assert_agrees(&h, &users, &model).await;

    // Drift: a wrong MySQL row, a wrong Redis hash, and both wrong for a user
    // whose relations changed long ago (only the slow sweep reaches them).
    sqlx::query("UPDATE follow_counts SET followers = 99 WHERE user_id = ?")
        .bind(users[0])
        .execute(&h.db)
        .await
        .unwrap();
    let hset = |user: UserId, field: &'static str, value: i64| {
        let kv = h.kv.clone();
        async move {
            let _: () = redis::cmd("HSET")
                .arg(kv.keys.follow_counts(user))
                .arg(field)
                .arg(value)
                .query_async(&mut kv.conn())
                .await
                .unwrap();
        }
    };
    hset(users[1], "followings", 7).await;
    sqlx::query("UPDATE followers SET updated_at = CURRENT_TIMESTAMP(3) - INTERVAL 1 DAY WHERE follower_id = ?")
        .bind(users[4])
        .execute(&h.db)
        .await
        .unwrap();
    sqlx::query("UPDATE follow_counts SET followings = 5 WHERE user_id = ?")
        .bind(users[4])
        .execute(&h.db)
        .await
        .unwrap();
    hset(users[4], "followings", 3).await;

    let job = CountJob::new(&h.env.settings, h.db.clone(), h.kv.clone());
    let fixed = |c: cityhub_core::social::Correction| (c.fixed_mysql, c.fixed_redis);
    // Round 1: the recently changed users (0 to 3) and the sweep's 0 and 1.
    assert_eq!(fixed(job.round().await.unwrap()), (1, 1), "user 0 in MySQL, user 1 in Redis");
    assert_eq!(redis_counts(&h.kv, users[4]).await.1, Some(3), "not reached yet");
    // Round 2 sweeps 2 and 3, round 3 reaches 4.
    assert_eq!(fixed(job.round().await.unwrap()), (0, 0));
    assert_eq!(fixed(job.round().await.unwrap()), (1, 1), "user 4, by the slow sweep");
    assert_agrees(&h, &users, &model).await;
    for _ in 0..3 {
        assert_eq!(fixed(job.round().await.unwrap()), (0, 0), "nothing left to fix");
    }
}

/// A follow list in Redis that drifted from the projection (a stray
/// member, a lost member with the size still right, a wrong size) is
/// dropped by the correction job, and its next reader rebuilds it true; a
/// list that agrees is left alone. Lists carry the idle TTL, renewed by reads.
#[tokio::test]
async fn drifted_follow_lists_are_dropped_by_the_correction_job_and_rebuilt_true() {
    let h = Harness::start(false, |s| s.social.list_ttl_secs = Duration::from_secs(3600)).await;
    let users = make_users(&h, 6).await;
    let social = social(&h);
    let mut model = Model::default();
    for &a in &users[1..5] {
        social.follow(a, users[0]).await.unwrap();
        model.follows.insert((a, users[0]));
    }
    social.follow(users[5], users[1]).await.unwrap();
    model.follows.insert((users[5], users[1]));
    let handler = FollowHandler::new(h.db.clone(), h.kv.clone());
    deliver(&handler, outbox_deliveries(&h).await).await;
    for &u in &users {
        social.list(u, List::Followers, None, 10).await.unwrap();
        social.list(u, List::Followings, None, 10).await.unwrap();
    }
    assert_agrees(&h, &users, &model).await;
    let key = |u: UserId, list: List| h.kv.keys.follow_list(u, list.name());
    let ttl = |k: String| {
        let kv = h.kv.clone();
        async move { redis::cmd("PTTL").arg(k).query_async::<i64>(&mut kv.conn()).await.unwrap() }
    };
    let idle = ttl(key(users[0], List::Followers)).await;
    assert!((3_500_000..=3_600_000).contains(&idle), "a built list has the idle TTL: {idle} ms");
    let _: () = redis::cmd("PEXPIRE")
        .arg(key(users[0], List::Followers))
        .arg(5_000)
        .query_async(&mut h.kv.conn())
        .await
        .unwrap();
    social.list(users[0], List::Followers, None, 10).await.unwrap();
    assert!(ttl(key(users[0], List::Followers)).await > 3_500_000, "a read renews it");

    // Drift: a stray member (the size wrong too); a member swapped for a
    // stranger (the size right); one list left true.
    let zadd = |k: String, member: u64| {
        let kv = h.kv.clone();
        async move { redis::cmd("ZADD").arg(k).arg(5).arg(member).query_async::<()>(&mut kv.conn()).await.unwrap() }
    };
    zadd(key(users[0], List::Followers), 999_999).await;
    let swapped = key(users[1], List::Followers);
    let _: () = redis::cmd("ZREM").arg(&swapped).arg(users[5]).query_async(&mut h.kv.conn()).await.unwrap();
    zadd(swapped.clone(), 888_888).await;

    let job = CountJob::new(&h.env.settings, h.db.clone(), h.kv.clone());
    let done = job.round().await.unwrap();
    assert_eq!(done.dropped_lists, 2, "{done:?}");
    assert_eq!(zset(&h.kv, users[0], List::Followers).await, None, "dropped");
    assert_eq!(zset(&h.kv, users[1], List::Followers).await, None, "dropped");
    assert!(zset(&h.kv, users[5], List::Followings).await.is_some(), "a true list is kept");
    for &u in &users[..2] {
        social.list(u, List::Followers, None, 10).await.unwrap();
    }
    assert_agrees(&h, &users, &model).await;
    assert_eq!(job.round().await.unwrap().dropped_lists, 0, "nothing left to drop");
}
