//! `cityhub-order-worker`: settings, logging, the RocketMQ runtime, then the
//! worker until Ctrl-C or SIGTERM.

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_platform::mq::runtime::MqRuntime;

#[global_allocator]
static ALLOCATOR: cityhub_platform::alloc::Allocator = cityhub_platform::alloc::Allocator;

/// CityHub's worker: the order consumer and every background job. Settings come from `config/cityhub.toml` and `CITYHUB__*`
/// variables (docs/TUNING.md), not from arguments.
#[derive(clap::Parser)]
#[command(name = "cityhub-order-worker", version)]
struct Args {}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // `--help` and `--version` answer and exit before anything starts.
    let Args {} = clap::Parser::parse();
    let settings = Settings::load().context("load settings")?;
    cityhub_platform::telemetry::init(&settings.log);
    if let Err(err) = cityhub_platform::alloc::purge_in_background() {
        tracing::warn!(%err, "jemalloc's background purge did not start; freed pages go back only as threads allocate");
    }
    let mq = MqRuntime::new("worker").context("start mq runtime")?;
    let outcome =
        cityhub_order_worker::run(settings, &mq.client(), cityhub_platform::shutdown::shutdown_signal()).await;
    mq.shutdown().await;
    outcome
}
