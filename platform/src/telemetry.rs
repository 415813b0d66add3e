//! Logging set-up shared by the binaries: human-readable by default, JSON by
//! config; `RUST_LOG` overrides the configured filter.

use std::io::IsTerminal;

use tracing_subscriber::{fmt, EnvFilter};

use crate::config::LogSettings;

/// Installs the global subscriber. Call once, first thing in `main`.
pub fn init(settings: &LogSettings) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.filter));
    let builder = fmt().with_env_filter(filter).with_target(true).with_ansi(std::io::stdout().is_terminal());
    if settings.format == "json" {
        builder.json().flatten_event(true).init();
    } else {
        builder.init();
    }
}
