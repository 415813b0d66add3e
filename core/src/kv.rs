//! The Redis handle the business rules use: the platform's connection, and
//! the business keys ([`CityKeys`]) on its key namer. Connecting it with
//! every business script loaded is the composition root's
//! ([`crate::services::connect_redis`]), so that no domain module imports the others.

pub use cityhub_platform::kv::{Keys, Kv};

pub use crate::keys::CityKeys;
