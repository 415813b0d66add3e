//! Admin creation of seckill vouchers: MySQL and the Redis preload together.

use cityhub_core::kv::CityKeys;
use cityhub_core::{ShopId, VoucherId};
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::TestApp;

fn body(shop: ShopId) -> Value {
    let now = chrono::Utc::now();
    json!({
        "shop_id": shop, "title": "20 off", "pay_value": 8000, "actual_value": 10000, "stock": 7,
        "begin_time": now, "end_time": now + chrono::Duration::hours(1),
    })
}

#[tokio::test]
async fn creating_a_voucher_stores_it_and_preloads_its_stock_and_window() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let req = body(shop);
    let r = app.http.post(app.url("/admin/vouchers")).bearer_auth(app.admin_token()).json(&req).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let id: VoucherId = created["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(created["stock"], 7);

    assert_eq!(app.db_stock(id).await, 7);
    let state: std::collections::HashMap<String, i64> =
        app.kv.conn().hgetall(app.kv.keys.seckill_voucher(id)).await.unwrap();
    assert_eq!(state["stock"], 7);
    assert_eq!(state["pay_value"], 8000);
    let begin = chrono::DateTime::parse_from_rfc3339(req["begin_time"].as_str().unwrap()).unwrap();
    assert_eq!(state["begin_ms"], begin.timestamp_millis());
    let generation = app.kv.generation.current(&app.kv.keys.seckill_voucher(id)).await.unwrap();
    assert_eq!(state["gen"].to_string(), *generation, "written under Redis's current generation");
    app.shutdown().await;
}

#[tokio::test]
async fn only_admins_create_vouchers() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let (_, shopper) = app.users(1).await.pop().unwrap();
    let url = app.url("/admin/vouchers");
    let r = app.http.post(&url).json(&body(shop)).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = app.http.post(&url).bearer_auth(&shopper).json(&body(shop)).send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "forbidden");
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    assert_eq!(count, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn invalid_vouchers_are_refused_and_nothing_is_written() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let now = chrono::Utc::now();
    let mut cases = Vec::new();
    for (field, value) in [
        ("stock", json!(0)),
        ("stock", json!(-1)),
        ("title", json!("")),
        ("pay_value", json!(20000)),
        ("end_time", json!(now - chrono::Duration::hours(1))),
        ("begin_time", json!("yesterday")),
        ("shop_id", json!(0)),
    ] {
        let mut b = body(shop);
        b[field] = value;
        cases.push((b, 422));
    }
    let mut unknown_shop = body(shop);
    unknown_shop["shop_id"] = json!(shop.get() + 1000);
    cases.push((unknown_shop, 422));
    for (b, status) in cases {
        let r = app.http.post(app.url("/admin/vouchers")).bearer_auth(app.admin_token()).json(&b).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{b}");
        let err: Value = r.json().await.unwrap();
        assert!(err["code"].is_string() && err["message"].is_string(), "{err}");
    }
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vouchers").fetch_one(&app.db).await.unwrap();
    assert_eq!(count, 0);
    let keys: Vec<String> = app.kv.conn().keys(format!("{}seckill:*", app.kv.keys.prefix())).await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
    app.shutdown().await;
}

/// A voucher's page: its details, the units left as Redis says at each read,
/// and whether the caller holds one (unknown without a session).
#[tokio::test]
async fn a_voucher_page_shows_units_left_from_redis_and_whether_the_caller_holds_one() {
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(5).await;
    let users = app.users(2).await;
    let (status, page) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!((page["id"].as_str(), page["title"].as_str()), (Some(voucher.to_string().as_str()), Some("50 off")));
    assert_eq!((page["pay_value"].as_u64(), page["stock_left"].as_i64()), (Some(5000), Some(5)), "{page}");
    assert!(page["held"].is_null(), "anonymous: {page}");

    assert_eq!(app.seckill(&users[0].1, voucher).await.0, 202);
    let (_, mine) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), Some(&users[0].1)).await;
    assert_eq!((mine["stock_left"].as_i64(), mine["held"].as_bool()), (Some(4), Some(true)), "{mine}");
    let (_, theirs) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), Some(&users[1].1)).await;
    assert_eq!((theirs["stock_left"].as_i64(), theirs["held"].as_bool()), (Some(4), Some(false)), "{theirs}");

    let (status, body) = app.get_at(&app.base, "/vouchers/987654", None).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("voucher_not_found")), "{body}");
    let (status, body) = app.get_at(&app.base, "/vouchers/abc", None).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("invalid_path")), "{body}");
    app.shutdown().await;
}

/// `cityhub_cache_<counter>{cache="vouchers"}` with `labels`, as this process counted it.
fn voucher_cache(counter: &str, labels: &[&str]) -> f64 {
    let all = [&[r#"cache="vouchers""#][..], labels].concat();
    cityhub_testkit::metric(&format!("cityhub_cache_{counter}"), &all)
}

/// A thousand readers of an expired voucher page cause one MySQL query; a
/// page read from L1 afterwards needs no Redis read of its details.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_readers_of_an_expired_voucher_page_cause_one_mysql_query() {
    let app = crate::app::TestApp::spawn_with(crate::app::Options { worker: false }, |s| {
        // The thousand reads must end within one TTL of the rebuild, or a
        // late reader rightly rebuilds again: long enough for a loaded machine.
        s.vouchers.cache_ttl_secs = std::time::Duration::from_secs(3);
        s.cache.jitter_percent = 0;
        // The details cache makes readers wait for the one rebuild (it prices
        // the seckill): on a loaded machine a thousand of them may wait long.
        s.cache.wait_ms = std::time::Duration::from_secs(20);
    })
    .await;
    let voucher = app.on_sale(5).await;
    let read = || cityhub_core::seckill::page::page(&app.state.vouchers, &app.kv, voucher, None);
    assert!(read().await.unwrap().is_some());
    tokio::time::sleep(std::time::Duration::from_millis(3200)).await;

    let before = voucher_cache("rebuilds_total", &[]);
    let pages = futures::future::join_all((0..1000).map(|_| read())).await;
    assert!(pages.iter().all(|p| p.as_ref().is_ok_and(|p| p.as_ref().is_some_and(|p| p.stock_left == Some(5)))));
    assert_eq!(voucher_cache("rebuilds_total", &[]) - before, 1.0, "one MySQL query for the thousand readers");

    let (l1, l2_hits, l2_misses) = (
        voucher_cache("hits_total", &[r#"layer="l1""#]),
        voucher_cache("hits_total", &[r#"layer="l2""#]),
        voucher_cache("misses_total", &[r#"layer="l2""#]),
    );
    assert!(read().await.unwrap().is_some());
    assert_eq!(voucher_cache("hits_total", &[r#"layer="l1""#]) - l1, 1.0, "served from L1");
    assert_eq!(
        (voucher_cache("hits_total", &[r#"layer="l2""#]), voucher_cache("misses_total", &[r#"layer="l2""#])),
        (l2_hits, l2_misses),
        "an L1 hit does not read Redis for the details"
    );
    app.shutdown().await;
}

/// A shop's voucher list: each voucher with its units left; a voucher
/// created afterwards joins the cached list at once; an unknown shop is 404.
#[tokio::test]
async fn a_shops_vouchers_are_listed_with_their_units_left_and_a_new_one_joins_at_once() {
    let app = TestApp::spawn_without_worker().await;
    let shop = app.shop().await;
    let create = |stock: u32| {
        let app = &app;
        async move {
            let mut b = body(shop);
            b["stock"] = json!(stock);
            let (status, created) = app.admin_send(reqwest::Method::POST, "/admin/vouchers", &b).await;
            assert_eq!(status, 201, "{created}");
            created["id"].as_str().unwrap().to_owned()
        }
    };
    let first = create(3).await;
    let path = format!("/shops/{shop}/vouchers");
    let (status, list) = app.get_at(&app.base, &path, None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["vouchers"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(
        (list["vouchers"][0]["id"].as_str(), list["vouchers"][0]["stock_left"].as_i64()),
        (Some(&*first), Some(3))
    );

    // The list is cached now; a second voucher joins it on creation.
    let second = create(5).await;
    let (_, list) = app.get_at(&app.base, &path, None).await;
    let ids: Vec<&str> = list["vouchers"].as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [first.as_str(), second.as_str()], "{list}");
    assert_eq!(list["vouchers"][1]["stock_left"], 5);

    let (status, body) = app.get_at(&app.base, "/shops/987654/vouchers", None).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("shop_not_found")), "{body}");
    let (_, other) = app.get_at(&app.base, &format!("/shops/{}/vouchers", app.shop().await), None).await;
    assert_eq!(other["vouchers"], json!([]), "a shop without vouchers");
    app.shutdown().await;
}

/// An admin changes a voucher's text: both API instances serve the change as
/// soon as the invalidation message arrives (their L1 alone would keep the
/// old text for ten minutes); prices stay as they were; bad changes are
/// refused and change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_change_of_a_voucher_reaches_every_instance_at_once() {
    let app = TestApp::spawn_with(crate::app::Options { worker: false }, |s| {
        s.cache.l1_ttl_ms = std::time::Duration::from_secs(600);
    })
    .await;
    let second = app.second_instance().await;
    let voucher = app.on_sale(5).await;
    let path = format!("/vouchers/{voucher}");
    for base in [&app.base, &second.base] {
        assert_eq!(app.get_at(base, &path, None).await.1["title"], "50 off");
    }

    let change = json!({ "title": "Half price", "sub_title": "weekdays", "rules": "one per table" });
    let admin_path = format!("/admin/vouchers/{voucher}");
    let (status, body) = app.admin_send(reqwest::Method::PUT, &admin_path, &change).await;
    assert_eq!(status, 204, "{body}");
    for base in [&app.base, &second.base] {
        let fresh = cityhub_testkit::eventually(std::time::Duration::from_secs(1), || async {
            app.get_at(base, &path, None).await.1["title"] == "Half price"
        })
        .await;
        assert!(fresh, "{base} still serves the old title");
        let (_, page) = app.get_at(base, &path, None).await;
        assert_eq!((page["sub_title"].as_str(), page["rules"].as_str()), (Some("weekdays"), Some("one per table")));
        assert_eq!((page["pay_value"].as_u64(), page["stock_left"].as_i64()), (Some(5000), Some(5)), "{page}");
    }

    for (path, body, status) in [
        (admin_path.clone(), json!({ "title": "" }), 422),
        (admin_path.clone(), json!({ "title": "x", "pay_value": 1 }), 422),
        ("/admin/vouchers/987654".to_owned(), json!({ "title": "x" }), 404),
        ("/admin/vouchers/abc".to_owned(), json!({ "title": "x" }), 400),
    ] {
        let (got, err) = app.admin_send(reqwest::Method::PUT, &path, &body).await;
        assert_eq!(got, status, "{path} {body}: {err}");
        assert!(err["code"].is_string() && err["message"].is_string(), "{err}");
    }
    let (_, shopper) = app.users(1).await.pop().unwrap();
    let r = app.http.put(app.url(&admin_path)).bearer_auth(&shopper).json(&change).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let title: String =
        sqlx::query_scalar("SELECT title FROM vouchers WHERE id = ?").bind(voucher).fetch_one(&app.db).await.unwrap();
    assert_eq!(title, "Half price", "no refused change was written");
    second.shutdown().await;
    app.shutdown().await;
}

/// With the invalidation message lost (an instance that does not listen),
/// that instance serves the old text from L1 until L1's TTL ends, and the
/// change after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_invalidation_lost_a_voucher_change_shows_within_the_l1_ttl() {
    let app = TestApp::spawn_without_worker().await;
    let voucher = app.on_sale(5).await;
    let mut settings = app.env.settings.clone();
    settings.cache.l1_ttl_ms = std::time::Duration::from_millis(1500);
    // Its own caches and no invalidation listener: every message is lost to it.
    let deaf = cityhub_core::Services::on(&settings, app.db.clone(), app.kv.clone());
    let title = |deaf: cityhub_core::Services| async move {
        deaf.vouchers.details(voucher).await.unwrap().unwrap().title.clone()
    };
    assert_eq!(title(deaf.clone()).await, "50 off");
    let read_at = std::time::Instant::now();

    let change = json!({ "title": "Changed" });
    let (status, _) = app.admin_send(reqwest::Method::PUT, &format!("/admin/vouchers/{voucher}"), &change).await;
    assert_eq!(status, 204);
    assert_eq!(app.get_at(&app.base, &format!("/vouchers/{voucher}"), None).await.1["title"], "Changed");
    if read_at.elapsed() < std::time::Duration::from_millis(1200) {
        assert_eq!(title(deaf.clone()).await, "50 off", "the deaf instance's L1 still holds the old text");
    }
    let changed = cityhub_testkit::eventually(std::time::Duration::from_millis(2500), || {
        let deaf = deaf.clone();
        async move { title(deaf).await == "Changed" }
    })
    .await;
    assert!(changed, "the change did not show within the L1 TTL");
    assert!(read_at.elapsed() >= std::time::Duration::from_millis(1400), "L1 kept the old text until its TTL ended");
    app.shutdown().await;
}

fn coupon(shop: ShopId, stock: u32) -> Value {
    json!({ "shop_id": shop, "title": "5 off", "pay_value": 500, "actual_value": 1000, "stock": stock })
}

async fn create_coupon(app: &TestApp, stock: u32) -> VoucherId {
    let (status, created) =
        app.admin_send(reqwest::Method::POST, "/admin/vouchers/ordinary", &coupon(app.shop().await, stock)).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().parse().unwrap()
}

async fn claim(app: &TestApp, token: &str, voucher: impl std::fmt::Display) -> (u16, Value) {
    let r = app.http.post(app.url(&format!("/vouchers/{voucher}/claim"))).bearer_auth(token).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// `(MySQL stock, Redis counter, claim rows)` of a coupon.
async fn coupon_state(app: &TestApp, voucher: VoucherId) -> (i64, Option<i64>, i64) {
    let stock: i64 = sqlx::query_scalar("SELECT stock FROM ordinary_vouchers WHERE voucher_id = ?")
        .bind(voucher)
        .fetch_one(&app.db)
        .await
        .unwrap();
    let counter: Option<i64> = app.kv.conn().get(app.kv.keys.coupon_stock(voucher)).await.unwrap();
    let claims: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM voucher_claims WHERE voucher_id = ?")
        .bind(voucher)
        .fetch_one(&app.db)
        .await
        .unwrap();
    (stock, counter, claims)
}

/// Ordinary coupons: a shopper claims again and again until the per-user
/// window refuses (429, nothing taken); the units run out (409); the
/// claims are listed newest first; a seckill voucher is not claimable.
#[tokio::test]
async fn a_coupon_is_claimed_within_the_users_window_and_its_units() {
    let app = TestApp::spawn_with(crate::app::Options { worker: false }, |s| {
        s.limits.enabled = true;
        s.limits.claims = "user: 2 per 60s".parse().unwrap();
    })
    .await;
    let voucher = create_coupon(&app, 3).await;
    let users = app.users(4).await;
    let (_, page) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), Some(&users[0].1)).await;
    assert_eq!(
        (page["kind"].as_str(), page["begin_time"].is_null(), page["held"].is_null()),
        (Some("ordinary"), true, true)
    );

    let (status, first) = claim(&app, &users[0].1, voucher).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!((first["voucher_id"].as_str(), first["pay_value"].as_u64()), (Some(&*voucher.to_string()), Some(500)));
    assert_eq!(claim(&app, &users[0].1, voucher).await.0, 201, "a coupon may be claimed again");
    assert_eq!(coupon_state(&app, voucher).await, (1, Some(1), 2));
    let ttl: i64 =
        redis::cmd("PTTL").arg(app.kv.keys.coupon_stock(voucher)).query_async(&mut app.kv.conn()).await.unwrap();
    assert!((1..=60_000).contains(&ttl), "the counter is reloaded from MySQL within a minute: {ttl} ms");

    let (status, refused) = claim(&app, &users[0].1, voucher).await;
    assert_eq!((status, refused["code"].as_str()), (429, Some("rate_limited")), "{refused}");
    assert_eq!(coupon_state(&app, voucher).await, (1, Some(1), 2), "a refused claim changes nothing");

    assert_eq!(claim(&app, &users[1].1, voucher).await.0, 201);
    let (status, body) = claim(&app, &users[2].1, voucher).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("sold_out")), "{body}");
    assert_eq!(coupon_state(&app, voucher).await, (0, Some(0), 3));
    let (_, page) = app.get_at(&app.base, &format!("/vouchers/{voucher}"), None).await;
    assert_eq!(page["stock_left"], 0);

    let r = app.http.get(app.url("/users/me/vouchers")).bearer_auth(&users[0].1).send().await.unwrap();
    let mine: Value = r.json().await.unwrap();
    let ids: Vec<&str> = mine["claims"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{mine}");
    assert!(ids[0].parse::<u64>().unwrap() > ids[1].parse::<u64>().unwrap(), "newest first: {mine}");
    let r = app.http.get(app.url(&format!("/users/me/vouchers?before={}", ids[0]))).bearer_auth(&users[0].1);
    let older: Value = r.send().await.unwrap().json().await.unwrap();
    assert_eq!(older["claims"][0]["id"].as_str(), Some(ids[1]), "{older}");

    let seckill = app.on_sale(5).await;
    let (status, body) = claim(&app, &users[2].1, seckill).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("not_claimable")), "{body}");
    assert_eq!(app.redis_stock(seckill).await, 5);
    let (status, body) = app.seckill(&users[2].1, voucher).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("voucher_not_found")), "a coupon is not sold by seckill");
    for (path, status) in [("/vouchers/987654/claim", 404), ("/vouchers/x/claim", 400)] {
        let r = app.http.post(app.url(path)).bearer_auth(&users[3].1).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
    }
    let r = app.http.post(app.url(&format!("/vouchers/{voucher}/claim"))).send().await.unwrap();
    assert_eq!(r.status(), 401);
    for (query, status) in
        [("limit=0", 422), ("limit=101", 422), ("before=0", 422), ("before=x", 400), ("other=1", 400)]
    {
        let r = app.http.get(app.url(&format!("/users/me/vouchers?{query}"))).bearer_auth(&users[0].1);
        assert_eq!(r.send().await.unwrap().status(), status, "{query}");
    }
    app.shutdown().await;
}

/// Forty shoppers claim a five-unit coupon at once, and Redis loses its
/// counter halfway: exactly five claims win, MySQL's stock and rows agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_never_take_more_than_the_stock_even_when_redis_loses_the_counter() {
    let app = TestApp::spawn_with(crate::app::Options { worker: false }, |s| s.limits.enabled = false).await;
    let voucher = create_coupon(&app, 5).await;
    let users = app.users(40).await;
    assert_eq!(claim(&app, &users[0].1, voucher).await.0, 201);
    let _: () = app.kv.conn().del(app.kv.keys.coupon_stock(voucher)).await.unwrap();
    let answers = futures::future::join_all(users[1..].iter().map(|(_, t)| claim(&app, t, voucher))).await;
    let won = answers.iter().filter(|(s, _)| *s == 201).count();
    assert!(answers.iter().all(|(s, b)| *s == 201 || (*s == 409 && b["code"] == "sold_out")), "{answers:?}");
    assert_eq!(won, 4, "{answers:?}");
    assert_eq!(coupon_state(&app, voucher).await, (0, Some(0), 5));
    app.shutdown().await;
}
