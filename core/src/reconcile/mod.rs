//! The reconciler: compares one voucher's Redis state (stock, buyers) with
//! MySQL (orders, stock), repairs what it safely can, and keeps a report.
//! The worker runs it on a schedule for every voucher on sale or recently
//! ended; an admin runs it on demand. A voucher split into stock buckets is
//! reconciled bucket by bucket (each bucket against the orders that name
//! it, its stock against its share), into one report.
//!
//! The invariant it checks: Redis stock + live Redis buyers == initial
//! stock; every confirmed buyer has a live DB order; DB stock == initial −
//! live DB orders. What it does about each difference:
//!
//! - **A paused voucher**: its keys are missing (Redis restarted empty or
//!   was flushed) or were written under an older Redis generation (restored
//!   from a snapshot, failed over to a replica behind its master: the copy
//!   may be older than the sale; see `platform::kv::generation`). The API
//!   answers `sale_paused`. The keys are rebuilt from MySQL (stock = initial
//!   − live orders, buyers = live orders, confirmed) only once every order
//!   answered 202 before the pause was applied: this run first waits
//!   [`CONFIRMED_WITHIN`](cityhub_platform::kv::generation::CONFIRMED_WITHIN) after it saw the pause (a reservation on the lost
//!   copy is answered 202 only while that copy was confirmed current within
//!   it, after its message was stored; see `cityhub_platform::kv::generation`),
//!   then marks the order
//!   topic's max offsets and waits until the order group's committed offsets
//!   pass the mark on every queue, as the broker reports them
//!   (`platform::mq::progress`; the worker never moves a message out of the
//!   topic). Only then does it read MySQL, and `seckill_rebuild.lua` writes
//!   the state under the current generation unless another rebuild already
//!   did (two reconcilers racing change nothing twice).
//! - **A reservation with no order, older than the grace period** (the
//!   order id carries its time), **or issued under an order-id node whose
//!   holder stopped beating** longer than the lease TTL ago (its API is gone,
//!   `cityhub_platform::ids::beats`; the order id carries its node): the
//!   order message is **re-published**, not released. The message may only be late (a lagging worker, a broker
//!   retry) and the shopper may hold a 202; the worker's insert is keyed on
//!   the order id, so a duplicate changes nothing, and an order nobody pays
//!   is closed by the close job, which releases its stock. Releasing instead
//!   would break a 202 whenever the original message was merely slow.
//!   Confirmed buyers with no order past the grace period are re-published
//!   the same way, unless the order was parked: that is reported (its
//!   shopper had a 202 and an operator must look).
//! - **A live DB order whose buyer entry is missing**: the entry is written
//!   back as confirmed (`seckill_restore.lua`, which never overwrites a live entry).
//! - **Redis stock off its buyers**: recounted atomically in Redis
//!   (`seckill_recount.lua`), so reservations running meanwhile stay exact.
//! - **A confirmed buyer whose order is dead**: its release is given back
//!   once the close is older than the grace period (the outbox event does
//!   it first, normally); `stock_release.lua` never gives one order's unit twice.
//! - **DB stock off its orders**: reported only; MySQL is the truth and a
//!   difference there is a bug to look at, not something to paper over.
//! - **A buyer entry holding a live order of another user** (an order-id
//!   collision, or an entry written by a bug): reported only, with both
//!   users; an operator must look.
//!
//! A run is load -> diff -> repair: [`snapshot`] reads one voucher's state
//! (Redis first, then MySQL, the buyers in bounded chunks), [`diff`] decides
//! what differs and how to repair it (pure, unit-tested on literal
//! snapshots), and `repair` carries it out, or only describes it in a dry
//! run ([`Mode::DryRun`]). Stock is judged against the buyers only inside
//! `seckill_recount.lua`, atomically.

mod diff;
mod repair;
pub mod snapshot;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use cityhub_platform::mq::progress::Progress;
use cityhub_platform::mq::publisher::BatchPublisher;
use cityhub_platform::mq::{ClientRuntime, MqError};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

pub use diff::{diff, Diff, Finding, Repair};
pub use snapshot::Snapshot;

use crate::config::Settings;
use crate::ids::{OrderId, Sale, VoucherId};
use crate::kv::{CityKeys, Kv};

/// What the run concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Redis and MySQL agree.
    Consistent,
    /// Differences were found and all were repaired (or handed to the worker).
    Repaired,
    /// Differences remain that need an operator.
    Drift,
    /// The voucher is paused (keys gone or of an older Redis generation)
    /// and orders published before the pause may still be in flight: the
    /// sale stays paused until a later run can rebuild.
    Paused,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [Verdict::Consistent, Verdict::Repaired, Verdict::Drift, Verdict::Paused];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Consistent => "consistent",
            Verdict::Repaired => "repaired",
            Verdict::Drift => "drift",
            Verdict::Paused => "paused",
        }
    }
}

/// A kind of difference (the `kind` label of the reconciler's metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    KeysMissing,
    StaleCopy,
    OwnerMismatch,
    UnconfirmedReservation,
    ConfirmedWithoutOrder,
    ParkedAccepted,
    OrderWithoutBuyer,
    ReleasePending,
    RedisStock,
    DbStock,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::KeysMissing,
        Kind::StaleCopy,
        Kind::OwnerMismatch,
        Kind::UnconfirmedReservation,
        Kind::ConfirmedWithoutOrder,
        Kind::ParkedAccepted,
        Kind::OrderWithoutBuyer,
        Kind::ReleasePending,
        Kind::RedisStock,
        Kind::DbStock,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::KeysMissing => "keys_missing",
            Kind::StaleCopy => "stale_copy",
            Kind::OwnerMismatch => "owner_mismatch",
            Kind::UnconfirmedReservation => "unconfirmed_reservation",
            Kind::ConfirmedWithoutOrder => "confirmed_without_order",
            Kind::ParkedAccepted => "parked_accepted",
            Kind::OrderWithoutBuyer => "order_without_buyer",
            Kind::ReleasePending => "release_pending",
            Kind::RedisStock => "redis_stock",
            Kind::DbStock => "db_stock",
        }
    }
}

/// One difference found, and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub kind: Kind,
    /// Orders concerned (when the difference is about orders).
    pub order_ids: Vec<OrderId>,
    pub detail: String,
    /// Whether this run repaired it (or handed it to the worker).
    pub repaired: bool,
}

/// The result of one run, kept as the voucher's last report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub voucher_id: VoucherId,
    pub ran_at: DateTime<Utc>,
    pub verdict: Verdict,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders: i64,
    /// `None` when the voucher's keys were missing.
    pub redis_stock: Option<i64>,
    pub live_buyers: i64,
    /// Reservations younger than the grace period, left alone.
    pub in_flight: i64,
    pub differences: Vec<Difference>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("no such seckill voucher")]
    NotFound,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("a report does not serialize: {0}")]
    Report(#[from] serde_json::Error),
}

/// Whether a run repairs what it finds or only reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Repair,
    /// Find and report, change nothing (the report is not kept).
    DryRun,
}

/// The reconciler. Clone freely (clones share what they know of pauses).
#[derive(Clone)]
pub struct Reconciler {
    db: MySqlPool,
    kv: Kv,
    orders: BatchPublisher,
    progress: Progress,
    grace: Duration,
    /// How long an order-id node's holder may go without a beat before
    /// what it reserved is judged orphaned (`ids.lease_ttl_ms`).
    lease_ttl: Duration,
    recent: Duration,
    /// Re-publishing's pace: how long a re-published order is left alone,
    /// and the most one pass sends per voucher.
    republish_quiet: Duration,
    republish_max: usize,
    pauses: Arc<Mutex<HashMap<Sale, repair::Pause>>>,
}

impl Reconciler {
    /// Starts the reconciler of `settings`: its own publisher on the order
    /// topic (for re-published orders, under producer group `group`) and a
    /// reader of the order consumer group's progress.
    pub async fn start(
        db: MySqlPool,
        kv: Kv,
        client: &Arc<ClientRuntime>,
        settings: &Settings,
        group: &str,
    ) -> Result<Self, MqError> {
        let mq = &settings.mq;
        let orders = Box::pin(BatchPublisher::start(client, mq, group, mq.order_topic.clone())).await?;
        let progress = Box::pin(Progress::start(client, mq, &mq.order_consumer_group, &mq.order_topic)).await?;
        for result in ["sent", "paced", "deferred", "failed"] {
            metrics::counter!(crate::metrics::RECONCILER_REPUBLISHED, "result" => result).increment(0);
        }
        for kind in Kind::ALL {
            metrics::counter!(crate::metrics::RECONCILER_DIFFERENCES, "kind" => kind.label()).increment(0);
            metrics::counter!(crate::metrics::RECONCILER_REPAIRS, "kind" => kind.label()).increment(0);
        }
        Ok(Self {
            db,
            kv,
            orders,
            progress,
            grace: settings.reconcile.grace_secs,
            lease_ttl: settings.ids.lease_ttl_ms,
            recent: settings.reconcile.recent_secs,
            republish_quiet: settings.reconcile.republish_quiet_secs,
            republish_max: settings.reconcile.republish_max as usize,
            pauses: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Stops its publisher (see [`BatchPublisher::shutdown`]); the progress
    /// reader stops with the last clone.
    pub async fn shutdown(&self) {
        self.orders.shutdown().await;
    }

    /// The vouchers to reconcile now (on sale, or ended within the recent
    /// window), every bucket of each.
    pub async fn due(&self) -> Result<Vec<Sale>, ReconcileError> {
        let since = Utc::now() - self.recent;
        let rows: Vec<(VoucherId, u16)> = sqlx::query_as(
            "SELECT voucher_id, buckets FROM seckill_vouchers \
             WHERE begin_time <= CURRENT_TIMESTAMP(3) AND end_time >= ?",
        )
        .bind(since)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().flat_map(|(id, n)| crate::vouchers::buckets::sales(id, n)).collect())
    }

    /// The last report kept for `voucher_id`.
    pub async fn last_report(db: &MySqlPool, voucher_id: VoucherId) -> Result<Option<Report>, ReconcileError> {
        let row: Option<(String,)> = sqlx::query_as("SELECT report FROM reconcile_reports WHERE voucher_id = ?")
            .bind(voucher_id)
            .fetch_optional(db)
            .await?;
        Ok(row.map(|(r,)| serde_json::from_str(&r)).transpose()?)
    }

    /// The vouchers of which a bucket of `sales` is paused: its sale state
    /// missing or of another Redis generation (one round trip for all).
    pub async fn paused(&self, sales: &[Sale]) -> Result<Vec<VoucherId>, ReconcileError> {
        if sales.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = sales.iter().map(|sale| self.kv.keys.seckill_voucher(*sale)).collect();
        let reads = keys.iter().map(|key| redis::Cmd::hget(key, "gen")).collect();
        let written = self.kv.conn().query_each(reads).await?;
        let mut paused = Vec::new();
        for ((sale, key), written) in sales.iter().zip(&keys).zip(written) {
            let written: Option<String> = redis::from_redis_value(written).map_err(redis::RedisError::from)?;
            // On a cluster each bucket's copy has a generation of its own.
            let generation = self.kv.generation.current(key).await?;
            if written.as_deref() != Some(&*generation) && !paused.contains(&sale.voucher_id) {
                paused.push(sale.voucher_id);
            }
        }
        Ok(paused)
    }

    /// Reconciles one voucher now, repairing what it can; keeps and returns the report.
    pub async fn run(&self, voucher_id: VoucherId) -> Result<Report, ReconcileError> {
        self.run_with(voucher_id, Mode::Repair).await
    }

    /// Load, diff, repair (or only report, in a dry run, whose report is
    /// not kept), bucket by bucket; one report for the voucher, its figures
    /// summed over the buckets and each difference of a bucket past the
    /// first named with its bucket.
    pub async fn run_with(&self, voucher_id: VoucherId, mode: Mode) -> Result<Report, ReconcileError> {
        let stopped: HashSet<u16> =
            cityhub_platform::ids::beats::stopped(&self.kv, self.lease_ttl).await?.into_iter().collect();
        let (mut report, buckets) = self.run_bucket(Sale::from(voucher_id), mode, &stopped).await?;
        for bucket in 1..buckets {
            let (part, _) = self.run_bucket(Sale { voucher_id, bucket }, mode, &stopped).await?;
            report.live_orders += part.live_orders;
            report.live_buyers += part.live_buyers;
            report.in_flight += part.in_flight;
            report.redis_stock = match (report.redis_stock, part.redis_stock) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            if part.verdict == Verdict::Paused {
                report.verdict = Verdict::Paused;
            }
            report.differences.extend(part.differences.into_iter().map(|mut d| {
                d.detail = format!("bucket {bucket}: {}", d.detail);
                d
            }));
        }
        report.verdict = if report.verdict == Verdict::Paused {
            Verdict::Paused
        } else if report.differences.is_empty() {
            Verdict::Consistent
        } else if report.differences.iter().all(|d| d.repaired) {
            Verdict::Repaired
        } else {
            Verdict::Drift
        };
        if mode == Mode::Repair {
            self.keep(&report).await?;
        }
        Ok(report)
    }

    /// One bucket's run, before the verdict; with the voucher's bucket count.
    /// `stopped`: the order-id nodes whose holder stopped beating.
    async fn run_bucket(
        &self,
        sale: Sale,
        mode: Mode,
        stopped: &HashSet<u16>,
    ) -> Result<(Report, u16), ReconcileError> {
        let snapshot = snapshot::load(&self.db, &self.kv, sale, stopped.clone()).await?;
        if snapshot.redis.is_some() {
            self.pauses.lock().expect("pauses lock").remove(&sale);
        }
        let diff = diff::diff(&snapshot, self.grace.as_millis() as u64);
        let mut report = Report {
            voucher_id: sale.voucher_id,
            ran_at: Utc::now(),
            verdict: Verdict::Consistent,
            initial_stock: snapshot.voucher.initial,
            db_stock: snapshot.voucher.db_stock,
            live_orders: diff.live_orders,
            redis_stock: snapshot.redis_stock,
            live_buyers: diff.live_buyers,
            in_flight: diff.in_flight,
            differences: Vec::new(),
        };
        self.repair(&snapshot, diff, mode, &mut report).await?;
        Ok((report, snapshot.voucher.buckets))
    }

    /// Logs, counts and stores the report.
    async fn keep(&self, report: &Report) -> Result<(), ReconcileError> {
        metrics::counter!(crate::metrics::RECONCILER_RUNS, "verdict" => report.verdict.as_str()).increment(1);
        for d in &report.differences {
            metrics::counter!(crate::metrics::RECONCILER_DIFFERENCES, "kind" => d.kind.label()).increment(1);
            if d.repaired {
                metrics::counter!(crate::metrics::RECONCILER_REPAIRS, "kind" => d.kind.label()).increment(1);
            }
            tracing::warn!(
                voucher_id = %report.voucher_id, kind = d.kind.label(), repaired = d.repaired, orders = ?d.order_ids,
                detail = %d.detail, "reconciler difference"
            );
        }
        sqlx::query("REPLACE INTO reconcile_reports (voucher_id, ran_at, report) VALUES (?, ?, ?)")
            .bind(report.voucher_id)
            .bind(report.ran_at)
            .bind(serde_json::to_string(report)?)
            .execute(&self.db)
            .await?;
        Ok(())
    }
}
