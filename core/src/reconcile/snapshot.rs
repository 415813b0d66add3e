//! The reconciler's load step: one voucher bucket's state as Redis and MySQL
//! hold it (the bucket's keys, the voucher's orders), read in that order
//! (Redis first, so an order stored meanwhile is seen in MySQL together with
//! its entry, and nothing in flight looks like drift).
//!
//! The buyers hash is read in chunks with `HSCAN`, never as one reply, so a
//! run's cost stays bounded however many buyers a sale has. Its reads of
//! Redis are not one atomic snapshot: stock is judged against the buyers only
//! inside `seckill_recount.lua` (see `repair`).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::MySqlPool;

use super::ReconcileError;
use crate::ids::{OrderId, Sale, UserId, VoucherId};
use crate::kv::{CityKeys, Kv};
use crate::orders::OrderStatus;
use crate::seckill::scripts::BuyerEntry;

/// Buyers read per `HSCAN` call.
const SCAN_CHUNK: usize = 1_000;

/// The voucher's MySQL row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoucherRow {
    /// The whole voucher's initial stock (a bucket holds its share).
    pub initial: i64,
    pub buckets: u16,
    pub db_stock: i64,
    pub begin_ms: i64,
    pub end_ms: i64,
    pub pay_value: u64,
}

/// An order of the voucher in MySQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRow {
    pub user_id: UserId,
    /// The stock bucket the order's unit came from.
    pub bucket: u16,
    pub status: OrderStatus,
    pub closed_at_ms: Option<u64>,
}

/// Redis's sale state of a voucher written under the current generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSide {
    pub stock: i64,
    /// User id -> entry.
    pub buyers: HashMap<UserId, BuyerEntry>,
}

/// Everything one run decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub voucher_id: VoucherId,
    /// The bucket whose Redis state this is (0 for a voucher of one).
    pub bucket: u16,
    pub voucher: VoucherRow,
    /// `None` when the voucher is paused: its keys are gone, or were written
    /// under another Redis generation.
    pub redis: Option<RedisSide>,
    /// Stock as Redis holds it, current or not (`None`: no keys at all).
    pub redis_stock: Option<i64>,
    /// Order id -> row, every order of the voucher, whatever its bucket.
    pub orders: HashMap<OrderId, OrderRow>,
    /// Orders of confirmed buyers missing from MySQL that were parked with
    /// a 202 and not replayed.
    pub parked: HashSet<OrderId>,
    /// When it was read, Unix ms.
    pub now_ms: u64,
    /// Order-id nodes whose holder stopped (`cityhub_platform::ids::beats`):
    /// nothing more comes from them.
    pub stopped_nodes: HashSet<u16>,
}

impl Snapshot {
    /// Whether any key of the voucher's sale state exists in Redis.
    pub fn keys_exist(&self) -> bool {
        self.redis_stock.is_some()
    }

    /// The bucket this snapshot is of.
    pub fn sale(&self) -> Sale {
        Sale { voucher_id: self.voucher_id, bucket: self.bucket }
    }

    /// The bucket's initial stock: its share of the voucher's.
    pub fn initial(&self) -> i64 {
        crate::vouchers::buckets::share(self.voucher.initial, self.voucher.buckets, self.bucket)
    }
}

/// Reads the snapshot of bucket `sale`.
pub async fn load(
    db: &MySqlPool,
    kv: &Kv,
    sale: Sale,
    stopped_nodes: HashSet<u16>,
) -> Result<Snapshot, ReconcileError> {
    let voucher_id = sale.voucher_id;
    let generation = kv.generation.current(&kv.keys.seckill_voucher(sale)).await?;
    let (redis_stock, written_under): (Option<i64>, Option<String>) = redis::cmd("HMGET")
        .arg(kv.keys.seckill_voucher(sale))
        .arg("stock")
        .arg("gen")
        .query_async(&mut kv.conn())
        .await?;
    let redis = match redis_stock {
        Some(stock) if written_under.as_deref() == Some(&*generation) => {
            Some(RedisSide { stock, buyers: buyers(kv, sale).await? })
        }
        _ => None,
    };
    // MySQL second, both reads in one transaction: one consistent snapshot.
    let mut tx = db.begin().await?;
    let voucher = voucher(&mut tx, voucher_id).await?;
    let orders = orders(&mut tx, voucher_id).await?;
    tx.commit().await?;
    let missing: Vec<OrderId> = redis
        .iter()
        .flat_map(|r| r.buyers.values())
        .filter_map(|e| match e {
            BuyerEntry::Confirmed(id) if !orders.contains_key(id) => Some(*id),
            _ => None,
        })
        .collect();
    let parked = parked(db, &missing).await?;
    let now_ms = cityhub_platform::now_ms();
    Ok(Snapshot { voucher_id, bucket: sale.bucket, voucher, redis, redis_stock, orders, parked, now_ms, stopped_nodes })
}

/// The buyers hash, read in chunks (a walk's "passed" marks are no entries: left out).
pub(super) async fn buyers(kv: &Kv, sale: Sale) -> Result<HashMap<UserId, BuyerEntry>, ReconcileError> {
    let key = kv.keys.seckill_buyers(sale);
    let (mut conn, mut cursor, mut buyers) = (kv.conn(), 0u64, HashMap::new());
    loop {
        let (next, chunk): (u64, Vec<(String, String)>) =
            redis::cmd("HSCAN").arg(&key).arg(cursor).arg("COUNT").arg(SCAN_CHUNK).query_async(&mut conn).await?;
        buyers.extend(chunk.into_iter().filter_map(|(user, raw)| Some((user.parse().ok()?, BuyerEntry::parse(&raw)?))));
        if next == 0 {
            return Ok(buyers);
        }
        cursor = next;
    }
}

#[derive(sqlx::FromRow)]
struct VoucherColumns {
    initial: i64,
    buckets: u16,
    db_stock: i64,
    begin: DateTime<Utc>,
    end: DateTime<Utc>,
    pay_value: u64,
}

async fn voucher(conn: &mut sqlx::MySqlConnection, voucher_id: VoucherId) -> Result<VoucherRow, ReconcileError> {
    let row: Option<VoucherColumns> = sqlx::query_as(
        "SELECT CAST(s.initial_stock AS SIGNED) AS initial, s.buckets, s.stock AS db_stock, s.begin_time AS `begin`, \
         s.end_time AS `end`, v.pay_value FROM seckill_vouchers s JOIN vouchers v ON v.id = s.voucher_id \
         WHERE s.voucher_id = ?",
    )
    .bind(voucher_id)
    .fetch_optional(&mut *conn)
    .await?;
    let v = row.ok_or(ReconcileError::NotFound)?;
    Ok(VoucherRow {
        initial: v.initial,
        buckets: v.buckets,
        db_stock: v.db_stock,
        begin_ms: v.begin.timestamp_millis(),
        end_ms: v.end.timestamp_millis(),
        pay_value: v.pay_value,
    })
}

/// Every order of the voucher, by id.
pub(super) async fn orders(
    conn: &mut sqlx::MySqlConnection,
    voucher_id: VoucherId,
) -> Result<HashMap<OrderId, OrderRow>, ReconcileError> {
    type Row = (OrderId, UserId, u16, String, Option<DateTime<Utc>>);
    let rows: Vec<Row> =
        sqlx::query_as("SELECT id, user_id, bucket, status, closed_at FROM orders WHERE voucher_id = ?")
            .bind(voucher_id)
            .fetch_all(&mut *conn)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, user_id, bucket, status, closed_at)| {
            let status = OrderStatus::from_column(&status)?;
            let closed_at_ms = closed_at.map(|at| at.timestamp_millis() as u64);
            Some((id, OrderRow { user_id, bucket, status, closed_at_ms }))
        })
        .collect())
}

/// Which of `order_ids` were parked with a 202 and not replayed.
async fn parked(db: &MySqlPool, order_ids: &[OrderId]) -> Result<HashSet<OrderId>, ReconcileError> {
    if order_ids.is_empty() {
        return Ok(HashSet::new());
    }
    let mut q = sqlx::QueryBuilder::<sqlx::MySql>::new(
        "SELECT DISTINCT order_id FROM parked_messages WHERE accepted AND replayed_at IS NULL AND order_id IN (",
    );
    let mut list = q.separated(", ");
    for id in order_ids {
        list.push_bind(id);
    }
    q.push(")");
    let rows: Vec<(OrderId,)> = q.build_query_as().fetch_all(db).await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}
