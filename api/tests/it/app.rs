//! `TestApp`: an API on a random port plus (optionally) an order worker, on
//! a private slice of the real services, with typed helpers.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cityhub_api::AppState;
use cityhub_core::auth::{Auth, Phone};
use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::testkit::{mq_client, TestEnv};
use cityhub_order_worker::Worker;
use redis::AsyncCommands;
use serde_json::{json, Value};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

pub struct TestApp {
    pub env: TestEnv,
    pub base: String,
    pub http: reqwest::Client,
    pub db: MySqlPool,
    pub kv: Kv,
    pub state: AppState,
    pub worker: Option<Worker>,
    stop: CancellationToken,
    server: Option<tokio::task::JoinHandle<()>>,
}

pub struct Options {
    pub worker: bool,
}

impl TestApp {
    /// API and worker.
    pub async fn spawn() -> Self {
        Self::spawn_with(Options { worker: true }, |_| {}).await
    }

    /// API only: accepted orders stay queued.
    pub async fn spawn_without_worker() -> Self {
        Self::spawn_with(Options { worker: false }, |_| {}).await
    }

    pub async fn spawn_with(opts: Options, tweak: impl FnOnce(&mut Settings)) -> Self {
        let mut env = TestEnv::new();
        tweak(&mut env.settings);
        let db = env.db().await;
        let kv = env.kv().await;
        let mq = mq_client();
        let state = AppState::build(env.settings.clone(), mq.clone()).await.expect("app state");
        let worker = if opts.worker {
            Some(Worker::start(&env.settings, &mq, db.clone(), kv.clone()).await.expect("worker"))
        } else {
            None
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let server = tokio::spawn({
            let (state, stop) = (state.clone(), stop.clone());
            async move {
                cityhub_api::run(listener, state, async move { stop.cancelled().await }).await.unwrap();
            }
        });
        Self {
            env,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            db,
            kv,
            state,
            worker,
            stop,
            server: Some(server),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Logs in through the HTTP API (reading the code where the server stored it).
    pub async fn login(&self, phone: &str) -> (u64, String) {
        let r = self.http.post(self.url("/auth/code")).json(&json!({ "phone": phone })).send().await.unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        let code: String = self.kv.conn().get(self.kv.keys.login_code(phone)).await.unwrap();
        let r = self
            .http
            .post(self.url("/auth/login"))
            .json(&json!({ "phone": phone, "code": code }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        (body["user_id"].as_str().unwrap().parse().unwrap(), body["token"].as_str().unwrap().to_owned())
    }

    /// `n` users with tokens, made directly through the auth rules (fast).
    pub async fn users(&self, n: usize) -> Vec<(u64, String)> {
        let auth = Auth::new(self.db.clone(), self.kv.clone(), &self.env.settings.auth);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let phone = Phone::parse(&format!("1390000{i:04}")).unwrap();
            let issued = auth.issue(auth.register(&phone).await.unwrap()).await.unwrap();
            out.push((issued.session.user_id, issued.token));
        }
        out
    }

    pub async fn shop(&self) -> u64 {
        sqlx::query("INSERT INTO shops (name) VALUES ('test shop')").execute(&self.db).await.unwrap().last_insert_id()
    }

    pub fn admin_token(&self) -> String {
        self.env.settings.auth.admin_token.expose().to_owned()
    }

    /// Creates a seckill voucher through the admin API; the sale window is
    /// given in ms relative to now.
    pub async fn voucher(&self, stock: u32, begin_in_ms: i64, end_in_ms: i64) -> u64 {
        let shop = self.shop().await;
        let now = chrono::Utc::now();
        let r = self
            .http
            .post(self.url("/admin/vouchers"))
            .bearer_auth(self.admin_token())
            .json(&json!({
                "shop_id": shop, "title": "50 off", "pay_value": 5000, "actual_value": 10000, "stock": stock,
                "begin_time": now + chrono::Duration::milliseconds(begin_in_ms),
                "end_time": now + chrono::Duration::milliseconds(end_in_ms),
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        r.json::<Value>().await.unwrap()["id"].as_str().unwrap().parse().unwrap()
    }

    /// A voucher on sale now for an hour.
    pub async fn on_sale(&self, stock: u32) -> u64 {
        self.voucher(stock, -1000, 3_600_000).await
    }

    pub async fn seckill(&self, token: &str, voucher: impl std::fmt::Display) -> (u16, Value) {
        let r =
            self.http.post(self.url(&format!("/vouchers/{voucher}/seckill"))).bearer_auth(token).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    pub async fn get_order(&self, token: &str, order: impl std::fmt::Display) -> (u16, Value) {
        let r = self.http.get(self.url(&format!("/orders/{order}"))).bearer_auth(token).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    pub async fn order_count(&self, voucher: u64) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(&self.db)
            .await
            .unwrap()
    }

    /// Waits until `n` orders of `voucher` are in MySQL; returns the count seen last.
    pub async fn wait_for_orders(&self, voucher: u64, n: i64, timeout: Duration) -> i64 {
        let start = Instant::now();
        loop {
            let count = self.order_count(voucher).await;
            if count >= n || start.elapsed() > timeout {
                return count;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn db_stock(&self, voucher: u64) -> i64 {
        sqlx::query_scalar("SELECT stock FROM seckill_vouchers WHERE voucher_id = ?")
            .bind(voucher)
            .fetch_one(&self.db)
            .await
            .unwrap()
    }

    pub async fn redis_stock(&self, voucher: u64) -> i64 {
        self.kv.conn().hget(self.kv.keys.seckill_voucher(voucher), "stock").await.unwrap()
    }

    pub async fn buyers(&self, voucher: u64) -> std::collections::HashMap<u64, String> {
        self.kv.conn().hgetall(self.kv.keys.seckill_buyers(voucher)).await.unwrap()
    }

    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        if let Some(worker) = self.worker.take() {
            worker.shutdown().await;
        }
        self.state.close().await;
    }
}

/// Polls `check` until it is true or `timeout` passes; returns its last value.
pub async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if check().await {
            return true;
        }
        if start.elapsed() > timeout {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
