//! Every list route's worst case, counted: one request each, on a Redis of
//! the test's own (so `MONITOR` sees only this API) with MySQL statements
//! counted from sqlx's log, against docs/API.md's "Counted worst cases"
//! table. The caller's session is in memory (its reads are counted apart,
//! as **S**), limits are on, and each request is the worst the route can
//! be asked: its largest page, its caches cold.

use std::collections::BTreeMap;

use cityhub_core::keys::CityKeys;
use cityhub_core::UserId;
use cityhub_testkit::{logs, PrivateRedis};
use redis::AsyncCommands;
use reqwest::Method;
use serde_json::Value;

use crate::app::{Options, TestApp};

/// docs/API.md's counted rows: route → (Redis commands, MySQL statements).
fn counted_rows() -> BTreeMap<String, (usize, usize)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let table = doc.split("### Counted worst cases").nth(1).expect("docs/API.md has the counted table");
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let route = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((route.to_owned(), (cells.get(3)?.parse().ok()?, cells.get(4)?.parse().ok()?)))
        })
        .collect()
}

/// The GET routes that page (a `limit`, `cursor`, `page` or `count` query).
async fn list_routes(app: &TestApp) -> Vec<String> {
    let spec: Value = app.http.get(app.url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    let mut routes = Vec::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        let params = item["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let pages = params.iter().any(|p| {
            p["in"] == "query" && ["limit", "cursor", "page", "count"].contains(&p["name"].as_str().unwrap_or(""))
        });
        if pages {
            routes.push(format!("GET {path}"));
        }
    }
    routes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worst_case_of_every_list_route_stays_within_its_counted_row() {
    logs::init_with("warn,cityhub=info,sqlx::query=trace");
    let redis = PrivateRedis::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.redis.url = cityhub_core::config::Secret::new(url);
        s.redis.cluster_nodes.clear();
        s.limits.enabled = true;
    })
    .await;
    let rows = counted_rows();
    let lists = list_routes(&app).await;
    let missing: Vec<&String> = lists.iter().filter(|r| !rows.contains_key(*r)).collect();
    assert!(missing.is_empty(), "list routes without a counted row in docs/API.md: {missing:?}");

    // The graph: A followed by and following 150 users (lists not in
    // Redis: the read rebuilds them), C and B each following 1,000 users in
    // built Redis lists (the scans' worst case), C blocking 100 users.
    let users = app.users(153).await;
    let ((c, tc), (a, _), (b, _)) = (users[0].clone(), users[1].clone(), users[2].clone());
    let social = &app.state.social;
    for (u, _) in &users[3..] {
        social.follow(*u, a).await.unwrap();
        social.follow(a, *u).await.unwrap();
    }
    for (u, _) in &users[3..103] {
        social.block(c, *u).await.unwrap();
    }
    let mut conn = app.kv.conn();
    for user in [a] {
        for list in ["followers", "followings"] {
            let _: () = conn.del(app.kv.keys.follow_list(user, list)).await.unwrap();
        }
    }
    // Followings that are nobody's followers and nobody else's followings:
    // friends and common follows scan their longest before a page fills.
    let span = |from: u64| (1..=1000u64).map(move |i| (i as i64, from + i)).collect::<Vec<(i64, u64)>>();
    for (user, list, from) in [
        (c, "followings", 5_000_000),
        (c, "followers", 6_000_000),
        (b, "followings", 7_000_000),
        (b, "followers", 8_000_000),
    ] {
        let key = app.kv.keys.follow_list(user, list);
        let _: () = conn.zadd(&key, "-", 0).await.unwrap();
        let _: () = conn.zadd_multiple(&key, &span(from)).await.unwrap();
    }
    // 60 notes on one shop, all in C's feed inbox and liked into the hot list.
    let shop = app.shop().await;
    let mut note_ids = Vec::new();
    for i in 0..60 {
        let note = app
            .state
            .notes
            .publish(cityhub_core::notes::NewNote {
                author: a,
                shop_id: shop,
                title: format!("note {i}"),
                content: "x".repeat(1000),
                images: Vec::new(),
            })
            .await
            .unwrap();
        note_ids.push(note.id);
    }
    let inbox: Vec<(i64, u64)> = note_ids.iter().enumerate().map(|(i, id)| (i as i64 + 1, id.get())).collect();
    let _: () = conn.zadd_multiple(app.kv.keys.feed_inbox(c), &inbox).await.unwrap();
    let _voucher = app.on_sale(10).await;
    // Every cache entry in Redis gone: each read below finds its cache cold.
    let cached: Vec<String> = conn.keys(format!("{}cache:*", app.kv.keys.prefix())).await.unwrap();
    for key in cached {
        let _: () = conn.del(key).await.unwrap();
    }

    let admin = app.admin_token();
    let cases: Vec<(&str, String, &str)> = vec![
        ("GET /users/{id}/followers", format!("/users/{a}/followers?limit=100"), tc.as_str()),
        ("GET /users/{id}/followings", format!("/users/{a}/followings?limit=100"), tc.as_str()),
        ("GET /users/{id}/common-follows", format!("/users/{b}/common-follows?limit=100"), tc.as_str()),
        ("GET /users/me/friends", "/users/me/friends?limit=100".to_owned(), tc.as_str()),
        ("GET /users/me/blocks", "/users/me/blocks?limit=100".to_owned(), tc.as_str()),
        ("GET /users/me/recommendations", "/users/me/recommendations?limit=100".to_owned(), tc.as_str()),
        ("GET /orders", "/orders?limit=100".to_owned(), tc.as_str()),
        ("GET /users/me/vouchers", "/users/me/vouchers?limit=100".to_owned(), tc.as_str()),
        ("GET /feed", "/feed?count=50".to_owned(), tc.as_str()),
        ("GET /notes/hot", "/notes/hot?page=1".to_owned(), tc.as_str()),
        ("GET /shops/{id}/notes", format!("/shops/{shop}/notes?page=1"), tc.as_str()),
        ("GET /shops", "/shops?limit=100".to_owned(), tc.as_str()),
        ("GET /shops/nearby", "/shops/nearby?x=120.1&y=30.2&type_id=1&radius_m=50000&limit=50".to_owned(), tc.as_str()),
        ("GET /users/{id}/following-status", format!("/users/{a}/following-status?ids={}", ids(&users)), tc.as_str()),
        ("GET /admin/parked", "/admin/parked".to_owned(), admin.as_str()),
        ("GET /admin/sales", "/admin/sales".to_owned(), admin.as_str()),
        ("GET /admin/orders", "/admin/orders?phone=13900000000".to_owned(), admin.as_str()),
    ];
    let mut monitor = redis.monitor().await;
    // The caller's session into this instance's memory.
    assert_eq!(get(&app, "/users/me", &tc).await.0, 200);
    let mut report = Vec::new();
    let mut over = Vec::new();
    for (route, path, token) in &cases {
        let Some(&(most_redis, most_mysql)) = rows.get(*route) else {
            continue;
        };
        monitor.take().await;
        let before = logs::mysql_statements();
        let (status, body) = get(&app, path, token).await;
        let mysql = logs::mysql_statements() - before;
        let commands = monitor.take().await;
        assert_eq!(status, 200, "{route}: {body}");
        report.push(format!("{route}: {} Redis, {mysql} MySQL", commands.len()));
        if commands.len() > most_redis || mysql > most_mysql {
            over.push(format!(
                "{route}: {} Redis (row {most_redis}), {mysql} MySQL (row {most_mysql}): {commands:#?}",
                commands.len()
            ));
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(over.is_empty(), "over their rows:\n{}", over.join("\n"));
    let ran: Vec<&str> = cases.iter().map(|(r, _, _)| *r).collect();
    let unrun: Vec<&String> = rows.keys().filter(|r| !ran.contains(&r.as_str())).collect();
    assert!(unrun.is_empty(), "counted rows without a case here: {unrun:?}");
    app.shutdown().await;
}

fn ids(users: &[(UserId, String)]) -> String {
    users.iter().take(100).map(|(u, _)| u.to_string()).collect::<Vec<_>>().join(",")
}

async fn get(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    let r = app.http.request(Method::GET, app.url(path)).bearer_auth(token).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}
