//! `cityhub-api`: settings, logging, state, then serve until Ctrl-C or SIGTERM.

use anyhow::Context;
use cityhub_api::AppState;
use cityhub_core::config::Settings;
use cityhub_core::mq::runtime::MqRuntime;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load().context("load settings")?;
    cityhub_core::telemetry::init(&settings.log);
    let mq = MqRuntime::new("api").context("start mq runtime")?;
    let listener = tokio::net::TcpListener::bind(&settings.http.addr)
        .await
        .with_context(|| format!("bind {}", settings.http.addr))?;
    let state = AppState::build(settings, mq.client()).await?;
    cityhub_api::run(listener, state.clone(), cityhub_core::shutdown::shutdown_signal()).await?;
    state.close().await;
    mq.shutdown().await;
    Ok(())
}
