//! The MySQL/MariaDB pool and the one place migrations run from.

use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::{ConnectOptions, Executor};

use crate::config::DatabaseSettings;

/// The migrations in `migrations/`, compiled in.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Opens the pool. With `migrate`, first creates the database if missing and
/// applies pending migrations (sqlx holds a lock, so concurrent starts are safe).
pub async fn connect(settings: &DatabaseSettings) -> Result<MySqlPool, sqlx::Error> {
    let options = MySqlConnectOptions::from_str(settings.url.expose())?
        .log_statements(tracing::log::LevelFilter::Trace)
        .log_slow_statements(tracing::log::LevelFilter::Warn, Duration::from_millis(500));
    if settings.migrate {
        create_database_if_missing(&options).await?;
    }
    let lock_wait = format!("SET SESSION innodb_lock_wait_timeout = {}", settings.lock_wait_secs);
    let pool = MySqlPoolOptions::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .after_connect(move |conn, _| {
            let lock_wait = lock_wait.clone();
            Box::pin(async move {
                conn.execute(lock_wait.as_str()).await?;
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    if settings.migrate {
        accept_rewritten(&pool).await?;
        MIGRATOR.run(&pool).await?;
    }
    Ok(pool)
}

/// Migrations edited after release, each with the checksum (SHA-384) of its
/// earlier text, whose effect the edit does not change: a database that
/// applied the earlier text takes the new checksum instead of refusing to
/// start. `20261203000004` said `PERSISTENT` (MariaDB only) where it now
/// says `STORED` (MariaDB and MySQL 8), the same generated column.
const REWRITTEN: &[(i64, &str)] = &[(
    20261203000004,
    "25a153f1fa8db676569aa6e1cb900dafc7c3c22e889f9c7bf439b34eb32d8393ae37e8e48770cb977c9a4d94bcb426a0",
)];

async fn accept_rewritten(pool: &MySqlPool) -> Result<(), sqlx::Error> {
    let exists: Option<String> = sqlx::query_scalar(
        "SELECT TABLE_NAME FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '_sqlx_migrations'",
    )
    .fetch_optional(pool)
    .await?;
    if exists.is_none() {
        return Ok(());
    }
    for (version, earlier) in REWRITTEN {
        let Some(now) = MIGRATOR.iter().find(|m| m.version == *version) else { continue };
        let earlier = hex::decode(earlier).expect("a hex checksum");
        sqlx::query("UPDATE _sqlx_migrations SET checksum = ? WHERE version = ? AND checksum = ?")
            .bind(now.checksum.as_ref())
            .bind(version)
            .bind(earlier)
            .execute(pool)
            .await?;
    }
    Ok(())
}

async fn create_database_if_missing(options: &MySqlConnectOptions) -> Result<(), sqlx::Error> {
    let Some(name) = options.get_database().map(str::to_owned) else {
        return Ok(());
    };
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(sqlx::Error::Configuration(format!("unsupported database name {name:?}").into()));
    }
    let mut conn = options.clone().database("").connect().await?;
    conn.execute(format!("CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4").as_str()).await?;
    Ok(())
}

/// True for errors worth retrying: lost connections, pool timeouts, deadlocks
/// and lock-wait timeouts (also what the API answers as "database unavailable").
pub fn is_transient(err: &sqlx::Error) -> bool {
    is_unreachable(err)
        || matches!(err, sqlx::Error::Protocol(_))
        // 1205 lock wait timeout, 1213 deadlock.
        || matches!(mysql_number(err), Some(1205 | 1213))
}

/// The MySQL error number of a server error.
fn mysql_number(err: &sqlx::Error) -> Option<u16> {
    let sqlx::Error::Database(db) = err else {
        return None;
    };
    db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().map(|e| e.number())
}

/// True when MySQL could not be reached at all (no connection, a lost one,
/// the pool timed out or closed): an outage, not a problem of the statement.
pub fn is_unreachable(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed)
        // 2006 server gone, 2013 connection lost.
        || matches!(mysql_number(err), Some(2006 | 2013))
}

/// True when InnoDB chose this transaction as a deadlock's victim and rolled
/// it back whole: running it again is safe and usually succeeds.
pub fn is_deadlock(err: &sqlx::Error) -> bool {
    mysql_number(err) == Some(1213)
}

/// The name of the unique key a duplicate-entry error hit, if it was one.
pub fn violated_unique_key(err: &sqlx::Error) -> Option<String> {
    let sqlx::Error::Database(db) = err else {
        return None;
    };
    if !matches!(db.kind(), sqlx::error::ErrorKind::UniqueViolation) {
        return None;
    }
    // MySQL: "Duplicate entry '7-3' for key 'uk_orders_user_voucher'" (MariaDB omits the table name).
    let msg = db.message();
    let key = msg.rsplit("for key ").next()?.trim_matches(|c| c == '\'' || c == '`');
    Some(key.rsplit('.').next().unwrap_or(key).to_owned())
}

/// Records the pool's open and idle connections in
/// [`DB_POOL_CONNECTIONS`](crate::metrics::DB_POOL_CONNECTIONS) (the ops
/// listener calls it before rendering).
pub fn record_pool(pool: &MySqlPool) {
    let (size, idle) = (pool.size() as f64, pool.num_idle() as f64);
    metrics::gauge!(crate::metrics::DB_POOL_CONNECTIONS, "state" => "idle").set(idle);
    metrics::gauge!(crate::metrics::DB_POOL_CONNECTIONS, "state" => "in_use").set(size - idle);
}
