//! The library behind the `cityhub` command: admins, demo data, users, the
//! flash-sale load tool, the benchmark suite, the chaos runs, the
//! parking-lot commands, the stock-bucket simulation, the per-shard query
//! costs, the operator's actions through the running API ([`operator`]) and
//! [`platform`], which runs the API and worker binaries as child processes.
#![forbid(unsafe_code)]

pub mod admin;
pub mod bench;
pub mod chaos;
pub mod demo;
pub mod flash_sale;
pub mod operator;
pub mod parked;
pub mod platform;
pub mod shards;
pub mod simulate;
pub mod topology;
pub mod users;

/// A parser of counts that must be at least 1 (a zero would divide by
/// zero or wait forever further on).
pub fn positive<T>() -> clap::builder::RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
    <T as TryFrom<u64>>::Error: std::error::Error + Send + Sync + 'static,
{
    clap::builder::RangedU64ValueParser::<T>::new().range(1..)
}

/// A distance in metres: finite, from 1 m to 50 km.
pub fn metres(raw: &str) -> Result<f64, String> {
    match raw.parse::<f64>() {
        Ok(m) if m.is_finite() && (1.0..=50_000.0).contains(&m) => Ok(m),
        _ => Err(format!("{raw:?} is not a distance from 1 to 50000 metres")),
    }
}
