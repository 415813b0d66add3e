//! `cityhub-order-worker`: settings, logging, the RocketMQ runtime, then the
//! worker until Ctrl-C or SIGTERM.

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_platform::mq::runtime::MqRuntime;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load().context("load settings")?;
    cityhub_platform::telemetry::init(&settings.log);
    let mq = MqRuntime::new("worker").context("start mq runtime")?;
    let outcome =
        cityhub_order_worker::run(settings, &mq.client(), cityhub_platform::shutdown::shutdown_signal()).await;
    mq.shutdown().await;
    outcome
}
