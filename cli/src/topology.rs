//! `cityhub topology`: the scale-out shape on this machine, in the
//! foreground until Ctrl-C. A MariaDB, a RocketMQ name server with two
//! brokers and a Redis Cluster of 3 masters with a replica each, all of
//! their own (ports of their own, data in one scratch folder), then two
//! workers in one consumer group and two APIs behind HAProxy, a demo shop
//! and voucher, and where everything listens. The chaos scenarios on the
//! cluster shape start the same parts ([`crate::chaos::cluster`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use cityhub_core::config::Settings;

use crate::chaos::cluster::start_shape;
use crate::chaos::lab::Lab;

/// How long the second worker gets to hold a queue of the order topic.
const REBALANCE: Duration = Duration::from_secs(120);

/// Starts the shape, prints it, waits for Ctrl-C, stops the platform.
pub async fn run(base: &Settings, dir: PathBuf) -> anyhow::Result<()> {
    let lab = Lab::start(&dir).await.context("start MariaDB and RocketMQ")?;
    let settings = lab.settings(base);
    let logs = dir.join("logs");
    let (platform, shape) = start_shape(&lab, settings, &logs, REBALANCE).await?;
    let demo = crate::demo::Args { stock: 100, minutes: 120, shops: 300, radius_m: 8000.0, once: false };
    crate::demo::run(&platform.settings, &demo).await.context("create the demo shop and voucher")?;
    let s = &platform.settings;
    println!(
        "\nThe cluster topology is up.\n  shoppers     {front} (HAProxy: round robin over the two APIs, health-checked)\n  \
         APIs         http://{api1}  {api2}\n  workers      metrics http://{w1}/metrics (and a second one, same group)\n  \
         Redis        cluster nodes {nodes}\n  RocketMQ     name server 127.0.0.1:{ns}, brokers on {b1} and {b2}\n  \
         MariaDB      127.0.0.1:{db} (root, no password), database cityhub\n  logs         {logs}\n\n\
         Ctrl-C stops everything and removes {dir}.",
        front = shape.parts.base(),
        api1 = s.http.addr,
        api2 = shape.second_api.base,
        w1 = s.worker.metrics_addr,
        nodes = shape.parts.cluster_nodes(),
        ns = lab.namesrv_port,
        b1 = lab.broker_port,
        b2 = shape.parts.broker_b_port,
        db = lab.mysql_port,
        logs = logs.display(),
        dir = dir.display(),
    );
    cityhub_platform::shutdown::shutdown_signal().await;
    let stopped = platform.stop().await;
    drop(shape);
    stopped.map(|_| ())
}
