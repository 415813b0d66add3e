//! `TestApp`: an API on a random port plus (optionally) an order worker, on
//! a private slice of the real services, with typed helpers.

use std::net::SocketAddr;
use std::time::Duration;

use cityhub_api::AppState;
use cityhub_core::auth::Phone;
use cityhub_core::config::Settings;
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::seckill::scripts::BuyerEntry;
use cityhub_core::{OrderId, Services, ShopId, UserId, VoucherId};
use cityhub_order_worker::Worker;
pub use cityhub_testkit::eventually;
use cityhub_testkit::invariants::Accepted;
use cityhub_testkit::{mq_client, sale, TestEnv};
use redis::AsyncCommands;
use serde_json::{json, Value};
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

pub struct TestApp {
    pub env: TestEnv,
    pub base: String,
    /// The ops listener (`/metrics`, `/healthz`).
    pub ops: String,
    pub http: reqwest::Client,
    pub db: MySqlPool,
    pub kv: Kv,
    pub state: AppState,
    pub worker: Option<Worker>,
    /// A token of an admin user.
    admin: String,
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
        let admin = state.auth.create_operator_key("tests", Duration::from_secs(3600)).await.unwrap().key;
        let worker = if opts.worker {
            Some(Worker::start(&Services::on(&env.settings, db.clone(), kv.clone()), &mq).await.expect("worker"))
        } else {
            None
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let ops_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ops = format!("http://{}", ops_listener.local_addr().unwrap());
        let shutdown = stop.clone().cancelled_owned();
        tokio::spawn(cityhub_platform::ops::serve(
            ops_listener,
            state.metrics.clone(),
            db.clone(),
            Default::default(),
            shutdown,
        ));
        let server = tokio::spawn({
            let (state, stop) = (state.clone(), stop.clone());
            async move {
                cityhub_api::run(listener, state, async move { stop.cancelled().await }).await.unwrap();
            }
        });
        Self {
            env,
            base: format!("http://{addr}"),
            ops,
            http: reqwest::Client::new(),
            db,
            kv,
            state,
            worker,
            admin,
            stop,
            server: Some(server),
        }
    }

    /// Starts the order worker of an app spawned without one.
    pub async fn start_worker(&mut self) {
        assert!(self.worker.is_none(), "the worker runs already");
        let worker = Worker::start(&self.services(), &mq_client()).await;
        self.worker = Some(worker.expect("worker"));
    }

    /// Asserts every invariant of the shared checker for `voucher`, given
    /// every 202 the sale gave.
    pub async fn assert_invariants(&self, voucher: VoucherId, accepted: &[Accepted]) {
        sale::assert_invariants(&self.db, &self.kv, voucher, accepted).await
    }

    pub fn ops_url(&self, path: &str) -> String {
        format!("{}{path}", self.ops)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Logs in through the HTTP API (reading the code where the server stored it).
    pub async fn login(&self, phone: &str) -> (UserId, String) {
        let (challenge, code) = self.ask_code(phone).await;
        let r = self
            .http
            .post(self.url("/auth/login"))
            .json(&json!({ "phone": phone, "code": code, "challenge": challenge }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        (body["user_id"].as_str().unwrap().parse().unwrap(), body["token"].as_str().unwrap().to_owned())
    }

    /// Asks for a login code: the challenge answered, and the phone's code
    /// (read where the server stored it, as the phone would receive it).
    pub async fn ask_code(&self, phone: &str) -> (String, String) {
        let r = self.http.post(self.url("/auth/code")).json(&json!({ "phone": phone })).send().await.unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        let body: Value = r.json().await.unwrap();
        (body["challenge"].as_str().unwrap().to_owned(), self.phone_code(phone).await)
    }

    /// The code a phone has now (what its SMS said).
    pub async fn phone_code(&self, phone: &str) -> String {
        self.kv.conn().get(self.kv.keys.login_code(phone)).await.unwrap()
    }

    /// `n` users with tokens, made directly through the auth rules (fast).
    pub async fn users(&self, n: usize) -> Vec<(UserId, String)> {
        let auth = &self.state.auth;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let phone = Phone::parse(&format!("1390000{i:04}")).unwrap();
            let issued = auth.issue(auth.register(&phone).await.unwrap()).await.unwrap();
            out.push((issued.session.user_id, issued.token));
        }
        out
    }

    pub async fn shop(&self) -> ShopId {
        self.state.shops.create(&cityhub_core::shops::NewShop::named("test shop")).await.unwrap().id
    }

    /// Sends `body` to an admin route (`POST` or `PUT`) with the admin token.
    pub async fn admin_send(&self, method: reqwest::Method, path: &str, body: &Value) -> (u16, Value) {
        let r =
            self.http.request(method, self.url(path)).bearer_auth(self.admin_token()).json(body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// Creates a shop through the admin API; returns its id.
    pub async fn admin_shop(&self, body: Value) -> ShopId {
        let (status, shop) = self.admin_send(reqwest::Method::POST, "/admin/shops", &body).await;
        assert_eq!(status, 201, "{shop}");
        shop["id"].as_str().unwrap().parse().unwrap()
    }

    /// `GET` on `base` + `path` with an optional token.
    pub async fn get_at(&self, base: &str, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut req = self.http.get(format!("{base}{path}"));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// Another API instance on the same services, with its own L1 caches
    /// and invalidation listener, as a second process would have.
    pub async fn second_instance(&self) -> Instance {
        let state = AppState::build(self.env.settings.clone(), mq_client()).await.expect("second app state");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let stop = CancellationToken::new();
        let server = tokio::spawn({
            let (state, stop) = (state.clone(), stop.clone());
            async move {
                cityhub_api::run(listener, state, async move { stop.cancelled().await }).await.unwrap();
            }
        });
        Instance { base, state, stop, server }
    }

    pub fn admin_token(&self) -> String {
        self.admin.clone()
    }

    /// Creates a seckill voucher through the admin API; the sale window is
    /// given in ms relative to now.
    pub async fn voucher(&self, stock: u32, begin_in_ms: i64, end_in_ms: i64) -> VoucherId {
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
    pub async fn on_sale(&self, stock: u32) -> VoucherId {
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

    pub async fn order_count(&self, voucher: VoucherId) -> i64 {
        sale::order_count(&self.db, voucher).await
    }

    /// Waits until `n` orders of `voucher` are in MySQL; returns the count seen last.
    pub async fn wait_for_orders(&self, voucher: VoucherId, n: i64, timeout: Duration) -> i64 {
        sale::wait_for_orders(&self.db, voucher, n, timeout).await
    }

    pub async fn db_stock(&self, voucher: VoucherId) -> i64 {
        sale::db_stock(&self.db, voucher).await
    }

    pub async fn redis_stock(&self, voucher: VoucherId) -> i64 {
        self.kv.conn().hget(self.kv.keys.seckill_voucher(voucher), "stock").await.unwrap()
    }

    pub async fn buyers(&self, voucher: VoucherId) -> std::collections::HashMap<UserId, BuyerEntry> {
        sale::buyers(&self.kv, voucher).await
    }

    /// The business services on this app's pool and Redis handle, for a
    /// test that drives one of them directly.
    pub fn services(&self) -> Services {
        Services::on(&self.env.settings, self.db.clone(), self.kv.clone())
    }

    /// Asserts the stock invariants of a sale with closed orders (see the testkit).
    pub async fn assert_stock_agrees(&self, voucher: VoucherId) {
        sale::assert_stock_agrees(&self.db, &self.kv, voucher).await
    }

    /// `n` fresh users each win one unit of `voucher`; waits until the worker
    /// stored every order. Returns (user id, token, order id).
    pub async fn stored_orders(
        &self,
        voucher: VoucherId,
        users: &[(UserId, String)],
    ) -> Vec<(UserId, String, OrderId)> {
        let before = self.order_count(voucher).await;
        let mut out = Vec::new();
        for (user_id, token) in users {
            let (status, body) = self.seckill(token, voucher).await;
            assert_eq!(status, 202, "{body}");
            out.push((*user_id, token.clone(), body["order_id"].as_str().unwrap().parse().unwrap()));
        }
        let n = before + out.len() as i64;
        assert_eq!(self.wait_for_orders(voucher, n, Duration::from_secs(30)).await, n);
        out
    }

    pub async fn pay(&self, token: &str, order: OrderId) -> (u16, Value) {
        let r = self.http.post(self.url(&format!("/orders/{order}/pay"))).bearer_auth(token).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// Posts `body` to the payment callback signed with `secret`.
    pub async fn callback_signed(&self, body: &[u8], secret: &[u8]) -> (u16, Value) {
        let sig = cityhub_core::payments::signature::sign(secret, body);
        let r = self
            .http
            .post(self.url("/payments/callback"))
            .header("content-type", "application/json")
            .header(cityhub_core::payments::signature::HEADER, sig)
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// A successful payment of `order` reported as the provider would, signed
    /// with the configured secret.
    pub async fn paid_callback(&self, txn_id: &str, order: OrderId, amount: u64) -> (u16, Value) {
        self.callback_at(txn_id, order, amount, chrono::Utc::now().timestamp()).await
    }

    /// As [`TestApp::paid_callback`], signed at `ts` (unix seconds).
    pub async fn callback_at(&self, txn_id: &str, order: OrderId, amount: u64, ts: i64) -> (u16, Value) {
        let body = json!({ "txn_id": txn_id, "order_id": order, "amount": amount, "result": "succeeded", "ts": ts });
        let secret = self.env.settings.payments.callback_secret.expose().as_bytes().to_vec();
        self.callback_signed(body.to_string().as_bytes(), &secret).await
    }

    /// Starts paying `order` as its owner; answers the transaction id.
    pub async fn start_payment(&self, token: &str, order: OrderId) -> String {
        let (status, started) = self.pay(token, order).await;
        assert_eq!(status, 202, "{started}");
        started["txn_id"].as_str().unwrap().to_owned()
    }

    pub async fn admin_close(&self, token: Option<&str>, order: OrderId) -> (u16, Value) {
        let mut req = self.http.post(self.url(&format!("/admin/orders/{order}/close")));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    pub async fn order_status(&self, order: OrderId) -> Option<String> {
        sqlx::query_scalar("SELECT status FROM orders WHERE id = ?").bind(order).fetch_optional(&self.db).await.unwrap()
    }

    /// `(status, count)` of the payments recorded for `order`.
    pub async fn payments(&self, order: OrderId) -> Vec<(String, i64)> {
        sqlx::query_as("SELECT status, COUNT(*) FROM payments WHERE order_id = ? GROUP BY status ORDER BY status")
            .bind(order)
            .fetch_all(&self.db)
            .await
            .unwrap()
    }

    /// Begins the API's shutdown (what SIGTERM does) without waiting for it.
    pub fn begin_shutdown(&self) {
        self.stop.cancel();
    }

    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        if let Some(worker) = self.worker.take() {
            worker.shutdown(Duration::from_secs(30)).await.unwrap();
        }
        self.state.close().await;
    }
}

/// A second API instance (see [`TestApp::second_instance`]).
pub struct Instance {
    pub base: String,
    pub state: AppState,
    stop: CancellationToken,
    server: tokio::task::JoinHandle<()>,
}

impl Instance {
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.server.await;
        self.state.close().await;
    }
}

/// The 202 answers among `answers` (one per user of `users`, in order).
pub fn accepted(users: &[(UserId, String)], answers: &[(u16, Value)]) -> Vec<Accepted> {
    users
        .iter()
        .zip(answers)
        .filter(|(_, (status, _))| *status == 202)
        .map(|((user_id, _), (_, body))| Accepted {
            order_id: body["order_id"].as_str().unwrap().parse().unwrap(),
            user_id: *user_id,
        })
        .collect()
}
