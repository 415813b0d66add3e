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

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
