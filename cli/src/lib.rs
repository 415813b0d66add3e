//! The library behind the `cityhub` command: demo data, users, the
//! flash-sale load tool, the benchmark suite and [`platform`], which runs
//! the API and worker binaries as child processes.
#![forbid(unsafe_code)]

pub mod bench;
pub mod demo;
pub mod flash_sale;
pub mod platform;
pub mod users;
