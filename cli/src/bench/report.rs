//! The benchmark report: medians over the rounds, `BENCHMARKS.md` (keeping
//! its hand-written notes) and the rows of each round.

use super::relay::{RelayFigures, Relays};
use super::stages::{ConsumerModes, Stages, TxSplit};
use super::{Output, Round};

/// The median of one figure over the rounds.
fn median_of(rounds: &[Round], f: impl Fn(&Round) -> f64) -> f64 {
    let mut v: Vec<f64> = rounds.iter().map(f).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub fn median(rounds: &[Round]) -> Round {
    let m = |f: fn(&Round) -> f64| median_of(rounds, f);
    Round {
        p1_seckill_rps: m(|r| r.p1_seckill_rps),
        p1_evalsha_rps: m(|r| r.p1_evalsha_rps),
        p1_ratio: m(|r| r.p1_ratio),
        p1_p99_ms: m(|r| r.p1_p99_ms),
        p1_limited_rps: m(|r| r.p1_limited_rps),
        p1_limited_ratio: m(|r| r.p1_limited_ratio),
        p2_orders_per_s: m(|r| r.p2_orders_per_s),
        p2_drain_s: m(|r| r.p2_drain_s),
        p2_p99_ms: m(|r| r.p2_p99_ms),
        p2_stages: Stages {
            evalsha: m(|r| r.p2_stages.evalsha),
            send: m(|r| r.p2_stages.send),
            drain: m(|r| r.p2_stages.drain),
            insert: m(|r| r.p2_stages.insert),
        },
        p2_limit: m(|r| r.p2_limit),
        p2_ratio: m(|r| r.p2_ratio),
        p2_http_rps: m(|r| r.p2_http_rps),
        p2_limit_with_http: m(|r| r.p2_limit_with_http),
        p2_ratio_with_http: m(|r| r.p2_ratio_with_http),
        p3_shop_rps: m(|r| r.p3_shop_rps),
        p3_trivial_rps: m(|r| r.p3_trivial_rps),
        p3_ratio: m(|r| r.p3_ratio),
        p3_voucher_rps: m(|r| r.p3_voucher_rps),
        p3_voucher_ratio: m(|r| r.p3_voucher_ratio),
        p3_limited_rps: m(|r| r.p3_limited_rps),
        p3_unlimited_rps: m(|r| r.p3_unlimited_rps),
        p3_limited_ratio: m(|r| r.p3_limited_ratio),
        p4_worker_rows_per_s: m(|r| r.p4_worker_rows_per_s),
        p4_raw_rows_per_s: m(|r| r.p4_raw_rows_per_s),
        p4_ratio: m(|r| r.p4_ratio),
        p4b_ratio: m(|r| r.p4b_ratio),
        p4_large_rows_per_s: m(|r| r.p4_large_rows_per_s),
        p4_large_ratio: m(|r| r.p4_large_ratio),
        relays: Relays {
            poll: relay_median(rounds, |r| r.relays.poll),
            binlog: relay_median(rounds, |r| r.relays.binlog),
        },
        p4_tx: tx_median(rounds, |r| r.p4_tx),
        p4_large_tx: tx_median(rounds, |r| r.p4_large_tx),
        consumer_modes: ConsumerModes {
            push: m(|r| r.consumer_modes.push),
            push_large: m(|r| r.consumer_modes.push_large),
            push_more_queues: m(|r| r.consumer_modes.push_more_queues),
            lite_pull: m(|r| r.consumer_modes.lite_pull),
        },
        p5_rss_start_mb: m(|r| r.p5_rss_start_mb),
        p5_rss_end_mb: m(|r| r.p5_rss_end_mb),
        p5_heap_start_mb: m(|r| r.p5_heap_start_mb),
        p5_heap_end_mb: m(|r| r.p5_heap_end_mb),
        p5_rss_round_end_mb: m(|r| r.p5_rss_round_end_mb),
        p5_threads_round_end: m(|r| r.p5_threads_round_end),
        p6_recs_cold_ms: m(|r| r.p6_recs_cold_ms),
        p6_recs_warm_ms: m(|r| r.p6_recs_warm_ms),
        p6_reference_ms: m(|r| r.p6_reference_ms),
        p6_cold_ratio: m(|r| r.p6_cold_ratio),
        p6_warm_ratio: m(|r| r.p6_warm_ratio),
        invariants_pass: rounds.iter().all(|r| r.invariants_pass),
    }
}

/// The median of each figure of one relay over the rounds.
fn relay_median(rounds: &[Round], f: fn(&Round) -> RelayFigures) -> RelayFigures {
    let m = |g: fn(&RelayFigures) -> f64| median_of(rounds, |r| g(&f(r)));
    RelayFigures {
        p50_ms: m(|x| x.p50_ms),
        p99_ms: m(|x| x.p99_ms),
        idle_qps: m(|x| x.idle_qps),
        busy_qps: m(|x| x.busy_qps),
    }
}

/// The median of each part of a [`TxSplit`] over the rounds.
fn tx_median(rounds: &[Round], f: fn(&Round) -> TxSplit) -> TxSplit {
    let m = |g: fn(&TxSplit) -> f64| median_of(rounds, |r| g(&f(r)));
    TxSplit {
        rows: m(|t| t.rows),
        begin_ms: m(|t| t.begin_ms),
        insert_ms: m(|t| t.insert_ms),
        stock_ms: m(|t| t.stock_ms),
        commit_ms: m(|t| t.commit_ms),
    }
}

pub(super) const NOTES_HEADING: &str = "## Profile and fix";

pub fn write_markdown(path: &std::path::Path, o: &Output) -> anyhow::Result<()> {
    let m = &o.median;
    let mut md = String::new();
    md.push_str("# CityHub benchmarks\n\nWritten by `cityhub bench`; every figure is measured next to its reference in the same round.\n\n");
    md.push_str(&format!(
        "- Machine: {}\n- Settings: `{}`\n- Rounds: {} (medians below)\n\n",
        o.machine,
        o.settings,
        o.rounds.len()
    ));
    md.push_str("| figure | measured (median) | reference | ratio | goal |\n|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| P1 flash-sale path | {:.0} seckill req/s (p99 {:.1} ms) | {:.0} EVALSHA/s redis-benchmark | **{:.2}** | >= 1.0 |\n",
        m.p1_seckill_rps, m.p1_p99_ms, m.p1_evalsha_rps, m.p1_ratio
    ));
    md.push_str(&format!(
        "| P1 with rate limits | {:.0} seckill req/s, limits on (`{}`) | {:.0} seckill req/s, limits off (P1) | **{:.2}** | >= 0.90 |\n",
        m.p1_limited_rps, o.settings["p1_limited"].as_str().unwrap_or("?"), m.p1_seckill_rps, m.p1_limited_ratio
    ));
    md.push_str(&format!(
        "| P2 accepted path | {:.0} orders/s HTTP to MySQL (p99 {:.1} ms), drain {:.2} s | {:.0} orders/s composed stage limit | **{:.2}** | >= 0.80 |\n",
        m.p2_orders_per_s, m.p2_p99_ms, m.p2_drain_s, m.p2_limit, m.p2_ratio
    ));
    md.push_str(&format!(
        "| P2 with its HTTP stage | {:.0} orders/s | {:.0} orders/s, the stage limit with HTTP in the row ({:.0} req/s of P2's load generator on `GET /healthz`) | **{:.2}** | none: names the next limit |\n",
        m.p2_orders_per_s, m.p2_limit_with_http, m.p2_http_rps, m.p2_ratio_with_http
    ));
    md.push_str(&format!(
        "| P3 shop read (L1 hit) | {:.0} req/s `GET /shops/{{id}}` | {:.0} req/s `GET /healthz`, same wrk load | **{:.2}** | >= 0.8 |\n",
        m.p3_shop_rps, m.p3_trivial_rps, m.p3_ratio
    ));
    md.push_str(&format!(
        "| P3 shop read with limits on | {:.0} req/s `GET /shops/{{id}}`, `limits.reads` on, {} client addresses | {:.0} req/s, the same load with limits off | **{:.2}** | >= 0.90 |\n",
        m.p3_limited_rps, super::P3_ADDRESSES, m.p3_unlimited_rps, m.p3_limited_ratio
    ));
    md.push_str(&format!(
        "| P3 voucher page (details an L1 hit, units left one Redis read) | {:.0} req/s `GET /vouchers/{{id}}` | {:.0} req/s `GET /healthz`, same wrk load | **{:.2}** | none: one Redis read a view, by design |\n",
        m.p3_voucher_rps, m.p3_trivial_rps, m.p3_voucher_ratio
    ));
    md.push_str(&format!(
        "| P4 worker insert rate | {:.0} rows/s | {:.0} rows/s raw multi-row INSERT | **{:.2}** | >= 0.5 |\n",
        m.p4_worker_rows_per_s, m.p4_raw_rows_per_s, m.p4_ratio
    ));
    md.push_str(&format!(
        "| P4b worker against an empty consumer | {:.0} rows/s | {:.0} messages/s an empty consumer drains (order-sized, same count) | **{:.2}** | none: shows the consumer's share of P4 |\n",
        m.p4_worker_rows_per_s, m.p2_stages.drain, m.p4b_ratio
    ));
    md.push_str(&format!(
        "| P4 with batches of {} | {:.0} rows/s, the worker consuming batches of {} | {:.0} rows/s raw multi-row INSERT | **{:.2}** | none: the larger consumer mode, same round |\n",
        o.settings["consume_batch_max"].as_u64().unwrap_or(0) * 4,
        m.p4_large_rows_per_s,
        o.settings["consume_batch_max"].as_u64().unwrap_or(0) * 4,
        m.p4_raw_rows_per_s,
        m.p4_large_ratio
    ));
    md.push_str(&format!(
        "| P5 API RSS | peak **{:.1} MB**; {:.1} MB before / {:.1} MB after a P1 stampede (heap {:.1} / {:.1} MB) | - | - | < 150 MB, flat |\n",
        o.p5_peak_rss_mb, m.p5_rss_start_mb, m.p5_rss_end_mb, m.p5_heap_start_mb, m.p5_heap_end_mb
    ));
    if let (Some(first), Some(last)) = (o.rounds.first(), o.rounds.last()) {
        md.push_str(&format!(
            "| P5 API RSS across rounds | {:.1} MB at the end of round {} ({:.0} threads); {:.1} MB after its P1 stampede | {:.1} MB at the end of round 1 ({:.0} threads); {:.1} MB after its stampede | **{:.2}**; {:.2} after the stampedes | <= 1.10 |\n",
            last.p5_rss_round_end_mb,
            o.rounds.len(),
            last.p5_threads_round_end,
            last.p5_rss_end_mb,
            first.p5_rss_round_end_mb,
            first.p5_threads_round_end,
            first.p5_rss_end_mb,
            last.p5_rss_round_end_mb / first.p5_rss_round_end_mb.max(1e-9),
            last.p5_rss_end_mb / first.p5_rss_end_mb.max(1e-9)
        ));
    }
    md.push_str(&format!(
        "| P6 recommendations, {} followings | computed: **{:.1} ms**; cached: {:.2} ms (median, one at a time) | {:.2} ms `GET /users/me`, same token | {:.1} / {:.2} | computed < 50 ms |\n\n",
        o.settings["p6_followings"], m.p6_recs_cold_ms, m.p6_recs_warm_ms, m.p6_reference_ms, m.p6_cold_ratio, m.p6_warm_ratio
    ));
    md.push_str(&format!(
        "Invariants (no oversell, one order per user, Redis == MySQL, all accepted stored) in every run: {}\n\n",
        if m.invariants_pass { "PASS" } else { "FAIL" }
    ));
    md.push_str(&format!(
        "P2's reference is what its stages allow in a row, 1 / sum of 1/rate, each measured alone in the same \
         round (medians): the seckill script accepting {:.0}/s (redis-benchmark EVALSHA), a batched send {:.0} \
         messages/s, an empty consumer draining {:.0} messages/s, a raw multi-row INSERT {:.0} rows/s.\n\n",
        m.p2_stages.evalsha, m.p2_stages.send, m.p2_stages.drain, m.p2_stages.insert
    ));
    let c = &m.consumer_modes;
    md.push_str(&format!(
        "Consumer modes, each an empty consumer of its own group draining the same number of order-sized \
         messages in the same round (medians, messages/s): push with batches of `consume_batch_max` (the \
         worker's mode) {:.0}; push with batches four times as large {:.0}; push on a topic with twice the \
         queues {:.0}; lite pull, polls four times as large with offsets committed after each {:.0}.\n\n",
        c.push, c.push_large, c.push_more_queues, c.lite_pull
    ));
    let split = |t: &TxSplit| {
        format!(
            "{:.0} rows each, {:.1} ms (begin {:.1}, insert {:.1}, stock {:.1}, commit {:.1})",
            t.rows,
            t.total_ms(),
            t.begin_ms,
            t.insert_ms,
            t.stock_ms,
            t.commit_ms
        )
    };
    md.push_str(&format!(
        "P4's transactions (the worker's `cityhub_order_store_step_seconds`, per transaction, medians): {};          with batches four times as large: {}. The raw reference writes 1,000 rows in {:.1} ms.\n\n",
        split(&m.p4_tx),
        split(&m.p4_large_tx),
        1000.0 * 1000.0 / m.p4_raw_rows_per_s.max(1e-9)
    ));
    let (rate, poll_ms) =
        (o.settings["relay_rate"].as_u64().unwrap_or(0), o.settings["outbox_poll_ms"].as_u64().unwrap_or(0));
    md.push_str(&format!(
        "## Outbox relays\n\nThe poll relay (`outbox.poll_ms` = {poll_ms}) and the binlog relay, one after the other in each \
         round on the MariaDB that writes a row binlog, each on a database of its own under a MySQL user of its own \
         whose statements the server counts (`userstat`); events committed in transactions of ten every 10 ms (medians):\n\n\
         | relay | commit to consumer p50 | p99 | relay's MySQL statements/s, idle | at {rate} events/s |\n|---|---|---|---|---|\n"
    ));
    for (name, r) in [("poll", &m.relays.poll), ("binlog", &m.relays.binlog)] {
        md.push_str(&format!(
            "| {name} | {:.1} ms | {:.1} ms | {:.1} | {:.1} |\n",
            r.p50_ms, r.p99_ms, r.idle_qps, r.busy_qps
        ));
    }
    md.push('\n');
    md.push_str("## Rounds\n\n| round | P1 req/s | EVALSHA/s | P1 ratio | P1 limited req/s | limited/P1 | P2 orders/s | P2 limit | P2 ratio | P2 drain s | P3 shop req/s | P3 trivial req/s | P3 ratio | P3 voucher req/s | P3 voucher ratio | P3 limited/unlimited | P4 worker rows/s | P4 raw rows/s | P4 ratio | P4b ratio | P4 large rows/s | P2 HTTP req/s | RSS MB start/end | heap MB start/end | RSS MB round end | P6 computed / cached / ref ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (i, r) in o.rounds.iter().enumerate() {
        md.push_str(&format!(
            "| {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.1}/{:.1} | {:.1}/{:.1} | {:.1} | {:.1} / {:.2} / {:.2} |\n",
            i + 1,
            r.p1_seckill_rps,
            r.p1_evalsha_rps,
            r.p1_ratio,
            r.p1_limited_rps,
            r.p1_limited_ratio,
            r.p2_orders_per_s,
            r.p2_limit,
            r.p2_ratio,
            r.p2_drain_s,
            r.p3_shop_rps,
            r.p3_trivial_rps,
            r.p3_ratio,
            r.p3_voucher_rps,
            r.p3_voucher_ratio,
            r.p3_limited_ratio,
            r.p4_worker_rows_per_s,
            r.p4_raw_rows_per_s,
            r.p4_ratio,
            r.p4b_ratio,
            r.p4_large_rows_per_s,
            r.p2_http_rps,
            r.p5_rss_start_mb,
            r.p5_rss_end_mb,
            r.p5_heap_start_mb,
            r.p5_heap_end_mb,
            r.p5_rss_round_end_mb,
            r.p6_recs_cold_ms,
            r.p6_recs_warm_ms,
            r.p6_reference_ms
        ));
    }
    // The cluster run's section (`--topology cluster`) and hand-written
    // notes (profiling, before/after) survive regeneration.
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if let Some(cluster) = super::cluster::section(&old) {
        md.push('\n');
        md.push_str(cluster.trim_end());
        md.push('\n');
    }
    if let Some(notes) = old.find(NOTES_HEADING).map(|i| &old[i..]) {
        md.push('\n');
        md.push_str(notes);
    }
    std::fs::write(path, md)?;
    Ok(())
}
