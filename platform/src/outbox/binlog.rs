//! The binlog relay (`outbox.relay = "binlog"`): publishes the outbox from
//! MariaDB's binlog instead of polling the table, the way Canal feeds a bus.
//! It follows the server's binlog as a replica would (one connection of its
//! own, `mysql_async`), keeps the row events that insert into this
//! database's `outbox` table, and publishes each committed transaction's
//! rows when the stream has nothing more ready (or a batch is full).
//!
//! Invariants:
//! - **At least once, from a durable position.** Once the broker stored
//!   what was published, one transaction marks those rows published and
//!   stores the binlog position after their last commit
//!   (`outbox_relay_position`), at most every 100 ms while events flow and
//!   on a stop. A relay that dies, loses its connection or meets a restarted
//!   MariaDB reads again from the stored position, so it can only send
//!   duplicates (at most the last 100 ms), which the consumers absorb by
//!   event id.
//! - **Commit order.** Rows go out in the order their transactions committed;
//!   a key's rows go to one queue of their topic (the poll relay's hash).
//! - **One relay per database.** The relay streams only while it holds the
//!   named lock `cityhub_outbox_binlog.<schema>`; a second worker waits.
//! - **Never only the binlog.** Rows still unpublished `sweep_after` after
//!   they were written are published by a poll sweep. A stored position the
//!   server purged: everything unpublished is swept and the relay starts
//!   again at the binlog's end. An outbox table whose columns no longer hold
//!   an event, or a server without the row binlog: the relay alerts and
//!   relays by polling until it is restarted.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use mysql_async::binlog::events::{EventData, RowsEventData};
use mysql_async::binlog::value::BinlogValue;
use mysql_async::prelude::Queryable;
use sqlx::{MySql, MySqlPool, QueryBuilder};
use tokio_util::sync::CancellationToken;

use super::relay::{Outgoing, Relay};
use crate::config::OutboxSettings;
use crate::metrics as m;
use crate::retry::Backoff;

/// The server error for a binlog file or position it no longer has.
const PURGED: u16 = 1236;

/// A place in the server's binlog: the file and the offset just past an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub file: String,
    pub pos: u64,
}

/// Why the relay stopped following the binlog.
#[derive(Debug)]
enum Ended {
    Stopped,
    /// The stored position is gone from the server.
    Purged(String),
    /// The connection, the server or the stream failed: read again from the
    /// stored position.
    Lost(anyhow::Error),
    /// The binlog cannot give the outbox's rows: relay by polling.
    Unusable(String),
}

impl From<sqlx::Error> for Ended {
    fn from(e: sqlx::Error) -> Self {
        Ended::Lost(e.into())
    }
}

impl From<mysql_async::Error> for Ended {
    fn from(e: mysql_async::Error) -> Self {
        Ended::Lost(e.into())
    }
}

impl From<std::io::Error> for Ended {
    fn from(e: std::io::Error) -> Self {
        Ended::Lost(e.into())
    }
}

/// What the binlog relay needs of the server, read at each start.
#[derive(Debug, PartialEq, Eq)]
pub struct ServerLog {
    pub log_bin: bool,
    pub format: String,
    pub row_metadata: String,
}

impl ServerLog {
    /// Why this server's binlog cannot feed the relay, if it cannot.
    pub fn unusable(&self) -> Option<String> {
        if !self.log_bin {
            return Some("the server does not write a binlog (log_bin is OFF)".into());
        }
        if self.format != "ROW" {
            return Some(format!("binlog_format is {}, not ROW", self.format));
        }
        if self.row_metadata != "FULL" {
            return Some(format!(
                "binlog_row_metadata is {}, not FULL (the relay reads columns by name)",
                self.row_metadata
            ));
        }
        None
    }
}

/// The binlog relay; one per worker (only one per database streams).
pub struct BinlogRelay {
    relay: Relay,
    db: MySqlPool,
    opts: mysql_async::Opts,
    schema: String,
    settings: OutboxSettings,
    /// The server's id of the connection the stream runs on (0 before the first).
    stream_connection: AtomicU32,
}

impl BinlogRelay {
    /// A relay reading the binlog of the server behind `url` (the database
    /// URL: its user needs `REPLICATION SLAVE`), publishing through `relay`.
    pub fn new(relay: Relay, db: MySqlPool, url: &str, settings: OutboxSettings) -> anyhow::Result<Self> {
        let opts = mysql_async::Opts::from_url(url)?;
        let schema =
            opts.db_name().map(str::to_owned).ok_or_else(|| anyhow::anyhow!("the database URL names no database"))?;
        // A row event is one packet: as large as the largest transaction.
        let opts = mysql_async::OptsBuilder::from_opts(opts).max_allowed_packet(Some(1 << 30)).into();
        Ok(Self { relay, db, opts, schema, settings, stream_connection: AtomicU32::new(0) })
    }

    /// The server's id of the connection the binlog stream runs on (as
    /// `SHOW PROCESSLIST` and `KILL` name it); 0 before the first stream.
    pub fn stream_connection(&self) -> u32 {
        self.stream_connection.load(Ordering::Relaxed)
    }

    /// The named lock that lets one relay per database stream.
    fn lock_name(&self) -> String {
        format!("cityhub_outbox_binlog.{}", self.schema)
    }

    /// Relays until `stop` (see the module invariants).
    pub async fn run(&self, stop: CancellationToken) -> anyhow::Result<()> {
        let upkeep = self.upkeep(&stop);
        let follow = self.follow(&stop);
        let (_, outcome) = tokio::join!(upkeep, follow);
        self.relay.shutdown().await;
        outcome
    }

    /// The sweep of old unpublished rows, the gauges and the purge.
    async fn upkeep(&self, stop: &CancellationToken) {
        let every = self.settings.sweep_after_secs.min(Duration::from_secs(5));
        let mut last_sweep = tokio::time::Instant::now();
        let mut last_purge = tokio::time::Instant::now();
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            if last_sweep.elapsed() >= self.settings.sweep_after_secs {
                last_sweep = tokio::time::Instant::now();
                match self.relay.sweep(self.settings.sweep_after_secs).await {
                    Ok(n) if n > 0 => {
                        metrics::counter!(m::OUTBOX_SWEPT).increment(n as u64);
                        tracing::warn!(rows = n, "the sweep published outbox rows the binlog relay had not");
                    }
                    Ok(_) => {}
                    Err(err) => tracing::warn!(error = %err, "outbox sweep failed"),
                }
            }
            self.relay.keep(&mut last_purge).await;
        }
    }

    /// Follows the binlog while holding the lock, starting again after a
    /// lost connection or a purged position; relays by polling if the
    /// binlog cannot be used.
    async fn follow(&self, stop: &CancellationToken) -> anyhow::Result<()> {
        let mut backoff = Backoff::new(Duration::from_millis(200), self.settings.backoff_max_ms);
        let mut lock: Option<sqlx::MySqlConnection> = None;
        loop {
            let started = tokio::time::Instant::now();
            let ended = match self.hold_lock(&mut lock, stop).await {
                Ok(false) => return Ok(()),
                Ok(true) => self.follow_once(stop).await,
                Err(err) => Ended::Lost(err),
            };
            // A stream that ran a while was healthy: the next loss waits little.
            if started.elapsed() > Duration::from_secs(10) {
                backoff.reset();
            }
            match ended {
                Ended::Stopped => return Ok(()),
                Ended::Purged(why) => {
                    metrics::counter!(m::OUTBOX_BINLOG_RESTARTS, "reason" => "purged").increment(1);
                    tracing::error!(%why, "the binlog relay's position was purged; sweeping and starting at the binlog's end");
                    if let Err(err) = self.forget_position().await {
                        tracing::warn!(error = %err, "cannot forget the purged position");
                    }
                }
                Ended::Lost(err) => {
                    metrics::counter!(m::OUTBOX_BINLOG_RESTARTS, "reason" => "lost").increment(1);
                    tracing::warn!(error = %err, "the binlog stream was lost; reading again from the stored position");
                    if !backoff.wait(stop).await {
                        return Ok(());
                    }
                }
                Ended::Unusable(why) => {
                    metrics::counter!(m::OUTBOX_BINLOG_RESTARTS, "reason" => "unusable").increment(1);
                    metrics::gauge!(m::OUTBOX_RELAY_POLLING).set(1.0);
                    tracing::error!(%why, "the binlog cannot feed the outbox relay; relaying by polling until restarted");
                    drop(lock);
                    self.relay.poll(stop).await;
                    return Ok(());
                }
            }
        }
    }

    /// Makes sure this relay holds the database's binlog lock, waiting for
    /// it while another holds it; `false` when stopped first. The lock lives
    /// on a connection taken out of the pool, so it goes when that
    /// connection closes (a stopped or dead relay), never back to the pool.
    async fn hold_lock(
        &self,
        lock: &mut Option<sqlx::MySqlConnection>,
        stop: &CancellationToken,
    ) -> anyhow::Result<bool> {
        if let Some(conn) = lock.as_mut() {
            let held: Option<i64> = sqlx::query_scalar("SELECT IS_USED_LOCK(?) = CONNECTION_ID()")
                .bind(self.lock_name())
                .fetch_one(&mut *conn)
                .await
                .unwrap_or(None);
            if held == Some(1) {
                return Ok(true);
            }
            *lock = None;
        }
        loop {
            let mut conn = self.db.acquire().await?.detach();
            let got: Option<i64> =
                sqlx::query_scalar("SELECT GET_LOCK(?, 0)").bind(self.lock_name()).fetch_one(&mut conn).await?;
            if got == Some(1) {
                *lock = Some(conn);
                return Ok(true);
            }
            drop(conn);
            tokio::select! {
                () = stop.cancelled() => return Ok(false),
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }

    /// The server's binlog settings.
    pub async fn server_log(&self) -> Result<ServerLog, sqlx::Error> {
        let (log_bin, format, row_metadata): (i64, String, String) = sqlx::query_as(
            "SELECT CAST(@@global.log_bin AS SIGNED), @@global.binlog_format, @@global.binlog_row_metadata",
        )
        .fetch_one(&self.db)
        .await?;
        Ok(ServerLog { log_bin: log_bin == 1, format, row_metadata })
    }

    /// The stored position, if any.
    pub async fn stored_position(&self) -> Result<Option<Position>, sqlx::Error> {
        let row: Option<(String, u64)> =
            sqlx::query_as("SELECT file, pos FROM outbox_relay_position WHERE relay = 'binlog'")
                .fetch_optional(&self.db)
                .await?;
        Ok(row.map(|(file, pos)| Position { file, pos }))
    }

    async fn forget_position(&self) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM outbox_relay_position WHERE relay = 'binlog'").execute(&self.db).await?;
        Ok(())
    }

    /// Where the server's binlog ends now.
    async fn binlog_end(&self) -> Result<Position, sqlx::Error> {
        let row = sqlx::query("SHOW MASTER STATUS").fetch_optional(&self.db).await?;
        let row = row.ok_or_else(|| sqlx::Error::Protocol("SHOW MASTER STATUS is empty: log_bin is OFF".into()))?;
        use sqlx::Row;
        Ok(Position { file: row.try_get(0)?, pos: row.try_get(1)? })
    }

    /// A first start (no stored position): the binlog's end is read first,
    /// then everything unpublished is swept and that end stored, so a row
    /// written meanwhile is both swept and streamed (a duplicate), never lost.
    async fn start_position(&self) -> Result<Position, Ended> {
        if let Some(at) = self.stored_position().await? {
            return Ok(at);
        }
        let end = self.binlog_end().await?;
        while self.relay.sweep(Duration::ZERO).await? > 0 {}
        store_position(&mut *self.db.acquire().await?, &end).await?;
        Ok(end)
    }

    /// Follows the binlog from the stored position until stopped or until
    /// the stream ends.
    async fn follow_once(&self, stop: &CancellationToken) -> Ended {
        match self.server_log().await {
            Ok(log) => {
                if let Some(why) = log.unusable() {
                    return Ended::Unusable(why);
                }
            }
            Err(err) => return Ended::Lost(err.into()),
        }
        let from = match self.start_position().await {
            Ok(from) => from,
            Err(ended) => return ended,
        };
        match self.stream(from, stop).await {
            Ok(ended) | Err(ended) => ended,
        }
    }

    async fn stream(&self, from: Position, stop: &CancellationToken) -> Result<Ended, Ended> {
        let mut conn = mysql_async::Conn::new(self.opts.clone()).await?;
        // Real GTID events instead of BEGIN queries and dummies.
        conn.query_drop("SET @mariadb_slave_capability = 4").await?;
        let heartbeat = self.settings.binlog_heartbeat_ms;
        conn.query_drop(format!("SET @master_heartbeat_period = {}", heartbeat.as_nanos())).await?;
        let request = mysql_async::BinlogStreamRequest::new(self.settings.binlog_server_id)
            .with_filename(from.file.as_bytes())
            .with_pos(from.pos);
        self.stream_connection.store(conn.id(), Ordering::Relaxed);
        let mut stream = conn.get_binlog_stream(request).await?;
        tracing::info!(file = %from.file, pos = from.pos, "following the binlog");
        let mut file = from.file.clone();
        // Rows of the transaction being read, and of committed ones not yet
        // published (up to `ready_at`).
        let (mut open, mut ready): (Vec<Outgoing>, Vec<Outgoing>) = (Vec::new(), Vec::new());
        let mut ready_at: Option<Position> = None;
        // Ids the broker stored that are not marked yet, up to `published_at`.
        let (mut published, mut published_at): (Vec<u64>, Option<Position>) = (Vec::new(), None);
        // Where reading has got to between outbox transactions, and what is stored.
        let (mut read_at, mut stored) = (from.clone(), from);
        let mut stored_when = tokio::time::Instant::now();
        loop {
            // Marks and the position go in at most every STORE_EVERY (and on
            // a stop), so a busy stream costs one small transaction per period.
            if published_at.is_some() && (stored_when.elapsed() >= STORE_EVERY || stop.is_cancelled()) {
                let at = published_at.take().expect("checked");
                self.store(&mut published, &at).await?;
                (stored, stored_when) = (at, tokio::time::Instant::now());
            }
            if stop.is_cancelled() {
                return Ok(Ended::Stopped);
            }
            // What committed goes out once nothing more is ready to read.
            let next = match stream.next().now_or_never() {
                Some(next) => next,
                None if ready_at.is_some() => {
                    let at = ready_at.take().expect("checked");
                    published.extend(self.publish(&mut ready, stop).await?);
                    (read_at, published_at) = (at.clone(), Some(at));
                    continue;
                }
                None => {
                    // A position moved only by other tables' transactions is
                    // stored now and then, so a restart does not read them again.
                    if published_at.is_none() && read_at != stored && stored_when.elapsed() > CHECKPOINT_EVERY {
                        self.store(&mut published, &read_at).await?;
                        (stored, stored_when) = (read_at.clone(), tokio::time::Instant::now());
                    }
                    let wait = match published_at {
                        Some(_) => STORE_EVERY.saturating_sub(stored_when.elapsed()),
                        None => 3 * heartbeat,
                    };
                    tokio::select! {
                        () = stop.cancelled() => continue,
                        next = tokio::time::timeout(wait, stream.next()) => match next {
                            Ok(next) => next,
                            // Time to store what was published.
                            Err(_) if published_at.is_some() => continue,
                            Err(_) => return Ok(Ended::Lost(anyhow::anyhow!("no event nor heartbeat for three periods"))),
                        },
                    }
                }
            };
            let event = match next {
                None => return Ok(Ended::Lost(anyhow::anyhow!("the server ended the binlog stream"))),
                Some(Err(mysql_async::Error::Server(e))) if e.code == PURGED => return Ok(Ended::Purged(e.message)),
                Some(Err(err)) => return Ok(Ended::Lost(err.into())),
                Some(Ok(event)) => event,
            };
            let end = u64::from(event.header().log_pos());
            // The rotate and format events sent ahead of the requested position.
            if end == 0 {
                continue;
            }
            match event.read_data()? {
                Some(EventData::RotateEvent(rotate)) => {
                    file = rotate.name().into_owned();
                    read_at = Position { file: file.clone(), pos: rotate.position() };
                }
                Some(EventData::RowsEvent(rows)) => {
                    let inserts = matches!(rows, RowsEventData::WriteRowsEventV1(_) | RowsEventData::WriteRowsEvent(_));
                    let Some(map) = stream.get_tme(rows.table_id()) else { continue };
                    if !inserts || map.database_name() != self.schema || map.table_name() != "outbox" {
                        continue;
                    }
                    for row in rows.rows(map) {
                        let Some(after) = row?.1 else { continue };
                        match Columns::of(&after).and_then(|cols| cols.event(&after)) {
                            Ok(event) => open.push(event),
                            Err(why) => return Ok(Ended::Unusable(why)),
                        }
                    }
                }
                Some(EventData::XidEvent(_)) => {
                    let at = Position { file: file.clone(), pos: end };
                    if open.is_empty() && ready.is_empty() {
                        read_at = at;
                    } else {
                        ready.append(&mut open);
                        if ready.len() >= self.settings.batch_max {
                            published.extend(self.publish(&mut ready, stop).await?);
                            (read_at, published_at) = (at.clone(), Some(at));
                        } else {
                            ready_at = Some(at);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Publishes `ready` (the same batch again while the broker refuses it);
    /// answers the ids it published.
    async fn publish(&self, ready: &mut Vec<Outgoing>, stop: &CancellationToken) -> Result<Vec<u64>, Ended> {
        let mut backoff = Backoff::new(Duration::from_millis(100), self.settings.backoff_max_ms);
        while let Err(err) = self.relay.send(ready).await {
            tracing::warn!(rows = ready.len(), error = %err, "outbox publish failed; trying the batch again");
            if !backoff.wait(stop).await {
                return Err(Ended::Stopped);
            }
        }
        Ok(ready.drain(..).map(|e| e.id).collect())
    }

    /// Marks `published` and stores `at` in one transaction.
    async fn store(&self, published: &mut Vec<u64>, at: &Position) -> Result<(), Ended> {
        let mut tx = self.db.begin().await?;
        if !published.is_empty() {
            let mut mark = QueryBuilder::<MySql>::new(
                "UPDATE outbox SET published_at = CURRENT_TIMESTAMP(3) WHERE published_at IS NULL AND id IN (",
            );
            let mut ids = mark.separated(", ");
            for id in published.iter() {
                ids.push_bind(id);
            }
            mark.push(")");
            mark.build().execute(&mut *tx).await?;
        }
        store_position(&mut tx, at).await?;
        tx.commit().await?;
        published.clear();
        Ok(())
    }
}

/// How often a position moved only by other tables' transactions is stored.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(10);

/// How often published rows are marked and the position stored while events
/// flow: a relay that dies sends at most this much again.
const STORE_EVERY: Duration = Duration::from_millis(100);

async fn store_position(conn: &mut sqlx::MySqlConnection, at: &Position) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO outbox_relay_position (relay, file, pos) VALUES ('binlog', ?, ?) \
         ON DUPLICATE KEY UPDATE file = VALUES(file), pos = VALUES(pos), stored_at = CURRENT_TIMESTAMP(3)",
    )
    .bind(&at.file)
    .bind(at.pos)
    .execute(conn)
    .await?;
    Ok(())
}

/// Where an outbox row's fields are in its binlog image, found by column
/// name (`binlog_row_metadata=FULL`), so added columns change nothing.
#[derive(Debug, Clone, Copy)]
struct Columns {
    id: usize,
    topic: usize,
    msg_key: usize,
    payload: usize,
}

impl Columns {
    fn of(row: &mysql_async::binlog::row::BinlogRow) -> Result<Self, String> {
        let names: Vec<String> = row.columns_ref().iter().map(|c| c.name_str().into_owned()).collect();
        let find = |name: &str| {
            names.iter().position(|n| n == name).ok_or_else(|| {
                format!("the outbox table's binlog rows have no column `{name}` (columns: {})", names.join(", "))
            })
        };
        Ok(Self { id: find("id")?, topic: find("topic")?, msg_key: find("msg_key")?, payload: find("payload")? })
    }

    fn event(&self, row: &mysql_async::binlog::row::BinlogRow) -> Result<Outgoing, String> {
        let value = |i: usize| match row.as_ref(i) {
            Some(BinlogValue::Value(v)) => Ok(v.clone()),
            other => Err(format!("outbox column {i} holds {other:?}")),
        };
        let text = |i: usize| match value(i)? {
            mysql_async::Value::Bytes(b) => String::from_utf8(b).map_err(|e| e.to_string()),
            other => Err(format!("outbox column {i} holds {other:?}, not text")),
        };
        let id = match value(self.id)? {
            mysql_async::Value::Int(n) => n as u64,
            mysql_async::Value::UInt(n) => n,
            other => return Err(format!("outbox id holds {other:?}")),
        };
        Ok(Outgoing { id, topic: text(self.topic)?, msg_key: text(self.msg_key)?, payload: text(self.payload)? })
    }
}
