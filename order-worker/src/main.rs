//! `cityhub-order-worker`: settings, logging, the RocketMQ runtime, then the
//! worker until Ctrl-C or SIGTERM.

use anyhow::Context;
use cityhub_core::config::Settings;
use cityhub_core::mq::runtime::MqRuntime;
use cityhub_order_worker::Worker;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load().context("load settings")?;
    cityhub_core::telemetry::init(&settings.log);
    let mq = MqRuntime::new("worker").context("start mq runtime")?;
    let db = cityhub_core::db::connect(&settings.database)
        .await
        .context("connect to MySQL")?;
    let kv = cityhub_core::kv::Kv::connect(&settings.redis)
        .await
        .context("connect to Redis")?;
    let worker = Worker::start(&settings, &mq.client(), db, kv).await?;
    cityhub_core::shutdown::shutdown_signal().await;
    worker.shutdown().await;
    mq.shutdown().await;
    Ok(())
}
