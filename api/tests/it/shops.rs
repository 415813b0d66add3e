//! Shop reads through the two-level cache (breakdown, penetration, two
//! instances), nearby search, unique visitors and the admin writes.

use std::time::Duration;

use cityhub_core::shops::{visitors::Visit, ShopError, MAX_ID};
use cityhub_core::{ShopId, UserId};
use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

use crate::app::{eventually, Options, TestApp};

/// Loads of the shop cache from MySQL so far (its rebuilds, as `/metrics`
/// counts them): how often readers reached MySQL, without timing anything.
fn shop_loads() -> f64 {
    cityhub_testkit::metric(cityhub_platform::metrics::CACHE_REBUILDS, &[r#"cache="shops""#])
}

/// Reads `ids` 1,000 times at once through the service; returns the names
/// read (or the error's text).
async fn thousand_reads(app: &TestApp, id: ShopId) -> Vec<Result<String, String>> {
    let reads = (0..1000).map(|_| {
        let shops = app.state.shops.clone();
        tokio::spawn(async move { shops.get(id).await.map(|s| s.spec.name.clone()).map_err(|e| e.to_string()) })
    });
    join_all(reads).await.into_iter().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_reads_of_an_expired_shop_get_the_old_value_at_once_while_one_query_rebuilds_it() {
    let app = TestApp::spawn_with(Options { worker: false }, |s| {
        s.shops.cache_ttl_secs = Duration::from_secs(1);
        s.cache.jitter_percent = 0;
    })
    .await;
    let id = app.admin_shop(json!({ "name": "Old Noodles", "type_id": 1 })).await;
    let shops = app.state.shops.clone();
    assert_eq!(shops.get(id).await.unwrap().spec.name, "Old Noodles");

    // The row changes behind the cache's back, and MySQL then becomes slow:
    // a table lock holds every read of `shops` until the test lets go.
    let mut locker = app.db.acquire().await.unwrap();
    sqlx::query("UPDATE shops SET name = 'New Noodles' WHERE id = ?").bind(id).execute(&mut *locker).await.unwrap();
    sqlx::query("LOCK TABLES shops WRITE").execute(&mut *locker).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let before = shop_loads();

    // Every reader is answered while the one rebuild is still stuck in MySQL.
    let names = thousand_reads(&app, id).await;
    assert!(names.iter().all(|n| n.as_deref() == Ok("Old Noodles")), "{:?}", names.iter().find(|n| n.is_err()));
    sqlx::query("UNLOCK TABLES").execute(&mut *locker).await.unwrap();
    drop(locker);

    let renamed =
        eventually(Duration::from_secs(5), || async { shops.get(id).await.unwrap().spec.name == "New Noodles" }).await;
    assert!(renamed, "the rebuild brought the new value");
    assert_eq!(shop_loads() - before, 1.0, "one MySQL query for the whole stampede");
    let (status, body) = app.get_at(&app.base, &format!("/shops/{id}"), None).await;
    assert_eq!((status, body["name"].as_str()), (200, Some("New Noodles")));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_reads_of_a_shop_that_does_not_exist_reach_mysql_at_most_once() {
    let app = TestApp::spawn_without_worker().await;
    let shops = app.state.shops.clone();

    // No Bloom filter yet: the cached "none" is the guard.
    let before = shop_loads();
    let answers = thousand_reads(&app, ShopId(987_654_321)).await;
    assert!(answers.iter().all(|a| a.as_ref().is_err_and(|e| e.contains("does not exist"))));
    assert!(shop_loads() - before <= 1.0, "{} queries", shop_loads() - before);
    let (status, body) = app.get_at(&app.base, "/shops/987654321", None).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("shop_not_found")));

    // Ids that cannot exist are refused before any lookup.
    let before = shop_loads();
    assert!(matches!(shops.get(ShopId(MAX_ID + 1)).await, Err(ShopError::NotFound(_))));
    let (status, _) = app.get_at(&app.base, "/shops/99999999999999999999999", None).await;
    assert_eq!(status, 400);
    assert_eq!(shop_loads(), before);

    // With the filter built, an id never created costs no query at all, and
    // a shop created afterwards is found (its id joined the filter).
    assert!(shops.ensure_bloom().await.unwrap());
    assert!(!shops.ensure_bloom().await.unwrap(), "built once");
    let before = shop_loads();
    let answers = thousand_reads(&app, ShopId(987_654_322)).await;
    assert!(answers.iter().all(Result::is_err));
    assert_eq!(shop_loads(), before, "the filter refused the id");
    let id = app.admin_shop(json!({ "name": "Late Opener", "type_id": 1 })).await;
    assert_eq!(shops.get(id).await.unwrap().spec.name, "Late Opener");
    let metrics = app.http.get(app.ops_url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains(r#"cityhub_cache_refusals_total{cache="shops",reason="bloom"}"#), "{metrics}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_admin_update_both_api_instances_serve_the_new_value_at_once() {
    // L1 would keep the old value for ten minutes: only the invalidation
    // message can make the second instance see the change in time.
    let app =
        TestApp::spawn_with(Options { worker: false }, |s| s.cache.l1_ttl_ms = Duration::from_millis(600_000)).await;
    let second = app.second_instance().await;
    let id = app.admin_shop(json!({ "name": "Before", "type_id": 1 })).await;
    let path = format!("/shops/{id}");
    for base in [&app.base, &second.base] {
        assert_eq!(app.get_at(base, &path, None).await.1["name"], "Before");
    }

    let (status, _) = app
        .admin_send(Method::PUT, &path.replace("/shops", "/admin/shops"), &json!({ "name": "After", "type_id": 1 }))
        .await;
    assert_eq!(status, 200);
    for base in [&app.base, &second.base] {
        // The documented bound (docs/GUARANTEES.md): as soon as the message arrives (milliseconds).
        let fresh =
            eventually(Duration::from_secs(1), || async { app.get_at(base, &path, None).await.1["name"] == "After" })
                .await;
        assert!(fresh, "{base} still serves the old value");
    }
    second.shutdown().await;
    app.shutdown().await;
}

/// Metres per degree of latitude on Redis's sphere.
const M_PER_DEG: f64 = 6_372_797.560_856 * std::f64::consts::PI / 180.0;
const CENTRE: (f64, f64) = (120.0, 30.0);

/// The point `north` and `east` metres from the centre.
fn offset(north: f64, east: f64) -> (f64, f64) {
    (CENTRE.0 + east / (M_PER_DEG * CENTRE.1.to_radians().cos()), CENTRE.1 + north / M_PER_DEG)
}

async fn shop_at(app: &TestApp, name: &str, type_id: u64, (x, y): (f64, f64)) -> ShopId {
    app.admin_shop(json!({ "name": name, "type_id": type_id, "x": x, "y": y })).await
}

/// `(name, distance)` of the nearby answer, nearest first.
async fn nearby(app: &TestApp, type_id: u64, radius_m: u32) -> Vec<(String, f64)> {
    let path = format!("/shops/nearby?x={}&y={}&radius_m={radius_m}&type_id={type_id}", CENTRE.0, CENTRE.1);
    let (status, body) = app.get_at(&app.base, &path, None).await;
    assert_eq!(status, 200, "{body}");
    let shops = body["shops"].as_array().unwrap();
    shops.iter().map(|s| (s["name"].as_str().unwrap().to_owned(), s["distance_m"].as_f64().unwrap())).collect()
}

fn names(found: &[(String, f64)]) -> Vec<&str> {
    found.iter().map(|(n, _)| n.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearby_finds_shops_in_distance_order_within_the_radius_and_follows_moves() {
    let app = TestApp::spawn_without_worker().await;
    let _a = shop_at(&app, "A", 1, offset(100.0, 0.0)).await;
    let b = shop_at(&app, "B", 1, offset(0.0, 1000.0)).await;
    let c = shop_at(&app, "C", 1, offset(-3000.0, 0.0)).await;
    shop_at(&app, "D", 1, offset(0.0, -6000.0)).await;
    shop_at(&app, "E", 2, offset(50.0, 0.0)).await;
    app.admin_shop(json!({ "name": "F", "type_id": 1 })).await;

    let found = nearby(&app, 1, 5000).await;
    assert_eq!(names(&found), ["A", "B", "C"], "D is 6 km away, E another type, F has no position");
    for ((_, got), want) in found.iter().zip([100.0, 1000.0, 3000.0]) {
        assert!((got - want).abs() < want * 0.01, "{got} m, expected {want} m");
    }
    assert_eq!(names(&nearby(&app, 1, 500).await), ["A"]);

    // C moves next door; B changes type.
    let put = |id: ShopId, body: Value| {
        let app = &app;
        async move { app.admin_send(Method::PUT, &format!("/admin/shops/{id}"), &body).await.0 }
    };
    let (x, y) = offset(200.0, 0.0);
    assert_eq!(put(c, json!({ "name": "C", "type_id": 1, "x": x, "y": y })).await, 200);
    let (x, y) = offset(0.0, 1000.0);
    assert_eq!(put(b, json!({ "name": "B", "type_id": 2, "x": x, "y": y })).await, 200);
    assert_eq!(names(&nearby(&app, 1, 5000).await), ["A", "C"]);
    assert_eq!(names(&nearby(&app, 2, 5000).await), ["E", "B"]);

    // Redis lost the index: the next search rebuilds it from MySQL.
    let _: () = redis::AsyncCommands::del(&mut app.kv.conn(), cityhub_core::kv::CityKeys::shop_geo(&app.kv.keys, 1))
        .await
        .unwrap();
    assert_eq!(names(&nearby(&app, 1, 5000).await), ["A", "C"]);

    for (query, code) in [
        ("x=120&y=30&type_id=999", "shop_type_not_found"),
        ("x=200&y=30&type_id=1", "validation_failed"),
        ("x=NaN&y=30&type_id=1", "validation_failed"),
        ("x=120&y=30&radius_m=60000&type_id=1", "validation_failed"),
    ] {
        let (status, body) = app.get_at(&app.base, &format!("/shops/nearby?{query}"), None).await;
        assert_eq!((status, body["code"].as_str()), (422, Some(code)), "{query}");
    }
    let (status, _) = app.get_at(&app.base, "/shops/nearby?x=120&y=30", None).await;
    assert_eq!(status, 400, "type_id is required");
    app.shutdown().await;
}

#[tokio::test]
async fn the_shop_list_pages_a_type_by_id_and_shop_types_are_listed() {
    let app = TestApp::spawn_without_worker().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(app.admin_shop(json!({ "name": format!("Spa {i}"), "type_id": 6 })).await);
    }
    app.admin_shop(json!({ "name": "Not a spa", "type_id": 1 })).await;
    let mut seen = Vec::new();
    let mut path = "/shops?type_id=6&limit=2".to_owned();
    loop {
        let (status, page) = app.get_at(&app.base, &path, None).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(
            page["shops"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().parse::<ShopId>().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/shops?type_id=6&limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let (status, types) = app.get_at(&app.base, "/shop-types", None).await;
    assert_eq!(status, 200);
    assert_eq!(types.as_array().unwrap().len(), 10);
    assert_eq!(types[0]["name"], "Food");
    app.shutdown().await;
}

#[tokio::test]
async fn shop_writes_are_admin_only_and_invalid_ones_change_nothing() {
    let app = TestApp::spawn_without_worker().await;
    let count =
        || async { sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM shops").fetch_one(&app.db).await.unwrap() };
    let r = app.http.post(app.url("/admin/shops")).json(&json!({ "name": "x", "type_id": 1 })).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let (_, shopper) = app.login("13800000001").await;
    let r = app.http.post(app.url("/admin/shops")).bearer_auth(&shopper).json(&json!({ "name": "x", "type_id": 1 }));
    assert_eq!(r.send().await.unwrap().status(), 403);

    for (body, code) in [
        (json!({ "name": "", "type_id": 1 }), "validation_failed"),
        (json!({ "name": "   ", "type_id": 1 }), "validation_failed"),
        (json!({ "name": "x", "type_id": 1, "x": 120.0 }), "validation_failed"),
        (json!({ "name": "x", "type_id": 1, "x": 200.0, "y": 30.0 }), "validation_failed"),
        (json!({ "name": "x", "type_id": 1, "score": 51 }), "validation_failed"),
        (json!({ "name": "x", "type_id": 999 }), "shop_type_not_found"),
        (json!({ "name": "x" }), "invalid_body"),
    ] {
        let (status, answer) = app.admin_send(Method::POST, "/admin/shops", &body).await;
        assert_eq!((status, answer["code"].as_str()), (422, Some(code)), "{body}");
    }
    assert_eq!(count().await, 0);

    let id = app.admin_shop(json!({ "name": "Kept", "type_id": 1 })).await;
    let (status, _) =
        app.admin_send(Method::PUT, &format!("/admin/shops/{id}"), &json!({ "name": "x", "type_id": 999 })).await;
    assert_eq!(status, 422);
    let (status, body) =
        app.admin_send(Method::PUT, "/admin/shops/987654321", &json!({ "name": "x", "type_id": 1 })).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("shop_not_found")));
    assert_eq!(app.get_at(&app.base, &format!("/shops/{id}"), None).await.1["name"], "Kept");
    assert_eq!(count().await, 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unique_visitors_count_signed_in_readers_per_day_within_two_percent() {
    let app = TestApp::spawn_without_worker().await;
    let id = app.admin_shop(json!({ "name": "Popular", "type_id": 1 })).await;
    let today = chrono::Utc::now().date_naive();
    let uv = |query: String| {
        let app = &app;
        async move {
            let r = app.http.get(app.url(&format!("/admin/shops/{id}/uv?{query}"))).bearer_auth(app.admin_token());
            let r = r.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };

    // Through the API: three signed-in readers, four reads each, and an
    // anonymous one who does not count.
    let users = app.users(3).await;
    for _ in 0..4 {
        for (_, token) in &users {
            assert_eq!(app.get_at(&app.base, &format!("/shops/{id}"), Some(token)).await.0, 200);
        }
        assert_eq!(app.get_at(&app.base, &format!("/shops/{id}"), None).await.0, 200);
    }
    let counted = eventually(Duration::from_secs(5), || async {
        uv(format!("from={today}&to={today}")).await.1["visitors"] == 3
    })
    .await;
    assert!(counted, "{}", uv(format!("from={today}&to={today}")).await.1);

    // 10,000 distinct visitors with repeats on one day, and 4,000 on the
    // next (3,000 of them seen the day before).
    let (day1, day2) = (today - chrono::Days::new(3), today - chrono::Days::new(2));
    let visits: Vec<Visit> = (0..10_000u64)
        .chain(0..5_000)
        .map(|u| Visit { shop_id: id, user_id: UserId(1_000_000 + u), day: day1 })
        .chain((7_000..11_000u64).map(|u| Visit { shop_id: id, user_id: UserId(1_000_000 + u), day: day2 }))
        .collect();
    for chunk in visits.chunks(4096) {
        app.state.shops.visitor_log().add(chunk).await.unwrap();
    }
    let (status, report) = uv(format!("from={day1}&to={day2}")).await;
    assert_eq!(status, 200, "{report}");
    let near = |got: &Value, want: f64| (got.as_f64().unwrap() - want).abs() <= want * 0.02;
    assert!(near(&report["days"][0]["visitors"], 10_000.0), "{report}");
    assert!(near(&report["days"][1]["visitors"], 4_000.0), "{report}");
    assert!(near(&report["visitors"], 11_000.0), "merged, not summed: {report}");

    let (status, body) = uv(format!("from={day2}&to={day1}")).await;
    assert_eq!((status, body["code"].as_str()), (422, Some("validation_failed")));
    let (status, _) = uv(format!("from={}&to={today}", today - chrono::Days::new(400))).await;
    assert_eq!(status, 422);
    let (status, _) = uv("from=yesterday&to=today".into()).await;
    assert_eq!(status, 400);
    let r = app.http.get(app.url(&format!("/admin/shops/{id}/uv?from={today}&to={today}"))).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = app.http.get(app.url(&format!("/admin/shops/987654321/uv?from={today}&to={today}")));
    assert_eq!(r.bearer_auth(app.admin_token()).send().await.unwrap().status(), 404);
    app.shutdown().await;
}
