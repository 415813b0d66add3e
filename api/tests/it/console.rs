//! The sale console in a real browser (headless Chromium over WebDriver):
//! an admin signs in with a login code, creates a voucher, watches a sale
//! run through the API until the page says "stored = accepted", closes an
//! order found by phone, and every figure the page shows is checked against
//! MySQL and Redis read at the same moment. A screenshot is kept as
//! `target/artifacts/console.png`. Also the admin JSON routes the page reads,
//! without the browser: typed answers, 401/403/404/422 where they belong.

use std::time::Duration;

use cityhub_core::kv::CityKeys;
use cityhub_core::VoucherId;
use cityhub_testkit::browser::Browser;
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::app::TestApp;

/// The page's figures of the sale it watches, by name, as numbers (null
/// for `-`), and what its drain line says.
const FIGURES: &str = "const out = {};
    for (const el of document.querySelectorAll('[data-figure]')) {
        const t = el.textContent.trim();
        out[el.dataset.figure] = t === '-' ? null : Number(t);
    }
    out.drain = document.getElementById('drain').textContent;
    out.sale = document.getElementById('sale-id').textContent;
    return out;";

/// What MySQL and Redis hold of `voucher` now, under the page's names.
async fn truth(app: &TestApp, voucher: VoucherId) -> Value {
    let (initial, mysql): (i64, i64) =
        sqlx::query_as("SELECT CAST(initial_stock AS SIGNED), stock FROM seckill_vouchers WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(&app.db)
            .await
            .unwrap();
    let mut counts = serde_json::Map::new();
    for status in ["unpaid", "paid", "closed", "refunded"] {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE voucher_id = ? AND status = ?")
            .bind(voucher)
            .bind(status)
            .fetch_one(&app.db)
            .await
            .unwrap();
        counts.insert(status.into(), n.into());
    }
    let redis: i64 = app.kv.conn().hget(app.kv.keys.seckill_voucher(voucher), "stock").await.unwrap();
    let stored = counts["unpaid"].as_i64().unwrap() + counts["paid"].as_i64().unwrap();
    let mut out = json!({
        "initial_stock": initial,
        "mysql_stock": mysql,
        "redis_stock": redis,
        "accepted": initial - redis,
        "stored": stored,
        "in_flight": initial - redis - stored,
    });
    out.as_object_mut().unwrap().extend(counts);
    out
}

/// Reads the page until two reads in a row agree with MySQL and Redis read
/// between them (the page refreshes every second); fails with the last
/// difference after `within`.
async fn page_agrees(app: &TestApp, browser: &Browser, voucher: VoucherId, within: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let before = browser.script(FIGURES, json!([])).await.unwrap();
        let truth = truth(app, voucher).await;
        let after = browser.script(FIGURES, json!([])).await.unwrap();
        let differs: Vec<String> = truth
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| before[k.as_str()] != **v || after[k.as_str()] != **v)
            .map(|(k, v)| format!("{k}: page {} then {}, MySQL/Redis {v}", before[k.as_str()], after[k.as_str()]))
            .collect();
        if differs.is_empty() {
            return after;
        }
        assert!(tokio::time::Instant::now() < deadline, "the page disagrees with MySQL and Redis: {differs:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn message(browser: &Browser, starts: &str) -> String {
    let value = browser
        .until("return document.getElementById('message').textContent;", Duration::from_secs(15), |v| {
            v.as_str().is_some_and(|t| t.starts_with(starts))
        })
        .await
        .unwrap();
    let text = value.as_str().unwrap_or_default().to_owned();
    assert!(text.starts_with(starts), "expected a message starting {starts:?}, the page says {text:?}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_runs_watches_and_closes_a_sale_from_the_console_and_every_figure_matches_mysql_and_redis() {
    let app = TestApp::spawn().await;
    let key = app.state.auth.create_operator_key("console test", Duration::from_secs(3600)).await.unwrap().key;
    let shop = app.shop().await;
    let browser = Browser::start(1400, 1700).await.expect("a headless Chromium");
    browser.goto(&app.url("/admin/")).await.unwrap();

    // A shopper's session is refused; the operator's key signs in.
    let (_, shopper) = app.users(1).await[0].clone();
    browser.type_into("#key", &shopper).await.unwrap();
    browser.click("#sign-in").await.unwrap();
    message(&browser, "not a live operator key").await;
    browser.type_into("#key", &key).await.unwrap();
    browser.click("#sign-in").await.unwrap();
    message(&browser, "signed in").await;
    assert!(browser.text("#who").await.unwrap().starts_with("operator op_"));

    // Create a voucher of 5 units from the page; the page watches it.
    browser.type_into("#new-shop", &shop.to_string()).await.unwrap();
    browser.type_into("#new-title", "console sale").await.unwrap();
    browser.type_into("#new-stock", "5").await.unwrap();
    browser.type_into("#new-price", "990").await.unwrap();
    browser.click("#create").await.unwrap();
    let created = message(&browser, "created voucher ").await;
    let voucher: VoucherId = created.trim_start_matches("created voucher ").parse().unwrap();
    let figures = browser
        .until(FIGURES, Duration::from_secs(15), |v| v["sale"] == voucher.to_string() && v["redis_stock"] == 5)
        .await
        .unwrap();
    assert_eq!((figures["redis_stock"].as_i64(), figures["accepted"].as_i64()), (Some(5), Some(0)), "{figures}");

    // A small sale through the API: 12 shoppers, 5 units.
    let users = app.users(12).await;
    let mut answers = Vec::new();
    for (_, token) in &users {
        answers.push(app.seckill(token, voucher).await);
    }
    let accepted = crate::app::accepted(&users, &answers);
    assert_eq!(accepted.len(), 5);
    let figures = browser
        .until(FIGURES, Duration::from_secs(45), |v| v["drain"] == "stored = accepted" && v["stored"] == 5)
        .await
        .unwrap();
    assert_eq!(figures["drain"], "stored = accepted", "{figures}");
    let figures = page_agrees(&app, &browser, voucher, Duration::from_secs(30)).await;
    assert_eq!((figures["accepted"].as_i64(), figures["stored"].as_i64()), (Some(5), Some(5)));
    app.assert_invariants(voucher, &accepted).await;

    // The instances: this API with its five 202s and this worker with its
    // five orders stored, both up (their beats come every 5 s), each with
    // the version and commit it was built from. Each row is read cell by
    // cell: kind, build, instance, state, figures, last beat.
    let rows_script = "return [...document.querySelectorAll('#instances tr')]
        .map(r => [...r.cells].map(c => c.textContent));";
    let expected = [("api", "accepted 5"), ("worker", "order_lag 0, stored 5")];
    let build = format!("{} {}", cityhub_platform::metrics::VERSION, cityhub_platform::metrics::COMMIT);
    let shows = |v: &Value| {
        let rows: Vec<Vec<&str>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().filter_map(Value::as_str).collect())
            .collect();
        rows.len() == 2
            && expected.iter().all(|(kind, figures)| {
                rows.iter().any(|r| r.len() == 6 && r[0] == *kind && r[1] == build && r[3] == "up" && r[4] == *figures)
            })
    };
    let instances = browser.until(rows_script, Duration::from_secs(45), shows).await.unwrap();
    assert!(shows(&instances), "{instances}");

    // Find a buyer's order by phone and close it from the page.
    let buyer = &accepted[0];
    let (buyer_phone,): (String,) =
        sqlx::query_as("SELECT phone FROM users WHERE id = ?").bind(buyer.user_id).fetch_one(&app.db).await.unwrap();
    browser.script("document.getElementById('lookup-by').value = 'phone';", json!([])).await.unwrap();
    browser.type_into("#lookup-q", &buyer_phone).await.unwrap();
    browser.click("#lookup").await.unwrap();
    let close = format!("button[data-close='{}']", buyer.order_id);
    browser.wait_for(&close, Duration::from_secs(15)).await.unwrap();
    browser.click(&close).await.unwrap();
    message(&browser, &format!("closed {}", buyer.order_id)).await;
    assert_eq!(app.order_status(buyer.order_id).await.as_deref(), Some("closed"));

    // The unit comes back once (the release event reaches Redis): 4 stored,
    // 4 accepted, 1 closed, and the page says so with MySQL and Redis.
    let figures =
        browser.until(FIGURES, Duration::from_secs(30), |v| v["closed"] == 1 && v["accepted"] == 4).await.unwrap();
    assert_eq!(figures["drain"], "stored = accepted", "{figures}");
    let figures = page_agrees(&app, &browser, voucher, Duration::from_secs(30)).await;
    assert_eq!((figures["stored"].as_i64(), figures["redis_stock"].as_i64()), (Some(4), Some(1)), "{figures}");

    let shot = browser.screenshot().await.unwrap();
    assert!(shot.starts_with(b"\x89PNG"), "a PNG screenshot");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("console.png"), &shot).unwrap();
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test]
async fn the_console_routes_answer_admins_only_with_typed_figures() {
    let app = TestApp::spawn_without_worker().await;
    let page = app.http.get(app.url("/admin/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(page.text().await.unwrap().contains("CityHub sale console"));

    let (_, shopper) = app.users(1).await.remove(0);
    for path in ["/admin/sales", "/admin/sales/1", "/admin/overview", "/admin/parked", "/admin/orders?id=1"] {
        let (status, body) = app.get_at(&app.base, path, None).await;
        assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")), "{path}");
        let (status, body) = app.get_at(&app.base, path, Some(&shopper)).await;
        assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")), "{path}");
    }
    for token in [None, Some(shopper.as_str())] {
        let mut replay = app.http.post(app.url("/admin/parked/1/replay"));
        if let Some(token) = token {
            replay = replay.bearer_auth(token);
        }
        let status = replay.send().await.unwrap().status().as_u16();
        assert_eq!(status, if token.is_some() { 403 } else { 401 }, "replay as {token:?}");
    }

    let admin = app.admin_token();
    let voucher = app.on_sale(7).await;
    let (status, sale) = app.get_at(&app.base, &format!("/admin/sales/{voucher}"), Some(&admin)).await;
    assert_eq!(status, 200, "{sale}");
    assert_eq!(sale["voucher_id"], voucher.to_string());
    assert_eq!((sale["redis_stock"].as_i64(), sale["mysql_stock"].as_i64()), (Some(7), Some(7)));
    assert_eq!(
        (sale["accepted"].as_i64(), sale["stored"].as_i64(), sale["in_flight"].as_i64()),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(sale["phase"], "live");
    let (status, list) = app.get_at(&app.base, "/admin/sales", Some(&admin)).await;
    assert_eq!(status, 200);
    assert_eq!(list[0]["voucher_id"], voucher.to_string(), "newest first");

    // A reservation not stored yet (no worker here) is accepted and in flight.
    let (_, token) = app.users(2).await.remove(1);
    let (status, answer) = app.seckill(&token, voucher).await;
    assert_eq!(status, 202, "{answer}");
    let (_, sale) = app.get_at(&app.base, &format!("/admin/sales/{voucher}"), Some(&admin)).await;
    assert_eq!(
        (sale["accepted"].as_i64(), sale["stored"].as_i64(), sale["in_flight"].as_i64()),
        (Some(1), Some(0), Some(1))
    );
    // ... and found by id while queued.
    let order = answer["order_id"].as_str().unwrap();
    let (status, found) = app.get_at(&app.base, &format!("/admin/orders?id={order}"), Some(&admin)).await;
    assert_eq!(status, 200);
    assert_eq!((found[0]["order_id"].as_str(), found[0]["status"].as_str()), (Some(order), Some("queued")));

    // Lost keys show as null, not as a number.
    let _: () = app.kv.conn().del(app.kv.keys.seckill_voucher(voucher)).await.unwrap();
    let (_, sale) = app.get_at(&app.base, &format!("/admin/sales/{voucher}"), Some(&admin)).await;
    assert!(sale["redis_stock"].is_null() && sale["accepted"].is_null(), "{sale}");

    for (path, status, code) in [
        ("/admin/sales/999999999", 404, "voucher_not_found"),
        ("/admin/sales/x", 400, "invalid_path"),
        ("/admin/orders", 422, "validation_failed"),
        ("/admin/orders?id=1&phone=13800138000", 422, "validation_failed"),
        ("/admin/orders?phone=12", 422, "validation_failed"),
        ("/admin/orders?who=1", 400, "invalid_query"),
    ] {
        let (got, body) = app.get_at(&app.base, path, Some(&admin)).await;
        assert_eq!((got, body["code"].as_str()), (status, Some(code)), "{path}: {body}");
    }
    let (status, found) = app.get_at(&app.base, "/admin/orders?phone=13800000000", Some(&admin)).await;
    assert_eq!((status, found), (200, json!([])));
    let replay = app.http.post(app.url("/admin/parked/424242/replay")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(replay.status(), 404);

    // A voucher split into 3 buckets: its Redis stock is the sum of theirs,
    // and unknown (null) while one bucket has no keys.
    let shop = app.shop().await;
    let now = chrono::Utc::now();
    let (status, created) = app
        .admin_send(
            reqwest::Method::POST,
            "/admin/vouchers",
            &json!({ "shop_id": shop.get(), "title": "split", "pay_value": 100, "actual_value": 100, "stock": 10,
                     "buckets": 3, "begin_time": now, "end_time": now + chrono::TimeDelta::hours(1) }),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let split: VoucherId = created["id"].as_str().unwrap().parse().unwrap();
    let (_, sale) = app.get_at(&app.base, &format!("/admin/sales/{split}"), Some(&admin)).await;
    assert_eq!((sale["redis_stock"].as_i64(), sale["buckets"].as_u64()), (Some(10), Some(3)), "{sale}");
    let last = cityhub_core::Sale { voucher_id: split, bucket: 2 };
    let _: () = app.kv.conn().del(app.kv.keys.seckill_voucher(last)).await.unwrap();
    let (_, sale) = app.get_at(&app.base, &format!("/admin/sales/{split}"), Some(&admin)).await;
    assert!(sale["redis_stock"].is_null() && sale["in_flight"].is_null(), "{sale}");

    // This API beats: it is listed as up, with its 202 counted.
    let listed = crate::app::eventually(Duration::from_secs(45), || async {
        let (_, o) = app.get_at(&app.base, "/admin/overview", Some(&admin)).await;
        o["instances"].as_array().is_some_and(|i| {
            i.iter().any(|i| i["kind"] == "api" && i["state"] == "up" && i["figures"]["accepted"].as_f64() >= Some(1.0))
        })
    })
    .await;
    let (_, overview) = app.get_at(&app.base, "/admin/overview", Some(&admin)).await;
    assert!(listed, "the API is listed as up with its 202: {overview}");
    app.shutdown().await;
}
