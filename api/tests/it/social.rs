//! The social routes end to end: their errors, a follow reaching lists,
//! counts, friends, common follows and recommendations through the worker,
//! blocks, paging, a lost list rebuilt, and the follow token bucket.

use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::UserId;
use cityhub_testkit::eventually;
use reqwest::Method;
use serde_json::Value;

use crate::app::{Options, TestApp};

const DRAIN: Duration = Duration::from_secs(60);

async fn send(app: &TestApp, method: Method, path: &str, token: &str) -> (u16, Value) {
    let r = app.http.request(method, app.url(path)).bearer_auth(token).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn follow(app: &TestApp, token: &str, user: UserId) -> (u16, Value) {
    send(app, Method::PUT, &format!("/users/{user}/follow"), token).await
}

/// The user ids of a response's `users`, in order.
fn ids(body: &Value) -> Vec<UserId> {
    body["users"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|u| u["user_id"].as_str().or(u.as_str()).unwrap().parse().unwrap())
        .collect()
}

async fn applied(app: &TestApp) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM consumed_events").fetch_one(&app.db).await.unwrap();
    n
}

async fn follow_events(app: &TestApp) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM outbox WHERE topic = ?")
        .bind(&app.env.settings.social.follow_topic)
        .fetch_one(&app.db)
        .await
        .unwrap();
    n
}

#[tokio::test]
async fn self_follow_unknown_users_and_blocks_each_get_their_own_error_and_write_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let users = app.users(3).await;
    let ((a, ta), (b, tb), (c, _)) = (users[0].clone(), users[1].clone(), users[2].clone());

    let (status, body) = follow(&app, &ta, a).await;
    assert_eq!((status, body["code"].as_str()), (422, Some("self_relation")), "{body}");
    let (status, body) = follow(&app, &ta, UserId(9_000_000)).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("user_not_found")), "{body}");
    let (status, body) = send(&app, Method::PUT, &format!("/users/{a}/block"), &ta).await;
    assert_eq!((status, body["code"].as_str()), (422, Some("self_relation")), "{body}");
    let (status, _) = app.get_at(&app.base, &format!("/users/{b}/followers"), None).await;
    assert_eq!(status, 401);
    assert_eq!(follow_events(&app).await, 0);

    // b blocks a: a cannot follow b (403), b cannot follow a until b unblocks (409).
    let (status, body) = send(&app, Method::PUT, &format!("/users/{a}/block"), &tb).await;
    assert_eq!((status, body["blocked"].as_bool()), (200, Some(true)), "{body}");
    let (status, body) = follow(&app, &ta, b).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("blocked_by_user")), "{body}");
    let (status, body) = follow(&app, &tb, a).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("user_blocked")), "{body}");
    assert_eq!(follow_events(&app).await, 0, "refused follows write no event");
    let (_, blocks) = app.get_at(&app.base, "/users/me/blocks", Some(&tb)).await;
    assert_eq!(ids(&blocks), [a]);

    // A second follow succeeds and writes nothing; so does a second unfollow.
    let (status, first) = follow(&app, &ta, c).await;
    assert_eq!((status, first["changed"].as_bool()), (200, Some(true)), "{first}");
    let (status, again) = follow(&app, &ta, c).await;
    assert_eq!((status, again["changed"].as_bool(), again["following"].as_bool()), (200, Some(false), Some(true)));
    assert_eq!(follow_events(&app).await, 1);
    for expect_changed in [true, false] {
        let (status, body) = send(&app, Method::DELETE, &format!("/users/{c}/follow"), &ta).await;
        assert_eq!((status, body["changed"].as_bool()), (200, Some(expect_changed)), "{body}");
    }
    let (status, body) = send(&app, Method::DELETE, &format!("/users/{a}/block"), &tb).await;
    assert_eq!((status, body["blocked"].as_bool()), (200, Some(false)), "{body}");
    assert_eq!(follow(&app, &ta, b).await.0, 200, "unblocked");
    let (versions,): (i64,) =
        sqlx::query_as("SELECT CAST(SUM(version) AS SIGNED) FROM follows").fetch_one(&app.db).await.unwrap();
    assert_eq!((follow_events(&app).await, versions), (3, 3), "one event per change, one version per change");
}

#[tokio::test]
async fn a_follow_reaches_lists_counts_friends_common_follows_and_recommendations_and_a_block_undoes_it() {
    let app = TestApp::spawn().await;
    let users = app.users(5).await;
    let id = |i: usize| users[i].0;
    let token = |i: usize| users[i].1.as_str();
    let (a, b, c, d, e) = (0, 1, 2, 3, 4);
    // a <-> b, b <-> c, a <-> e friends; b follows d; e follows c.
    for (x, y) in [(a, b), (b, a), (b, c), (c, b), (a, e), (e, a), (b, d), (e, c)] {
        assert_eq!(follow(&app, token(x), id(y)).await.0, 200);
    }
    let followers_of = |user: UserId| {
        let app = &app;
        async move { ids(&app.get_at(&app.base, &format!("/users/{user}/followers"), Some(token(a))).await.1) }
    };
    assert!(eventually(DRAIN, || async { applied(&app).await == 8 }).await, "the consumer applied all 8 events");
    let mut got = followers_of(id(b)).await;
    got.sort();
    assert_eq!(got, [id(a), id(c)], "b's followers");
    let (_, counts) = app.get_at(&app.base, &format!("/users/{}/counts", id(b)), Some(token(a))).await;
    assert_eq!((counts["followers"].as_i64(), counts["followings"].as_i64()), (Some(2), Some(3)), "{counts}");
    let (_, friends) = app.get_at(&app.base, "/users/me/friends", Some(token(b))).await;
    let mut got = ids(&friends);
    got.sort();
    assert_eq!(got, [id(a), id(c)]);
    let (_, common) = app.get_at(&app.base, &format!("/users/{}/common-follows", id(e)), Some(token(a))).await;
    assert_eq!(ids(&common), Vec::<UserId>::new(), "a follows b and e; e follows a and c");
    let (_, common) = app.get_at(&app.base, &format!("/users/{}/common-follows", id(c)), Some(token(a))).await;
    assert_eq!(ids(&common), [id(b)]);
    let path = format!("/users/{}/following-status?ids={},{},{},{}", id(a), id(b), id(c), id(d), id(e));
    let (_, status) = app.get_at(&app.base, &path, Some(token(c))).await;
    let answers: Vec<bool> =
        status["results"].as_array().unwrap().iter().map(|r| r["following"].as_bool().unwrap()).collect();
    assert_eq!(answers, [true, false, false, true]);
    // a's friends are b and e; they follow c (both) and d (b): c first.
    let (_, recs) = app.get_at(&app.base, "/users/me/recommendations", Some(token(a))).await;
    assert_eq!(ids(&recs), [id(c), id(d)], "{recs}");
    assert_eq!(recs["users"][0]["friends"].as_u64(), Some(2));

    // b blocks a: both follows end; a's friends and recommendations follow.
    assert_eq!(send(&app, Method::PUT, &format!("/users/{}/block", id(a)), token(b)).await.0, 200);
    assert!(eventually(DRAIN, || async { applied(&app).await == 10 }).await, "both cancels applied");
    assert_eq!(followers_of(id(b)).await, [id(c)], "a no longer follows b");
    assert!(!followers_of(id(a)).await.contains(&id(b)), "b no longer follows a");
    let (_, friends) = app.get_at(&app.base, "/users/me/friends", Some(token(a))).await;
    assert_eq!(ids(&friends), [id(e)]);
    let (_, recs) = app.get_at(&app.base, "/users/me/recommendations", Some(token(a))).await;
    assert_eq!(ids(&recs), [id(c)], "only e is a's friend now, and e follows c");
    let (_, counts) = app.get_at(&app.base, &format!("/users/{}/counts", id(b)), Some(token(c))).await;
    assert_eq!((counts["followers"].as_i64(), counts["followings"].as_i64()), (Some(1), Some(2)), "{counts}");
}

#[tokio::test]
async fn lists_page_newest_first_and_a_lost_list_is_rebuilt_with_the_same_content() {
    // A list of 20 or more is "hot": its first page is also kept in process memory.
    let app = TestApp::spawn_with(Options { worker: true }, |s| s.social.hot_list_min = 20).await;
    let users = app.users(26).await;
    let (star, star_token) = users[0].clone();
    for (_, token) in &users[1..] {
        assert_eq!(follow(&app, token, star).await.0, 200);
    }
    let page = |cursor: Option<String>| {
        let app = &app;
        let token = star_token.clone();
        async move {
            let path = match cursor {
                Some(c) => format!("/users/{star}/followers?limit=10&cursor={c}"),
                None => format!("/users/{star}/followers?limit=10"),
            };
            let (status, body) = app.get_at(&app.base, &path, Some(&token)).await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let walk = || async {
        let (mut all, mut cursor, mut pages) = (Vec::new(), None, 0);
        loop {
            let body = page(cursor).await;
            all.extend(body["users"].as_array().unwrap().iter().map(|u| {
                let since = chrono::DateTime::parse_from_rfc3339(u["since"].as_str().unwrap()).unwrap();
                (since, u["user_id"].as_str().unwrap().parse::<UserId>().unwrap())
            }));
            pages += 1;
            cursor = body["next_cursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return (all, pages);
            }
        }
    };
    assert!(eventually(DRAIN, || async { applied(&app).await == 25 }).await, "every follow applied");
    let (before, pages) = walk().await;
    assert_eq!(pages, 3);
    let mut seen: Vec<UserId> = before.iter().map(|e| e.1).collect();
    seen.sort();
    let mut want: Vec<UserId> = users[1..].iter().map(|u| u.0).collect();
    want.sort();
    assert_eq!(seen, want, "every follower exactly once across the pages");
    assert!(before.windows(2).all(|w| w[0].0 >= w[1].0), "newest first");

    let key = app.kv.keys.follow_list(star, "followers");
    let raw = || async {
        let r: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(&key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query_async(&mut app.kv.conn())
            .await
            .unwrap();
        r
    };
    let stored = raw().await;
    assert_eq!(stored.len(), 26, "25 followers and the built marker");
    let _: () = redis::cmd("DEL").arg(&key).query_async(&mut app.kv.conn()).await.unwrap();
    // The hot first page comes from memory: nothing rebuilt the list.
    let first = page(None).await;
    assert_eq!(first["users"].as_array().unwrap().len(), 10);
    let exists: bool = redis::cmd("EXISTS").arg(&key).query_async(&mut app.kv.conn()).await.unwrap();
    assert!(!exists, "the first page was served from memory");
    // The next page needs the list: it is rebuilt from MySQL, the same.
    let (after, _) = walk().await;
    assert_eq!(after, before);
    assert_eq!(raw().await, stored);
}

#[tokio::test]
async fn follows_share_a_token_bucket_per_user() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.follow = "user: bucket 2 at 0.1/s".parse().unwrap();
    })
    .await;
    let users = app.users(4).await;
    assert_eq!(follow(&app, &users[0].1, users[1].0).await.0, 200);
    assert_eq!(send(&app, Method::PUT, &format!("/users/{}/block", users[2].0), &users[0].1).await.0, 200);
    let (status, body) = follow(&app, &users[0].1, users[3].0).await;
    assert_eq!((status, body["code"].as_str()), (429, Some("rate_limited")), "{body}");
    assert_eq!(follow(&app, &users[1].1, users[3].0).await.0, 200, "another user has their own bucket");
    assert_eq!(follow_events(&app).await, 2, "the refused follow wrote nothing");
}

/// Cursors and offsets taken from a request saturate: the largest cursor
/// each paged route accepts is an empty page, never an overflow (a panic in
/// this debug build).
#[tokio::test]
async fn the_largest_cursors_are_empty_pages() {
    let app = TestApp::spawn_without_worker().await;
    let (user, token) = app.login("13800000301").await;
    let max = u64::MAX;
    for path in [
        format!("/users/me/recommendations?cursor={max}"),
        format!("/users/me/blocks?cursor={max}"),
        format!("/orders?cursor={max}"),
        format!("/users/{user}/followers?cursor={max}"),
    ] {
        let (status, body) = app.get_at(&app.base, &path, Some(&token)).await;
        assert!(status == 200 || status == 400, "{path}: {status} {body}");
    }
    app.shutdown().await;
}

/// A signed-in client reading the lists and counts of 500 made-up user ids,
/// 50 at a time, costs no MySQL statement (the users' Bloom filter refuses
/// them in Redis) and gets 404 each; a real user's lists are still read
/// and a user registered after the filter was built is known at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_the_lists_of_made_up_users_costs_no_mysql() {
    use futures::StreamExt;
    cityhub_testkit::logs::init_with("warn,cityhub=info,sqlx::query=trace");
    let app = TestApp::spawn_without_worker().await;
    let users = app.users(2).await;
    let ((a, ta), (b, _)) = (users[0].clone(), users[1].clone());
    assert!(app.state.auth.known().ensure().await.unwrap(), "the filter is built from MySQL");
    let (c, _) = app.users(3).await[2].clone();

    let before = cityhub_testkit::logs::mysql_statements();
    let paths: Vec<String> = (0..500u64)
        .map(|i| {
            let made_up = 5_000_000 + i * 7919;
            let what = ["followers", "followings", "counts", "common-follows"][i as usize % 4];
            format!("/users/{made_up}/{what}")
        })
        .collect();
    let statuses: Vec<(u16, Value)> =
        futures::stream::iter(&paths).map(|p| send(&app, Method::GET, p, &ta)).buffer_unordered(50).collect().await;
    let spent = cityhub_testkit::logs::mysql_statements() - before;
    assert!(before > 0, "the statement count is captured");
    for (status, body) in &statuses {
        assert_eq!((*status, body["code"].as_str()), (404, Some("user_not_found")), "{body}");
    }
    // Bloom filters pass about 1% of made-up ids; each then costs its lookups.
    assert!(spent <= 40, "500 reads of made-up users cost {spent} MySQL statements");

    for user in [a, b, c] {
        for what in ["followers", "followings", "counts"] {
            let (status, body) = send(&app, Method::GET, &format!("/users/{user}/{what}"), &ta).await;
            assert_eq!(status, 200, "{user} {what}: {body}");
        }
    }
    app.shutdown().await;
}

/// Friends and common follows are scanned a bounded chunk per call: a user
/// following 1,000 others of whom 3 follow back gets them all by scrolling,
/// each call reading at most 10 followings per friend asked for (the
/// cursor moves at most that far), never the whole intersection.
#[tokio::test]
async fn friends_and_common_follows_are_paged_with_bounded_work_per_call() {
    use redis::AsyncCommands;
    let app = TestApp::spawn_without_worker().await;
    let user = app.users(1).await[0].0;
    let (followings, followers) =
        (app.kv.keys.follow_list(user, "followings"), app.kv.keys.follow_list(user, "followers"));
    let mut conn = app.kv.conn();
    // Built lists (the marker `-` at 0): 1,000 followings, the three oldest
    // of whom follow back.
    let members: Vec<(i64, u64)> = (1..=1000u64).map(|i| (i as i64, 5_000_000 + i)).collect();
    for (key, members) in [(&followings, &members[..]), (&followers, &members[..3])] {
        let _: () = conn.zadd(key, "-", 0).await.unwrap();
        let _: () = conn.zadd_multiple(key, members).await.unwrap();
    }

    let limit = 20u32;
    for scan in ["friends", "common"] {
        let (mut got, mut cursor, mut calls) = (Vec::new(), None, 0);
        loop {
            let page = match scan {
                "friends" => app.state.social.friends(user, cursor, limit).await.unwrap(),
                _ => app.state.social.common_follows(user, user, cursor, limit).await.unwrap(),
            };
            calls += 1;
            assert!(page.entries.len() <= limit as usize);
            // The cursor is a follow time here: it moves at most 10 × limit.
            let from = cursor.map_or(1001, |c: cityhub_core::social::Cursor| c.at_ms);
            if let Some(next) = page.next {
                assert!(from - next.at_ms <= i64::from(limit) * 10, "{scan}: one call scanned {}", from - next.at_ms);
            }
            got.extend(page.entries.iter().map(|e| e.user_id.get()));
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
            assert!(calls < 100, "{scan}: the scan does not end");
        }
        let want: Vec<u64> = if scan == "friends" {
            vec![5_000_003, 5_000_002, 5_000_001]
        } else {
            (5_000_001..=5_001_000).rev().collect()
        };
        assert_eq!(got, want, "{scan}");
        let least = if scan == "friends" { 1000 / (limit as usize * 10) } else { 1000 / limit as usize };
        assert!(calls >= least, "{scan}: {calls} calls");
    }
    app.shutdown().await;
}

/// Redis back from an older snapshot holds a "complete" user filter without
/// the users registered since: it must not refuse them (its generation is
/// not Redis's now), and the job's next run builds it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_filter_restored_from_an_older_snapshot_refuses_no_new_user() {
    let mut redis = cityhub_testkit::PrivateRedis::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.redis.url = cityhub_core::config::Secret::new(url);
        s.redis.cluster_nodes.clear();
    })
    .await;
    let (old, token) = app.users(1).await[0].clone();
    let known = app.state.auth.known().clone();
    assert!(known.ensure().await.unwrap());
    redis.snapshot().await;
    let (new, _) = app.users(2).await[1].clone();
    assert_ne!(new, old);
    redis.restart_from_snapshot().await;
    let followers = |user: UserId| {
        let (app, token) = (&app, token.clone());
        async move { send(app, Method::GET, &format!("/users/{user}/followers"), &token).await }
    };
    let served = eventually(Duration::from_secs(10), || async { followers(old).await.0 == 200 }).await;
    assert!(served, "Redis did not come back: {:?}", followers(old).await);
    assert_eq!(followers(new).await.0, 200, "a user registered after the snapshot was refused");
    assert!(known.ensure().await.unwrap(), "the stale filter is built again");
    assert_eq!(followers(new).await.0, 200);
    assert_eq!(followers(UserId(new.get() + 1_000_000)).await.0, 404, "made-up ids are refused again");
    app.shutdown().await;
}
