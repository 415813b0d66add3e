//! A Redis server of one test's own (see [`PrivateRedis`]).

use crate::eventually;

/// A Redis server of one test's own, on a free port, with its data in a
/// folder of its own: for failures the shared server must never see (a
/// restart from an older snapshot, a failover). Killed when dropped.
pub struct PrivateRedis {
    pub port: u16,
    dir: std::path::PathBuf,
    child: Option<std::process::Child>,
}

impl PrivateRedis {
    /// Starts an empty server (no automatic snapshots, no AOF).
    pub async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("cityhub-redis-{port}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Self { port, dir, child: None };
        redis.spawn().await;
        redis
    }

    async fn spawn(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--dbfilename", "dump.rdb", "--logfile", "redis.log"])
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        let url = self.url();
        let up = eventually(std::time::Duration::from_secs(10), || async {
            let Ok(client) = redis::Client::open(url.as_str()) else { return false };
            let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return false };
            redis::cmd("PING").query_async::<String>(&mut conn).await.is_ok()
        })
        .await;
        assert!(up, "the private Redis did not start");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn command(&self, cmd: &mut redis::Cmd) -> redis::RedisResult<redis::Value> {
        let client = redis::Client::open(self.url())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        cmd.query_async(&mut conn).await
    }

    /// `SAVE`: the snapshot a later restart comes back with.
    pub async fn snapshot(&self) {
        self.command(&mut redis::cmd("SAVE")).await.expect("SAVE");
    }

    /// `FLUSHALL`: the server keeps running with no data.
    pub async fn flush_all(&self) {
        self.command(&mut redis::cmd("FLUSHALL")).await.expect("FLUSHALL");
    }

    /// Kills the server (nothing saved) and starts it again from the last
    /// snapshot: Redis comes back older than it was, keys and all.
    pub async fn restart_from_snapshot(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawn().await;
    }
}

impl PrivateRedis {
    /// Starts watching every command the server runs (`MONITOR`), to
    /// count what one request costs.
    pub async fn monitor(&self) -> Monitor {
        use std::io::{BufRead, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect for MONITOR");
        stream.write_all(b"MONITOR\r\n").unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&lines);
        let reader = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(reader).lines().map_while(Result::ok) {
                sink.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        let client = redis::Client::open(self.url()).unwrap();
        let conn = client.get_multiplexed_async_connection().await.unwrap();
        let mut monitor = Monitor { stream, lines, conn, marks: 0, seen: 0 };
        monitor.take().await;
        monitor
    }
}

/// Commands a Redis server ran for its clients, read from `MONITOR`:
/// commands a script runs are left out (a script is one command), and so
/// is what a process does in the background whatever its clients send: the
/// node lease it renews, its beat, and the Redis generation watch reading
/// every master's identity (`INFO server replication`, once a second).
pub struct Monitor {
    stream: std::net::TcpStream,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    conn: redis::aio::MultiplexedConnection,
    marks: u64,
    seen: usize,
}

impl Monitor {
    /// The commands run since the last call (or the start): sends a marker
    /// and returns what came before it.
    pub async fn take(&mut self) -> Vec<String> {
        self.marks += 1;
        let mark = format!("cityhub-mark-{}", self.marks);
        let _: String = redis::cmd("ECHO").arg(&mark).query_async(&mut self.conn).await.unwrap();
        let quoted = format!("\"ECHO\" \"{mark}\"");
        let found = crate::eventually(std::time::Duration::from_secs(10), || async {
            self.lines.lock().unwrap_or_else(|p| p.into_inner())[self.seen..].iter().any(|l| l.contains(&quoted))
        })
        .await;
        assert!(found, "MONITOR did not show the marker");
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let end = self.seen + lines[self.seen..].iter().position(|l| l.contains(&quoted)).expect("found");
        let taken = lines[self.seen..end]
            .iter()
            .filter(|l| !l.contains(" lua] ") && !l.contains("\"ECHO\" \"cityhub-mark-"))
            .filter(|l| !l.contains("ids:node:") && !l.contains("ids:beats"))
            .filter(|l| !l.ends_with("\"INFO\" \"server\" \"replication\""))
            .filter(|l| l.starts_with('+') && l.as_str() != "+OK")
            .cloned()
            .collect();
        self.seen = end + 1;
        taken
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
