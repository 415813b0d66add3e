//! The rolling deploy, on the cluster shape under a sale: each API in turn
//! is stopped with SIGTERM (its `/serving` fails at once, the balancer takes
//! it out of the pool, it serves what is still sent to it for
//! `http.drain_ms`, finishes its in-flight seckills and exits), started again
//! and waited for until the balancer has it back; then each worker (it
//! stops consuming, finishes its batch and commits; its queues move to the
//! other worker); then each broker (stopped, started again on its store).
//! The other API carries the whole sale meanwhile. Shoppers must see no
//! failed request: only the sale's own answers (202, 409), which the run
//! checks per request.
//!
//! With another build (`--next-bin-dir`), the APIs and workers come back
//! from it: halfway through, the two APIs report different builds in
//! `cityhub_build_info` and serve side by side.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::lab::Part;
use super::Run;

/// Longest wait for the balancer to take a restarted API back, and for a
/// restarted broker to serve.
const BACK_WITHIN: Duration = Duration::from_secs(60);

/// How long a restarted broker is given to register its topics with the
/// name server once it listens (the lab's other broker starts the same way).
const BROKER_REGISTERS: Duration = Duration::from_secs(2);

impl Run<'_> {
    /// Restarts every API, worker and broker in turn; `next` is the build
    /// the APIs and workers come back from (`None`: the running one).
    pub(super) async fn rolling_deploy(&mut self, next: Option<PathBuf>) -> anyhow::Result<()> {
        let shape = self.cluster.as_mut().context("no cluster shape")?;
        let first_metrics = self.platform.settings.http.metrics_addr.clone();
        let second_metrics = shape.second_api.settings.http.metrics_addr.clone();
        let running = build_of(&first_metrics).await?;
        if let Some(dir) = next {
            self.platform.bin_dir = dir;
        }

        self.platform.restart_api().await?;
        shape.parts.wait_in_pool(0, BACK_WITHIN).await?;
        let (first, second) = (build_of(&first_metrics).await?, build_of(&second_metrics).await?);
        if self.platform.bin_dir != crate::platform::bin_dir() {
            anyhow::ensure!(first != second, "the next build reports the running one's build ({running})");
            println!("    side by side: {first} and {second}");
        }
        shape.second_api.restart(&self.platform.bin_dir).await?;
        shape.parts.wait_in_pool(1, BACK_WITHIN).await?;
        anyhow::ensure!(
            build_of(&second_metrics).await? == first,
            "the APIs do not run the same build after the deploy"
        );

        self.platform.restart_worker().await?;
        self.platform.restart_second_worker().await?;

        self.lab.stop(Part::Broker).await?;
        self.lab.start_part(Part::Broker).await?;
        tokio::time::sleep(BROKER_REGISTERS).await;
        anyhow::ensure!(self.lab.broker_serves(BACK_WITHIN).await, "the first broker did not serve again");
        shape.parts.stop_broker_b().await?;
        shape.parts.start_broker_b().await?;
        Ok(())
    }
}

/// The build a process reports on its metrics endpoint: `version commit`
/// from `cityhub_build_info`.
async fn build_of(metrics_addr: &str) -> anyhow::Result<String> {
    let text = reqwest::get(format!("http://{metrics_addr}/metrics")).await?.text().await?;
    parse_build(&text).with_context(|| format!("no cityhub_build_info on {metrics_addr}"))
}

fn parse_build(metrics: &str) -> Option<String> {
    let line = metrics.lines().find(|l| l.starts_with("cityhub_build_info{"))?;
    let label = |name: &str| line.split(&format!("{name}=\"")).nth(1)?.split('"').next().map(str::to_owned);
    Some(format!("{} {}", label("version")?, label("commit")?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_is_read_from_its_info_series() {
        let text = "# TYPE cityhub_build_info gauge\ncityhub_build_info{commit=\"abc1234\",version=\"0.1.0\"} 1\n";
        assert_eq!(super::parse_build(text).as_deref(), Some("0.1.0 abc1234"));
        assert_eq!(super::parse_build("cityhub_up 1\n"), None);
    }
}
