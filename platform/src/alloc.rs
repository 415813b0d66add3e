//! The binaries' memory allocator, and what it holds.
//!
//! glibc's malloc gives each busy thread an arena of its own and keeps the
//! pages a burst freed in it: a process's RSS stays at its busiest moment's
//! (the API's grew by a quarter over three benchmark rounds and stayed
//! there). jemalloc hands pages nobody uses back to the system after its
//! decay time (10 s), so RSS follows the live heap. Each binary installs
//! [`Allocator`] as its global allocator and calls [`purge_in_background`]
//! at start; the ops listener samples
//! [`HEAP_BYTES`](crate::metrics::HEAP_BYTES) at each scrape.

pub use tikv_jemallocator::Jemalloc as Allocator;

/// Starts jemalloc's background thread, which hands decayed pages back on
/// time. Without it jemalloc purges only when a thread allocates, so a
/// process that falls quiet after a burst keeps the burst's pages resident
/// until its next request. A jemalloc configuration that names
/// `background_thread` (`_RJEM_MALLOC_CONF`) decides instead.
pub fn purge_in_background() -> Result<(), tikv_jemalloc_ctl::Error> {
    if std::env::var(CONF).is_ok_and(|conf| conf.contains("background_thread")) {
        return Ok(());
    }
    tikv_jemalloc_ctl::max_background_threads::write(1)?;
    tikv_jemalloc_ctl::background_thread::write(true)
}

/// The variable jemalloc (built with the `_rjem_` prefix) reads its
/// configuration from at start.
const CONF: &str = "_RJEM_MALLOC_CONF";

/// The allocator's figures: bytes the program holds (`allocated`) and bytes
/// of memory the allocator keeps resident for it (`resident`).
#[derive(Debug, Clone, Copy)]
pub struct Heap {
    pub allocated: u64,
    pub resident: u64,
}

/// The allocator's figures now (zeros where the allocator cannot say, as
/// in a process that does not use [`Allocator`]).
pub fn heap() -> Heap {
    // jemalloc's statistics are a snapshot taken at the last epoch.
    let _ = tikv_jemalloc_ctl::epoch::advance();
    let read = |r: tikv_jemalloc_ctl::Result<usize>| r.map_or(0, |b| b as u64);
    Heap {
        allocated: read(tikv_jemalloc_ctl::stats::allocated::read()),
        resident: read(tikv_jemalloc_ctl::stats::resident::read()),
    }
}

/// Sets [`HEAP_BYTES`](crate::metrics::HEAP_BYTES) from [`heap`].
pub fn record() {
    let Heap { allocated, resident } = heap();
    metrics::gauge!(crate::metrics::HEAP_BYTES, "state" => "allocated").set(allocated as f64);
    metrics::gauge!(crate::metrics::HEAP_BYTES, "state" => "resident").set(resident as f64);
}

#[cfg(test)]
mod tests {
    #[test]
    fn purging_in_background_turns_on_jemallocs_background_thread() {
        super::purge_in_background().unwrap();
        assert!(tikv_jemalloc_ctl::background_thread::read().unwrap());
        assert_eq!(tikv_jemalloc_ctl::max_background_threads::read().unwrap(), 1);
    }
}
