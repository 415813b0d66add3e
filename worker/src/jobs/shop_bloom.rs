//! The shop Bloom filter job: at start and every `shops.index_check_secs`
//! (tokio-cron-scheduler), builds the filter of shop ids from MySQL if Redis
//! does not hold a complete one (a new deployment, or Redis lost its data).
//! Until then shop reads run without it (the cached "none" still guards
//! MySQL). Several workers may build it at once: building only sets bits.

use std::time::Duration;

use cityhub_core::config::Settings;
use cityhub_core::kv::Kv;
use cityhub_core::shops::Shops;
use sqlx::MySqlPool;
use tokio_util::sync::CancellationToken;

pub async fn run(settings: &Settings, db: MySqlPool, kv: Kv, stop: CancellationToken) -> anyhow::Result<()> {
    let shops = Shops::from_settings(db, kv, settings);
    ensure(&shops).await;
    let every = Duration::from_secs(settings.shops.index_check_secs);
    cityhub_platform::jobs::every("shop_bloom", every, stop, move || {
        let shops = shops.clone();
        async move { ensure(&shops).await }
    })
    .await
}

async fn ensure(shops: &Shops) {
    if let Err(err) = shops.ensure_bloom().await {
        tracing::warn!(error = %err, "cannot check or build the shop Bloom filter; the next run retries");
    }
}
