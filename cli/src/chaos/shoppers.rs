//! The chaos run's shoppers: a paced stampede (request i is user
//! i mod users, `rate` a second, at most `concurrency` in flight) that
//! records every answer with its time, so the report can say what shoppers
//! saw while a fault lasted. A shopper whose token was lost (Redis
//! restarted) logs in again and goes on. The stampede runs for `requests`
//! requests and, while held, for as long as the fault driver needs
//! ([`Shoppers::release_hold`]).
//!
//! Beside the stampede the same shoppers can follow and unfollow each other
//! ([`Shoppers::follow_storm`]): every change writes an outbox event, so a
//! fault of the outbox relay's path has events in flight when it strikes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cityhub_core::auth::{Auth, Issued};
use cityhub_core::{OrderId, UserId};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// What one request got back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Accepted(OrderId),
    /// Another success (a follow's 200).
    Done(u16),
    /// Any other status, with the error body's `code`.
    Refused(u16, String),
    /// The request reached the API and no answer came (the API died under
    /// it, or it timed out): it may still have bought.
    NoAnswer,
    /// No connection to the API: the request never reached it.
    NotConnected,
}

impl Answer {
    /// How the report counts it: `202`, `409 sold_out`, `no answer`.
    pub fn label(&self) -> String {
        match self {
            Answer::Accepted(_) => "202".into(),
            Answer::Done(status) => status.to_string(),
            Answer::Refused(status, code) => format!("{status} {code}"),
            Answer::NoAnswer => "no answer".into(),
            Answer::NotConnected => "not connected".into(),
        }
    }
}

/// One request: when it was answered (since the stampede began), by whom,
/// what, and how long the answer took.
#[derive(Debug, Clone)]
pub struct Record {
    pub at: Duration,
    pub user_id: UserId,
    pub answer: Answer,
    pub took: Duration,
}

/// The stampede's shared state: live counters for the fault driver and
/// every record.
pub struct Shoppers {
    pub started: Instant,
    accepted: AtomicUsize,
    sold_out: AtomicUsize,
    sent: AtomicUsize,
    /// Requests to send at least; `usize::MAX` while held.
    until: AtomicUsize,
    records: Mutex<Vec<Record>>,
    /// The follow storm's answers.
    follows: Mutex<Vec<Record>>,
    tokens: Vec<Mutex<Issued>>,
    auth: Auth,
    /// Each shopper comes from an address of their own, through a trusted
    /// proxy (`X-Forwarded-For`), as behind a real balancer.
    proxied: bool,
}

/// How fast and how much.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub requests: usize,
    pub rate: u32,
    pub concurrency: usize,
}

impl Shoppers {
    pub fn new(users: Vec<Issued>, auth: Auth) -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            accepted: AtomicUsize::new(0),
            sold_out: AtomicUsize::new(0),
            sent: AtomicUsize::new(0),
            until: AtomicUsize::new(usize::MAX),
            records: Mutex::new(Vec::new()),
            follows: Mutex::new(Vec::new()),
            tokens: users.into_iter().map(Mutex::new).collect(),
            auth,
            proxied: false,
        })
    }

    /// Shoppers each from an address of their own ([`shopper_address`]),
    /// through a trusted proxy.
    pub fn proxied(users: Vec<Issued>, auth: Auth) -> Arc<Self> {
        let mut this = Self::new(users, auth);
        Arc::get_mut(&mut this).expect("new").proxied = true;
        this
    }

    /// 202s so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }

    /// `409 sold_out` answers so far.
    pub fn sold_out(&self) -> usize {
        self.sold_out.load(Ordering::Relaxed)
    }

    /// Requests sent so far.
    pub fn sent(&self) -> usize {
        self.sent.load(Ordering::Relaxed)
    }

    /// While held, the stampede goes on past its request count; the fault
    /// driver lets go when its faults are over, and the stampede then sends
    /// at least `more` requests (so the sale can go on after a recovery).
    pub fn release_hold(&self, more: usize) {
        self.until.store(self.sent().saturating_add(more), Ordering::Relaxed);
    }

    /// Every record so far.
    pub fn records(&self) -> Vec<Record> {
        self.records.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Every answer of the follow storm so far.
    pub fn follow_records(&self) -> Vec<Record> {
        self.follows.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Fires the stampede at `url`; returns when every request is answered.
    pub async fn run(self: Arc<Self>, url: String, pace: Pace) -> anyhow::Result<()> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(pace.concurrency)
            .timeout(Duration::from_secs(5))
            .build()?;
        let more = |i: usize| i < pace.requests.max(self.until.load(Ordering::Relaxed));
        paced(pace.rate, pace.concurrency, &CancellationToken::new(), more, |i| {
            let (this, http, url) = (Arc::clone(&self), http.clone(), url.clone());
            let user = i % self.tokens.len();
            self.sent.fetch_add(1, Ordering::Relaxed);
            async move { this.fire(&http, &url, user).await }
        })
        .await
    }

    async fn fire(&self, http: &reqwest::Client, url: &str, user: usize) {
        let sent = Instant::now();
        let answer = self.send(user, http.post(url)).await;
        let took = sent.elapsed();
        match &answer {
            Answer::Accepted(_) => {
                self.accepted.fetch_add(1, Ordering::Relaxed);
            }
            Answer::Refused(409, code) if code == "sold_out" => {
                self.sold_out.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        let record = Record { at: self.started.elapsed(), user_id: self.user_id(user), answer, took };
        self.records.lock().unwrap_or_else(|p| p.into_inner()).push(record);
    }

    fn user_id(&self, user: usize) -> UserId {
        self.tokens[user].lock().unwrap_or_else(|p| p.into_inner()).session.user_id
    }

    /// Sends `request` as shopper `user` and reads the answer. A shopper
    /// whose token was lost logs in again for their next request.
    async fn send(&self, user: usize, request: reqwest::RequestBuilder) -> Answer {
        let (token, session) = {
            let issued = self.tokens[user].lock().unwrap_or_else(|p| p.into_inner());
            (issued.token.clone(), issued.session)
        };
        let request = match self.proxied {
            true => request.header("x-forwarded-for", shopper_address(user)),
            false => request,
        };
        let answer = match request.bearer_auth(&token).send().await {
            Err(err) if err.is_connect() => Answer::NotConnected,
            Err(_) => Answer::NoAnswer,
            Ok(r) => {
                let status = r.status().as_u16();
                match r.json::<serde_json::Value>().await {
                    Err(_) => Answer::NoAnswer,
                    Ok(body) if status == 202 => match body["order_id"].as_str().and_then(|id| id.parse().ok()) {
                        Some(id) => Answer::Accepted(id),
                        None => Answer::Refused(status, "no_order_id".into()),
                    },
                    Ok(_) if (200..300).contains(&status) => Answer::Done(status),
                    Ok(body) => Answer::Refused(status, body["code"].as_str().unwrap_or("").to_owned()),
                }
            }
        };
        if matches!(answer, Answer::Refused(401, _)) {
            // The session store lost the token: log in again.
            if let Ok(issued) = self.auth.issue(session).await {
                *self.tokens[user].lock().unwrap_or_else(|p| p.into_inner()) = issued;
            }
        }
        answer
    }

    /// Follows and unfollows among the shoppers through the API at `base`,
    /// `rate` a second, until `stop` is cancelled. Request i is shopper
    /// i mod n following (in even rounds over the shoppers) or unfollowing
    /// (odd rounds) the shopper 1 to 5 places after them, so
    /// pairs keep changing state and nearly every request writes an event.
    pub async fn follow_storm(self: Arc<Self>, base: String, rate: u32, stop: CancellationToken) -> anyhow::Result<()> {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build()?;
        let n = self.tokens.len();
        paced(
            rate,
            FOLLOW_CONCURRENCY,
            &stop,
            |_| true,
            |i| {
                let (user, round) = (i % n, i / n);
                let them = self.user_id((user + 1 + (round / 2) % FOLLOW_SPREAD) % n);
                let url = format!("{base}/users/{them}/follow");
                let request = if round % 2 == 0 { http.put(url) } else { http.delete(url) };
                let this = Arc::clone(&self);
                async move {
                    let sent = Instant::now();
                    let answer = this.send(user, request).await;
                    let took = sent.elapsed();
                    let record = Record { at: this.started.elapsed(), user_id: this.user_id(user), answer, took };
                    this.follows.lock().unwrap_or_else(|p| p.into_inner()).push(record);
                }
            },
        )
        .await
    }
}

/// Starts `request(i)` for i = 0, 1, … at `rate` a second, at most
/// `concurrency` at once, while `more(i)` holds and `stop` is not cancelled;
/// returns once every request started has ended.
pub async fn paced<R>(
    rate: u32,
    concurrency: usize,
    stop: &CancellationToken,
    mut more: impl FnMut(usize) -> bool,
    mut request: impl FnMut(usize) -> R,
) -> anyhow::Result<()>
where
    R: std::future::Future<Output = ()> + Send + 'static,
{
    let gate = Arc::new(Semaphore::new(concurrency));
    let interval = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
    let (mut i, began) = (0usize, Instant::now());
    let mut tasks = tokio::task::JoinSet::new();
    while more(i) {
        tokio::select! {
            _ = tokio::time::sleep_until((began + interval.mul_f64(i as f64)).into()) => {}
            _ = stop.cancelled() => break,
        }
        let permit = Arc::clone(&gate).acquire_owned().await?;
        let request = request(i);
        tasks.spawn(async move {
            request.await;
            drop(permit);
        });
        i += 1;
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Shopper `user`'s own address: 10.x.y.z, one per shopper (up to 2^24).
pub fn shopper_address(user: usize) -> String {
    let n = user as u32 + 1;
    format!("10.{}.{}.{}", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

/// How many shoppers after them each shopper follows in turn.
const FOLLOW_SPREAD: usize = 5;

/// Follow requests in flight at most.
const FOLLOW_CONCURRENCY: usize = 20;

/// Answers counted by label.
pub fn count<'a>(records: impl IntoIterator<Item = &'a Record>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in records {
        *counts.entry(r.answer.label()).or_insert(0) += 1;
    }
    counts
}
