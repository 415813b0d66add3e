//! The library behind the `cityhub` command: admins, demo data, users, the
//! flash-sale load tool, the benchmark suite, the chaos runs, the
//! parking-lot commands, the stock-bucket simulation, the per-shard query
//! costs and [`platform`], which
//! runs the API and worker binaries as child processes.
#![forbid(unsafe_code)]

pub mod admin;
pub mod bench;
pub mod chaos;
pub mod demo;
pub mod flash_sale;
pub mod parked;
pub mod platform;
pub mod shards;
pub mod simulate;
pub mod topology;
pub mod users;
