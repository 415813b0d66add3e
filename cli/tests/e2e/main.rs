//! End-to-end tests of the operator tools against the real binaries: the
//! API and worker run as child processes (built by `cargo build --workspace
//! --bins`, which `scripts/test` does first) on their own database, key
//! prefix and topic.

// A chaos scenario's future nests the whole platform's (lab, API, worker,
// relays): its layout is deeper than the default limit of 128 allows once
// anything on that path adds a layer, and a clean build finds it where an
// incremental one may not.
#![recursion_limit = "256"]

mod bench;
mod chaos;
mod flash_sale;
mod jmeter;
mod ops;
mod parked;
mod shards;
mod simulate;

use std::path::PathBuf;

use cityhub_cli::platform::Platform;
use cityhub_testkit::TestEnv;

/// A private platform plus a scratch folder for its logs and outputs.
pub struct E2e {
    pub env: TestEnv,
    pub platform: Platform,
    pub dir: PathBuf,
}

impl E2e {
    pub async fn start() -> Self {
        let env = TestEnv::new();
        let dir = std::env::temp_dir().join(format!("cityhub-e2e-{}", env.id));
        std::fs::create_dir_all(&dir).unwrap();
        let mut settings = env.settings.clone();
        settings.log.filter = "warn,cityhub=info".into();
        let platform = Platform::start(settings, &dir).await.expect("platform starts");
        Self { env, platform, dir }
    }

    /// `cityhub <args>` with this platform's settings.
    pub fn cli(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cityhub"));
        cmd.envs(self.platform.settings.to_vars());
        cmd
    }

    pub async fn stop(self) {
        self.stop_drained().await;
    }

    /// Stops the platform; the binaries that had to be killed after their
    /// grace.
    pub async fn stop_drained(self) -> Vec<&'static str> {
        let killed = self.platform.stop().await.unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
        killed
    }
}
