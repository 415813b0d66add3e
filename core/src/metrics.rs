//! The business metrics' names and help texts, in one place (the plumbing's
//! are in `cityhub_platform::metrics`). Label values come from the enums
//! they count ([`Outcome`](crate::seckill::Outcome),
//! [`Refusal`](crate::orders::Refusal)).

use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::PrometheusHandle;

pub const SECKILL_REQUESTS: &str = "cityhub_seckill_requests_total";
/// Requests refused by a route's rate limit, by `route`.
pub const RATE_LIMITED: &str = "cityhub_rate_limited_total";
pub const PARKED_ACCEPTED_ORDERS: &str = "cityhub_accepted_orders_parked_total";
pub const RECONCILER_RUNS: &str = "cityhub_reconciler_runs_total";
pub const RECONCILER_DIFFERENCES: &str = "cityhub_reconciler_differences_total";
pub const RECONCILER_REPAIRS: &str = "cityhub_reconciler_repairs_total";
/// Orders the reconciler re-published, by `result`: sent, paced (sent
/// lately, left alone), deferred (past a pass's most), failed.
pub const RECONCILER_REPUBLISHED: &str = "cityhub_reconciler_republished_total";
pub const ORDERS_CLOSED: &str = "cityhub_orders_closed_total";
pub const PAYMENT_CALLBACKS: &str = "cityhub_payment_callbacks_total";
pub const PAYMENT_MISMATCHES: &str = "cityhub_payment_mismatches_total";
pub const REFUNDS_PENDING: &str = "cityhub_refunds_pending";
pub const REFUNDS_FINISHED: &str = "cityhub_refunds_finished_total";
pub const VOUCHER_ID_BOUND_READS: &str = "cityhub_voucher_id_bound_reads_total";
pub const STOCK_RELEASES: &str = "cityhub_stock_releases_total";
pub const FOLLOW_EVENTS: &str = "cityhub_follow_events_total";
pub const FOLLOW_COUNTS_FIXED: &str = "cityhub_follow_counts_fixed_total";
pub const FOLLOW_LISTS_DROPPED: &str = "cityhub_follow_lists_dropped_total";
pub const FEED_EVENTS: &str = "cityhub_feed_events_total";
pub const SHOP_VISITS_DROPPED: &str = "cityhub_shop_visits_dropped_total";
/// Login codes sent (one SMS each).
pub const LOGIN_CODES_SENT: &str = "cityhub_login_codes_sent_total";
/// Guesses at login codes, by `result` ([`GuessStep::label`](crate::auth::GuessStep::label)).
pub const LOGIN_GUESSES: &str = "cityhub_login_guesses_total";
/// Bearer tokens refused in process because their MAC is wrong.
pub const FORGED_TOKENS: &str = "cityhub_forged_tokens_total";
/// Time of each step of an order-storing transaction, by `step` (see
/// [`orders::store::Step`](crate::orders::store::Step)).
pub const ORDER_STORE_STEP: &str = "cityhub_order_store_step_seconds";

/// Installs the recorder (once per process) and describes every family,
/// the plumbing's and the business ones.
pub fn install() -> PrometheusHandle {
    let handle = cityhub_platform::metrics::install();
    describe_counter!(LOGIN_CODES_SENT, "Login codes sent by SMS (at most one a minute and a few a day per phone).");
    describe_counter!(LOGIN_GUESSES, "Guesses at login codes by result: matched, wrong, gone, spent, needs_proof.");
    describe_counter!(FORGED_TOKENS, "Bearer tokens refused before any lookup: not issued by this platform.");
    describe_counter!(SECKILL_REQUESTS, "Seckill requests by outcome (see `seckill::Outcome::label`).");
    describe_counter!(
        PARKED_ACCEPTED_ORDERS,
        "Orders whose shopper was told 202 but which the worker parked instead of storing, by topic and kind; alert on any."
    );
    describe_counter!(RECONCILER_RUNS, "Reconciler runs by verdict: consistent, repaired, drift, paused.");
    describe_counter!(RECONCILER_DIFFERENCES, "Differences the reconciler found, by kind (see `reconcile::Kind`).");
    describe_counter!(RECONCILER_REPAIRS, "Differences the reconciler repaired, by kind.");
    describe_counter!(
        RECONCILER_REPUBLISHED,
        "Orders without a row the reconciler re-published, by result: sent, paced (sent lately), deferred (past a pass's most), failed."
    );
    describe_counter!(ORDERS_CLOSED, "Orders closed, by reason: expired, admin.");
    describe_counter!(PAYMENT_CALLBACKS, "Payment callbacks applied, by result: paid, failed, duplicate, refunded.");
    describe_counter!(
        PAYMENT_MISMATCHES,
        "Signed payment callbacks refused because they match no started payment, by reason: \
         unknown_txn, order, amount, stale (alert on any)."
    );
    describe_gauge!(
        REFUNDS_PENDING,
        "Payments whose refund is under way (status refunding), as the refund job last counted."
    );
    describe_counter!(
        VOUCHER_ID_BOUND_READS,
        "Reads of the highest voucher id from MySQL (at most one per 250 ms per instance), which refuse made-up ids."
    );
    describe_counter!(REFUNDS_FINISHED, "Refunds the refund job finished after the path that started them did not.");
    describe_counter!(STOCK_RELEASES, "Stock-release events applied to Redis, by result.");
    describe_counter!(FOLLOW_EVENTS, "Follow events the consumer applied, by result: changed, stale, duplicate.");
    describe_counter!(FOLLOW_COUNTS_FIXED, "Follow counts the correction job repaired, by store: mysql, redis.");
    describe_counter!(FOLLOW_LISTS_DROPPED, "Follow lists in Redis the correction job found drifted and dropped.");
    describe_counter!(FEED_EVENTS, "Published notes the feed consumer handled, by result: pushed, pulled.");
    describe_counter!(SHOP_VISITS_DROPPED, "Shop visits not counted as unique visitors because the queue was full.");
    describe_histogram!(
        ORDER_STORE_STEP,
        Unit::Seconds,
        "Time of each step of a transaction storing orders, by step: begin, insert, stock, commit."
    );
    handle
}
