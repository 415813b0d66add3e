//! Notes, likes, the hot list and the follow feed, on the real services.

use std::collections::HashMap;
use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::notes::NewNote;
use cityhub_core::{NoteId, ShopId, UserId};
use futures::future::join_all;
use redis::AsyncCommands;
use reqwest::Method;
use serde_json::{json, Value};

use crate::app::{eventually, Options, TestApp};

async fn send(app: &TestApp, method: Method, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, Value) {
    let mut req = app.http.request(method, app.url(path));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req.json(body);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn publish(app: &TestApp, author: UserId, shop: ShopId, title: &str) -> NoteId {
    let new = NewNote { author, shop_id: shop, title: title.into(), content: "good".into(), images: vec![] };
    app.state.notes.publish(new).await.unwrap().id
}

/// `(notes.liked, note_likes rows, ZSet members without the marker)`.
async fn like_state(app: &TestApp, note: NoteId) -> (i64, i64, i64) {
    let liked: i64 =
        sqlx::query_scalar("SELECT liked FROM notes WHERE id = ?").bind(note).fetch_one(&app.db).await.unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM note_likes WHERE note_id = ?")
        .bind(note)
        .fetch_one(&app.db)
        .await
        .unwrap();
    let members: i64 = app.kv.conn().zcard(app.kv.keys.note_likes(note)).await.unwrap();
    (liked, rows, members - 1)
}

/// One shopper toggles a like 50 times at once while ten others like the
/// note once each: every toggle flips, and MySQL's count, its rows and the
/// ZSet all end where the toggles say, moved by one per real change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_toggles_by_one_user_move_the_count_by_exactly_one_per_change() {
    let app = TestApp::spawn_without_worker().await;
    let users = app.users(11).await;
    let note = publish(&app, users[0].0, app.shop().await, "noodles").await;
    let path = format!("/notes/{note}/like");
    let toggles = (0..50).map(|_| send(&app, Method::PUT, &path, Some(&users[0].1), None));
    let others = users[1..].iter().map(|(_, t)| send(&app, Method::PUT, &path, Some(t), None));
    let (toggled, liked) = tokio::join!(join_all(toggles), join_all(others));
    assert!(toggled.iter().chain(&liked).all(|(s, _)| *s == 200), "{toggled:?} {liked:?}");
    let on = toggled.iter().filter(|(_, b)| b["liked"] == true).count();
    assert_eq!(on, 25, "each toggle flips the previous one: {toggled:?}");
    assert_eq!(like_state(&app, note).await, (10, 10, 10), "an even number of toggles leaves no like");

    let (status, body) = send(&app, Method::PUT, &path, Some(&users[0].1), None).await;
    assert_eq!((status, body["liked"].as_bool(), body["likes"].as_i64()), (200, Some(true), Some(11)));
    assert_eq!(like_state(&app, note).await, (11, 11, 11));
    app.shutdown().await;
}

/// A note's page: the first five likers in like order, whether the viewer
/// likes it; the ZSet rebuilt from MySQL when Redis lost it; bad input
/// refused with nothing written.
#[tokio::test]
async fn a_note_shows_its_first_five_likers_in_order_and_its_likes_survive_redis_losing_them() {
    let app = TestApp::spawn_without_worker().await;
    let users = app.users(7).await;
    let shop = app.shop().await;
    let (status, created) = send(
        &app,
        Method::POST,
        "/notes",
        Some(&users[0].1),
        Some(&json!({ "shop_id": shop, "title": "Dumplings", "content": "crisp", "images": ["https://img.example/1.jpg"] })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let note: NoteId = created["id"].as_str().unwrap().parse().unwrap();
    for (_, token) in &users[1..] {
        assert_eq!(send(&app, Method::PUT, &format!("/notes/{note}/like"), Some(token), None).await.0, 200);
    }
    let liker_ids = |body: &Value| -> Vec<String> {
        body["first_likers"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
    };
    let expected: Vec<String> = users[1..6].iter().map(|(id, _)| id.to_string()).collect();
    let (status, page) = send(&app, Method::GET, &format!("/notes/{note}"), Some(&users[2].1), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!((page["likes"].as_i64(), page["liked"].as_bool()), (Some(6), Some(true)));
    assert_eq!(liker_ids(&page), expected, "first five in like order");
    assert_eq!(page["images"], json!(["https://img.example/1.jpg"]));
    let (_, anonymous) = send(&app, Method::GET, &format!("/notes/{note}"), None, None).await;
    assert!(anonymous["liked"].is_null());

    // Redis lost the ZSet: the next reader rebuilds it from note_likes.
    let _: () = app.kv.conn().del(app.kv.keys.note_likes(note)).await.unwrap();
    let (_, rebuilt) = send(&app, Method::GET, &format!("/notes/{note}"), Some(&users[0].1), None).await;
    assert_eq!((rebuilt["likes"].as_i64(), rebuilt["liked"].as_bool()), (Some(6), Some(false)));
    assert_eq!(liker_ids(&rebuilt), expected, "like order kept through the rebuild");
    // And a toggle finding it missing rebuilds it too.
    let _: () = app.kv.conn().del(app.kv.keys.note_likes(note)).await.unwrap();
    let (_, body) = send(&app, Method::PUT, &format!("/notes/{note}/like"), Some(&users[1].1), None).await;
    assert_eq!((body["liked"].as_bool(), body["likes"].as_i64()), (Some(false), Some(5)));
    assert_eq!(like_state(&app, note).await, (5, 5, 5));
    let (_, after) = send(&app, Method::GET, &format!("/notes/{note}"), None, None).await;
    assert_eq!(liker_ids(&after)[0], users[2].0.to_string(), "the first liker left");

    let notes_before = like_state(&app, note).await;
    let bad = |field: &str, value: Value| {
        let mut b = json!({ "shop_id": shop, "title": "t", "content": "c", "images": [] });
        b[field] = value;
        b
    };
    for (body, status) in [
        (bad("images", json!((0..10).map(|i| format!("https://img.example/{i}.jpg")).collect::<Vec<_>>())), 422),
        (bad("images", json!(["ftp://img.example/1.jpg"])), 422),
        (bad("images", json!(["https://img.example/a b.jpg"])), 422),
        // Quotes and backslashes would double when stored as JSON.
        (bad("images", json!(vec![format!("http://{}", "\\".repeat(505)); 9])), 422),
        (bad("images", json!(["https://img.example/\"x\".jpg"])), 422),
        (bad("title", json!("")), 422),
        (bad("title", json!("x".repeat(129))), 422),
        (bad("content", json!("   ")), 422),
        (bad("shop_id", json!(shop.get() + 1000)), 422),
        (bad("extra", json!(1)), 422),
    ] {
        let (got, err) = send(&app, Method::POST, "/notes", Some(&users[0].1), Some(&body)).await;
        assert_eq!(got / 100, status / 100, "{body}: {err}");
        assert!(err["code"].is_string() && err["message"].is_string(), "{err}");
    }
    assert_eq!(send(&app, Method::POST, "/notes", None, Some(&bad("title", json!("t")))).await.0, 401);
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(&app.db).await.unwrap();
    let events: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM outbox").fetch_one(&app.db).await.unwrap();
    assert_eq!((count, events), (1, 1), "refused notes write no row and no event");
    assert_eq!(like_state(&app, note).await, notes_before);
    for (method, path, status) in [
        (Method::GET, "/notes/987654".to_owned(), 404),
        (Method::GET, "/notes/x".to_owned(), 400),
        (Method::PUT, "/notes/987654/like".to_owned(), 404),
        (Method::GET, format!("/shops/{}/notes?page=0", shop), 422),
        (Method::GET, "/shops/987654/notes".to_owned(), 404),
        (Method::GET, "/notes/hot?page=51".to_owned(), 422),
    ] {
        let (got, err) = send(&app, method, &path, Some(&users[0].1), None).await;
        assert_eq!(got, status, "{path}: {err}");
    }
    app.shutdown().await;
}

/// The hot list sorts by likes (its order at most `notes.hot_ttl_secs`
/// old); a shop's notes come newest first, a new one at once.
#[tokio::test]
async fn the_hot_list_follows_likes_and_a_shops_notes_come_newest_first() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| s.notes.hot_ttl_secs = Duration::from_secs(1)).await;
    let users = app.users(3).await;
    let shop = app.shop().await;
    let a = publish(&app, users[0].0, shop, "a").await;
    let b = publish(&app, users[0].0, shop, "b").await;
    let titles = |body: &Value| -> Vec<String> {
        body["notes"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_owned()).collect()
    };
    let (_, list) = send(&app, Method::GET, &format!("/shops/{shop}/notes"), None, None).await;
    assert_eq!(titles(&list), ["b", "a"]);
    let (_, hot) = send(&app, Method::GET, "/notes/hot", None, None).await;
    assert_eq!(titles(&hot), ["b", "a"], "no likes yet: newest first");
    for (_, token) in &users[1..] {
        send(&app, Method::PUT, &format!("/notes/{a}/like"), Some(token), None).await;
    }
    let moved = eventually(Duration::from_secs(5), || async {
        let (_, hot) = send(&app, Method::GET, "/notes/hot", None, None).await;
        titles(&hot) == ["a", "b"] && hot["notes"][0]["likes"] == 2
    })
    .await;
    assert!(moved, "the hot list did not follow the likes");
    let c = publish(&app, users[1].0, shop, "c").await;
    let (_, list) = send(&app, Method::GET, &format!("/shops/{shop}/notes"), None, None).await;
    assert_eq!(titles(&list), ["c", "b", "a"], "{c} {b}");
    app.shutdown().await;
}

/// Waits until `user`'s inbox holds `n` notes.
async fn inbox_reaches(app: &TestApp, user: UserId, n: usize) -> bool {
    eventually(Duration::from_secs(30), || async {
        let size: usize = app.kv.conn().zcard(app.kv.keys.feed_inbox(user)).await.unwrap();
        size >= n
    })
    .await
}

/// A page of `token`'s feed: note ids and the next cursor.
async fn feed_page(app: &TestApp, token: &str, query: &str) -> (Vec<String>, Option<(i64, u64)>) {
    let (status, body) = send(app, Method::GET, &format!("/feed?{query}"), Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    let ids = body["notes"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap().to_owned()).collect();
    let next = body["next_max"].as_i64().map(|m| (m, body["next_offset"].as_u64().unwrap()));
    (ids, next)
}

/// A follower pages through 100 notes while the author publishes 30 more:
/// each old note shows exactly once and the scroll ends; the new ones wait
/// at the top. An unfollowed author's next notes stop arriving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_scrolls_a_hundred_notes_while_thirty_arrive_and_sees_each_once() {
    let app = TestApp::spawn().await;
    let users = app.users(3).await;
    let (author, (reader, reader_token), (other, other_token)) = (users[0].0, users[1].clone(), users[2].clone());
    for token in [&reader_token, &other_token] {
        assert_eq!(send(&app, Method::PUT, &format!("/users/{author}/follow"), Some(token), None).await.0, 200);
    }
    let shop = app.shop().await;
    // The follow reaches the projection the push reads before the notes.
    let projected = eventually(Duration::from_secs(30), || async {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM followers WHERE followee_id = ? AND status = 'following'")
                .bind(author)
                .fetch_one(&app.db)
                .await
                .unwrap();
        n == 2
    })
    .await;
    assert!(projected);
    let mut old = Vec::new();
    for i in 0..100 {
        old.push(publish(&app, author, shop, &format!("old {i}")).await.to_string());
    }
    assert!(inbox_reaches(&app, reader, 100).await, "the notes were not pushed");

    let (mut seen, mut query) = (Vec::new(), "count=10".to_owned());
    let mut new = Vec::new();
    for page in 0.. {
        let (ids, next) = feed_page(&app, &reader_token, &query).await;
        seen.extend(ids);
        if page == 2 {
            for i in 0..30 {
                new.push(publish(&app, author, shop, &format!("new {i}")).await.to_string());
            }
            assert!(inbox_reaches(&app, reader, 130).await);
        }
        match next {
            Some((max, offset)) => query = format!("count=10&max={max}&offset={offset}"),
            None => break,
        }
        assert!(page < 30, "the scroll never ended");
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in &seen {
        *counts.entry(id.as_str()).or_default() += 1;
    }
    assert!(old.iter().all(|id| counts.get(id.as_str()) == Some(&1)), "an old note repeated or skipped: {seen:?}");
    assert!(new.iter().all(|id| !counts.contains_key(id.as_str())), "new notes appear at the top, not mid-scroll");
    assert_eq!(seen.len(), 100);
    let (top, _) = feed_page(&app, &reader_token, "count=1").await;
    assert_eq!(top, [new[29].clone()], "a fresh scroll starts with the newest");

    // The reader unfollows; the author's next note reaches the other follower only.
    assert_eq!(send(&app, Method::DELETE, &format!("/users/{author}/follow"), Some(&reader_token), None).await.0, 200);
    let unfollowed = eventually(Duration::from_secs(30), || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM followers WHERE followee_id = ? AND follower_id = ? AND status = 'following'",
        )
        .bind(author)
        .bind(reader)
        .fetch_one(&app.db)
        .await
        .unwrap();
        n == 0
    })
    .await;
    assert!(unfollowed);
    let last = publish(&app, author, shop, "after").await.to_string();
    assert!(inbox_reaches(&app, other, 131).await, "the other follower still gets the note");
    let (top, _) = feed_page(&app, &reader_token, "count=1").await;
    assert_ne!(top, std::slice::from_ref(&last), "the unfollowed author's note did not arrive");
    let (top, _) = feed_page(&app, &other_token, "count=1").await;
    assert_eq!(top, [last]);
    for query in ["count=0", "count=51", "offset=1", "max=-1", "max=x", "other=1"] {
        let (status, body) = send(&app, Method::GET, &format!("/feed?{query}"), Some(&reader_token), None).await;
        assert!(matches!(status, 400 | 422), "{query}: {status} {body}");
    }
    assert_eq!(send(&app, Method::GET, "/feed", None, None).await.0, 401);
    app.shutdown().await;
}

/// An author above `notes.pull_above_followers` is not pushed: followers
/// pull their notes at read time, merged with pushed ones, and stop seeing
/// them once they unfollow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_authors_notes_are_pulled_at_read_time_and_merged_with_pushed_ones() {
    let app = TestApp::spawn_with(Options { worker: true }, |s| s.notes.pull_above_followers = 1).await;
    let users = app.users(4).await;
    let (big, small, reader, fan) = (users[0].0, users[1].0, &users[2], &users[3]);
    for (token, whom) in [(&reader.1, big), (&fan.1, big), (&reader.1, small)] {
        assert_eq!(send(&app, Method::PUT, &format!("/users/{whom}/follow"), Some(token), None).await.0, 200);
    }
    let projected = eventually(Duration::from_secs(30), || async {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM followers WHERE status = 'following'")
            .fetch_one(&app.db)
            .await
            .unwrap();
        n == 3
    })
    .await;
    assert!(projected);
    let shop = app.shop().await;
    let b1 = publish(&app, big, shop, "big 1").await.to_string();
    let s1 = publish(&app, small, shop, "small 1").await.to_string();
    let b2 = publish(&app, big, shop, "big 2").await.to_string();
    assert!(inbox_reaches(&app, reader.0, 1).await, "the small author is pushed");
    let pulled = eventually(Duration::from_secs(30), || async {
        let authored: usize = app.kv.conn().zcard(app.kv.keys.feed_authored(big)).await.unwrap();
        let pulled: bool = app.kv.conn().sismember(app.kv.keys.feed_pulled(), big).await.unwrap();
        authored == 2 && pulled
    })
    .await;
    assert!(pulled, "the big author is pulled, not pushed");
    let inbox: usize = app.kv.conn().zcard(app.kv.keys.feed_inbox(reader.0)).await.unwrap();
    assert_eq!(inbox, 1, "only the small author's note was pushed");

    let (ids, _) = feed_page(&app, &reader.1, "count=10").await;
    assert_eq!(ids, [b2.clone(), s1.clone(), b1.clone()], "pulled and pushed, merged newest first");
    let (first, next) = feed_page(&app, &reader.1, "count=2").await;
    let (max, offset) = next.unwrap();
    let (rest, _) = feed_page(&app, &reader.1, &format!("count=2&max={max}&offset={offset}")).await;
    assert_eq!([first, rest].concat(), [b2.clone(), s1.clone(), b1.clone()], "the cursor works across both");

    assert_eq!(send(&app, Method::DELETE, &format!("/users/{big}/follow"), Some(&reader.1), None).await.0, 200);
    let gone = eventually(Duration::from_secs(30), || async {
        feed_page(&app, &reader.1, "count=10").await.0 == [s1.clone()]
    })
    .await;
    assert!(gone, "an unfollowed pulled author's notes leave the feed");
    let (fan_ids, _) = feed_page(&app, &fan.1, "count=10").await;
    assert_eq!(fan_ids, [b2, b1]);
    app.shutdown().await;
}
