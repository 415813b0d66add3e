//! `cityhub-api`: settings, logging, state, then serve the public API and the
//! ops listener (`/metrics`) until Ctrl-C or SIGTERM.

use anyhow::Context;
use cityhub_api::AppState;
use cityhub_core::config::Settings;
use cityhub_platform::mq::runtime::MqRuntime;

#[global_allocator]
static ALLOCATOR: cityhub_platform::alloc::Allocator = cityhub_platform::alloc::Allocator;

/// CityHub's HTTP API and its ops listener. Settings come from `config/cityhub.toml` and `CITYHUB__*`
/// variables (docs/TUNING.md), not from arguments.
#[derive(clap::Parser)]
#[command(name = "cityhub-api", version)]
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
    let mq = MqRuntime::new("api").context("start mq runtime")?;
    let listener = tokio::net::TcpListener::bind(&settings.http.addr)
        .await
        .with_context(|| format!("bind {}", settings.http.addr))?;
    let ops = tokio::net::TcpListener::bind(&settings.http.metrics_addr)
        .await
        .with_context(|| format!("bind {}", settings.http.metrics_addr))?;
    let state = AppState::build(settings, mq.client()).await?;
    let stop = tokio_util::sync::CancellationToken::new();
    let ops = tokio::spawn(cityhub_platform::ops::serve(
        ops,
        state.metrics.clone(),
        state.db.clone(),
        cityhub_platform::jobs::Health::default(),
        stop.clone().cancelled_owned(),
    ));
    cityhub_api::run(listener, state.clone(), cityhub_platform::shutdown::shutdown_signal()).await?;
    state.close().await;
    stop.cancel();
    ops.await?.context("ops listener")?;
    mq.shutdown().await;
    Ok(())
}
