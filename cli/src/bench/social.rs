//! P6, recommendations for a user with `--p6-followings` (1,000)
//! followings: the social graph is seeded once straight into MySQL (that many
//! friends of one user, each following 20 of five times as many others), then each round times the route
//! sequentially, cold (the cached list dropped before each request, so
//! each one runs the query) and warm (cached), against `GET /users/me` with
//! the same token timed the same way.

use std::time::{Duration, Instant};

use anyhow::Context;
use cityhub_core::auth::{Auth, Issued};
use cityhub_core::kv::{CityKeys, Kv};
use cityhub_core::UserId;
use sqlx::{MySql, MySqlPool, QueryBuilder};

/// How many users the friends follow between them, per friend, and how
/// many each follows.
const OTHERS_PER_FRIEND: usize = 5;
const EACH_FOLLOWS: usize = 20;
const COLD_REQUESTS: usize = 20;
const WARM_REQUESTS: usize = 100;

/// Median request time of each side, ms.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub cold_ms: f64,
    pub warm_ms: f64,
    pub reference_ms: f64,
}

/// Creates the users and their relations (in `follows` and its projection
/// `followers`, as the follow consumer leaves them); answers the measured user.
pub async fn seed(db: &MySqlPool, auth: &Auth, first_phone: u64, followings: usize) -> anyhow::Result<Issued> {
    let others_n = followings * OTHERS_PER_FRIEND;
    let users = crate::users::create(auth, first_phone, 1 + followings + others_n).await?;
    let me = users[0].session.user_id;
    let friends: Vec<UserId> = users[1..=followings].iter().map(|u| u.session.user_id).collect();
    let others: Vec<UserId> = users[followings + 1..].iter().map(|u| u.session.user_id).collect();
    let mut pairs: Vec<(UserId, UserId)> = friends.iter().flat_map(|&f| [(me, f), (f, me)]).collect();
    for (i, &f) in friends.iter().enumerate() {
        pairs.extend((0..EACH_FOLLOWS).map(|k| (f, others[(i * 7 + k * 251) % others_n])));
    }
    for chunk in pairs.chunks(2_000) {
        for table in ["follows (follower_id, followee_id", "followers (follower_id, followee_id"] {
            let mut q =
                QueryBuilder::<MySql>::new(format!("INSERT IGNORE INTO {table}, status, version, followed_at) "));
            q.push_values(chunk, |mut row, (a, b)| {
                row.push_bind(a).push_bind(b).push("'following'").push("1").push("CURRENT_TIMESTAMP(3)");
            });
            q.build().execute(db).await.context("seed the social graph")?;
        }
    }
    users.into_iter().next().context("the measured user")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

async fn timed(http: &reqwest::Client, url: &str, token: &str) -> anyhow::Result<f64> {
    let start = Instant::now();
    let r = http.get(url).bearer_auth(token).send().await?;
    anyhow::ensure!(r.status().is_success(), "GET {url} answered {}", r.status());
    r.bytes().await?;
    Ok(start.elapsed().as_secs_f64() * 1000.0)
}

/// One round of P6 (see the module doc).
pub async fn measure(api: &str, kv: &Kv, me: &Issued) -> anyhow::Result<Timing> {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
    let (recs, reference) = (format!("{api}/users/me/recommendations"), format!("{api}/users/me"));
    let first = http.get(&recs).bearer_auth(&me.token).send().await?.json::<serde_json::Value>().await?;
    anyhow::ensure!(first["users"].as_array().is_some_and(|u| !u.is_empty()), "P6 recommendations are empty: {first}");
    let key = kv.keys.recommendations(me.session.user_id);
    let mut cold = Vec::new();
    for _ in 0..COLD_REQUESTS {
        let _: () = redis::cmd("DEL").arg(&key).query_async(&mut kv.conn()).await?;
        cold.push(timed(&http, &recs, &me.token).await?);
    }
    let (mut warm, mut refs) = (Vec::new(), Vec::new());
    for _ in 0..WARM_REQUESTS {
        warm.push(timed(&http, &recs, &me.token).await?);
        refs.push(timed(&http, &reference, &me.token).await?);
    }
    Ok(Timing { cold_ms: median(cold), warm_ms: median(warm), reference_ms: median(refs) })
}
