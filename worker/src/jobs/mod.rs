//! The worker's jobs, one file each. A job has a `start` that fails loudly
//! if it cannot begin, and a `run` that works until its stop token is
//! cancelled and then finishes in-flight work.

pub mod order_close;
pub mod orders;
pub mod outbox_relay;
pub mod reconciler;
pub mod shop_bloom;
pub mod stock_release;
