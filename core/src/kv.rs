//! The Redis handle the business rules use: the platform's connection with
//! every business Lua script loaded at connect time, and the business keys
//! ([`CityKeys`]) on its key namer.

pub use cityhub_platform::kv::{Keys, Kv};

pub use crate::keys::CityKeys;

/// Connects and loads every business script (and the platform's own).
pub async fn connect(settings: &cityhub_platform::config::RedisSettings) -> redis::RedisResult<Kv> {
    let scripts: Vec<&redis::Script> = crate::seckill::scripts::all()
        .into_iter()
        .chain([crate::auth::guard::script(), crate::shops::geo::script(), crate::social::projection::script()])
        .chain(crate::social::lists::scripts())
        .collect();
    Kv::connect(settings, &scripts).await
}
