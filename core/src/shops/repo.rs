//! Shops in MySQL: the only module with shop SQL. (How often the shop cache
//! reached MySQL is `cityhub_cache_rebuilds_total{cache="shops"}`.)

use chrono::{DateTime, Utc};
use sqlx::{MySqlPool, Row};

use super::{NewShop, Point, Shop, ShopType};
use crate::ids::ShopId;

const COLUMNS: &str = "id, name, type_id, address, x, y, avg_price, score, open_hours";

#[derive(Clone)]
pub struct ShopRepo {
    db: MySqlPool,
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("shop type {0} does not exist")]
    UnknownType(u64),
    #[error("shop {0} does not exist")]
    UnknownShop(ShopId),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Whether shop `id` exists, its row share-locked until the caller's
/// transaction ends: a row that refers to the shop (a voucher, a note) is
/// written under that lock.
pub async fn lock_existing(tx: &mut sqlx::MySqlConnection, id: ShopId) -> Result<bool, sqlx::Error> {
    let found: Option<(ShopId,)> =
        sqlx::query_as("SELECT id FROM shops WHERE id = ? LOCK IN SHARE MODE").bind(id).fetch_optional(tx).await?;
    Ok(found.is_some())
}

fn shop(row: sqlx::mysql::MySqlRow) -> Result<Shop, sqlx::Error> {
    let (x, y): (Option<f64>, Option<f64>) = (row.try_get("x")?, row.try_get("y")?);
    let spec = NewShop {
        name: row.try_get("name")?,
        type_id: row.try_get("type_id")?,
        address: row.try_get("address")?,
        position: x.zip(y).map(|(x, y)| Point { x, y }),
        avg_price: row.try_get("avg_price")?,
        score: row.try_get("score")?,
        open_hours: row.try_get("open_hours")?,
    };
    Ok(Shop { id: row.try_get("id")?, spec })
}

type Query<'q> = sqlx::query::Query<'q, sqlx::MySql, sqlx::mysql::MySqlArguments>;

/// Binds a shop's written fields in table order (name to open_hours).
fn bind_fields<'q>(query: Query<'q>, new: &'q NewShop) -> Query<'q> {
    query
        .bind(&new.name)
        .bind(new.type_id)
        .bind(&new.address)
        .bind(new.position.map(|p| p.x))
        .bind(new.position.map(|p| p.y))
        .bind(new.avg_price)
        .bind(new.score)
        .bind(&new.open_hours)
}

fn unknown_type(err: sqlx::Error, type_id: u64) -> WriteError {
    match &err {
        sqlx::Error::Database(db) if matches!(db.kind(), sqlx::error::ErrorKind::ForeignKeyViolation) => {
            WriteError::UnknownType(type_id)
        }
        _ => WriteError::Db(err),
    }
}

impl ShopRepo {
    pub fn new(db: MySqlPool) -> Self {
        Self { db }
    }

    pub fn pool(&self) -> &MySqlPool {
        &self.db
    }

    pub async fn find(&self, id: ShopId) -> Result<Option<Shop>, sqlx::Error> {
        let row =
            sqlx::query(&format!("SELECT {COLUMNS} FROM shops WHERE id = ?")).bind(id).fetch_optional(&self.db).await?;
        row.map(shop).transpose()
    }

    /// Inserts `new` inside `tx`; returns its id.
    pub async fn insert(&self, tx: &mut sqlx::MySqlConnection, new: &NewShop) -> Result<ShopId, WriteError> {
        let insert = sqlx::query(
            "INSERT INTO shops (name, type_id, address, x, y, avg_price, score, open_hours) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        );
        let done = bind_fields(insert, new).execute(tx).await.map_err(|e| unknown_type(e, new.type_id))?;
        Ok(ShopId(done.last_insert_id()))
    }

    /// Replaces shop `id` with `new` inside `tx`; returns the shop as it was.
    pub async fn replace(&self, tx: &mut sqlx::MySqlConnection, id: ShopId, new: &NewShop) -> Result<Shop, WriteError> {
        let before = sqlx::query(&format!("SELECT {COLUMNS} FROM shops WHERE id = ? FOR UPDATE"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .map(shop)
            .transpose()?
            .ok_or(WriteError::UnknownShop(id))?;
        let update = sqlx::query(
            "UPDATE shops SET name = ?, type_id = ?, address = ?, x = ?, y = ?, avg_price = ?, score = ?, open_hours = ? \
             WHERE id = ?",
        );
        bind_fields(update, new).bind(id).execute(tx).await.map_err(|e| unknown_type(e, new.type_id))?;
        Ok(before)
    }

    /// Up to `limit` shops after `after` by id, of one type or all.
    pub async fn page(&self, type_id: Option<u64>, after: ShopId, limit: u32) -> Result<Vec<Shop>, sqlx::Error> {
        let rows = match type_id {
            Some(t) => {
                sqlx::query(&format!("SELECT {COLUMNS} FROM shops WHERE type_id = ? AND id > ? ORDER BY id LIMIT ?"))
                    .bind(t)
                    .bind(after)
                    .bind(limit)
                    .fetch_all(&self.db)
                    .await?
            }
            None => {
                sqlx::query(&format!("SELECT {COLUMNS} FROM shops WHERE id > ? ORDER BY id LIMIT ?"))
                    .bind(after)
                    .bind(limit)
                    .fetch_all(&self.db)
                    .await?
            }
        };
        rows.into_iter().map(shop).collect()
    }

    /// Every shop id (for the Bloom filter).
    pub async fn ids(&self) -> Result<Vec<ShopId>, sqlx::Error> {
        sqlx::query_scalar("SELECT id FROM shops").fetch_all(&self.db).await
    }

    /// Positions of the shops of one type, changed since `since` if given.
    pub async fn positions(
        &self,
        type_id: u64,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<(ShopId, Point)>, sqlx::Error> {
        let since = since.unwrap_or(DateTime::UNIX_EPOCH);
        let rows: Vec<(ShopId, f64, f64)> = sqlx::query_as(
            "SELECT id, x, y FROM shops WHERE type_id = ? AND x IS NOT NULL AND updated_at >= ? ORDER BY id",
        )
        .bind(type_id)
        .bind(since)
        .fetch_all(&self.db)
        .await?;
        Ok(rows.into_iter().map(|(id, x, y)| (id, Point { x, y })).collect())
    }

    pub async fn types(&self) -> Result<Vec<ShopType>, sqlx::Error> {
        let rows: Vec<(u64, String, String, u32)> =
            sqlx::query_as("SELECT id, name, icon, sort FROM shop_types ORDER BY sort, id").fetch_all(&self.db).await?;
        Ok(rows.into_iter().map(|(id, name, icon, sort)| ShopType { id, name, icon, sort }).collect())
    }
}
