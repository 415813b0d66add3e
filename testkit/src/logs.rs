//! Test logging: events go to the test's output and into an in-memory
//! buffer that tests search ([`contains`], [`any`]), e.g. to follow a
//! request id from the API to the worker. Span fields are captured too.

use std::fmt::Write as _;
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());
const MAX_LINES: usize = 200_000;

struct Capture;

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }
}

fn keep(line: Line) {
    let mut lines = LINES.lock().unwrap_or_else(|p| p.into_inner());
    if lines.len() < MAX_LINES {
        lines.push(line.0);
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut line = Line(event.metadata().target().to_owned());
        event.record(&mut line);
        keep(line);
    }

    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, _id: &tracing::span::Id, _ctx: Context<'_, S>) {
        let mut line = Line(format!("{} span {}", attrs.metadata().target(), attrs.metadata().name()));
        attrs.record(&mut line);
        keep(line);
    }

    fn on_record(&self, _id: &tracing::span::Id, values: &tracing::span::Record<'_>, _ctx: Context<'_, S>) {
        let mut line = Line("span record".to_owned());
        values.record(&mut line);
        keep(line);
    }
}

pub(crate) fn init() {
    init_with("warn,cityhub=info");
}

/// Starts capturing with `filter` (unless `RUST_LOG` is set) if nothing
/// captures yet in this process; call it before [`crate::TestEnv::new`]
/// to capture more than the default.
pub fn init_with(filter: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(filter));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_test_writer())
        .with(Capture)
        .try_init();
}

/// True when some captured line satisfies `f`.
pub fn any(f: impl Fn(&str) -> bool) -> bool {
    LINES.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|l| f(l))
}

/// True when a captured event's target and fields contain every needle.
pub fn contains(needles: &[&str]) -> bool {
    let lines = LINES.lock().unwrap_or_else(|p| p.into_inner());
    lines.iter().any(|l| needles.iter().all(|n| l.contains(n)))
}

/// How many captured lines satisfy `f`.
pub fn count(f: impl Fn(&str) -> bool) -> usize {
    LINES.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|l| f(l)).count()
}

/// The MySQL statements run in this process so far (sqlx logs each at
/// trace under `sqlx::query`, see `cityhub_platform::db`; capture with
/// `sqlx::query=trace`, see [`init_with`]).
pub fn mysql_statements() -> usize {
    count(|l| l.starts_with("sqlx::query"))
}
