#!/usr/bin/env python3
"""Summarise a JMeter CSV results file (.jtl).

    python3 jmeter/summarize.py results.jtl [more.jtl ...] [--allow-failures]

Prints the sample count, successes, failures, counts by response code, the
most frequent failure messages, throughput (samples over the wall span from
the first sample's start to the last sample's end) and latency percentiles
(elapsed time, nearest rank: p50, p90, p99, max).

Exit status: 0 when every sample succeeded (or --allow-failures), 1 when any
sample failed, 2 when a file cannot be read or holds no sample.

Expects the CSV form written by jmeter/run.sh: a header line, timestamps in
epoch milliseconds at the start of each sample (sampleresult.timestamp.start).
A file without a header is read with JMeter's default column order.
Standard library only.
"""

import argparse
import collections
import csv
import math
import sys

# JMeter's default CSV column order (2.13 and 5.x agree on these first ones).
DEFAULT_COLUMNS = [
    "timeStamp", "elapsed", "label", "responseCode", "responseMessage",
    "threadName", "dataType", "success", "failureMessage",
]
REQUIRED = ("timeStamp", "elapsed", "responseCode", "success")


def read_samples(path):
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f))
    if not rows:
        return []
    first = rows[0]
    if first and first[0].strip().isdigit():
        header = DEFAULT_COLUMNS
        data = rows
    else:
        header = [h.strip() for h in first]
        data = rows[1:]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ValueError("%s: missing column(s) %s in header %s" % (path, ", ".join(missing), header))
    idx = {name: i for i, name in enumerate(header)}
    samples = []
    for lineno, row in enumerate(data, start=2 if data is not rows else 1):
        if not row or all(not c.strip() for c in row):
            continue

        def col(name, default=""):
            i = idx.get(name)
            return row[i] if i is not None and i < len(row) else default

        try:
            ts = int(col("timeStamp"))
            elapsed = int(col("elapsed"))
        except ValueError:
            raise ValueError("%s:%d: bad timeStamp/elapsed in %r" % (path, lineno, row))
        samples.append({
            "ts": ts,
            "elapsed": elapsed,
            "label": col("label"),
            "code": col("responseCode"),
            "message": col("responseMessage"),
            "success": col("success").strip().lower() == "true",
            "failure": col("failureMessage"),
        })
    return samples


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        return 0
    rank = max(1, int(math.ceil(p / 100.0 * len(sorted_values))))
    return sorted_values[rank - 1]


def summarize(samples, out=sys.stdout):
    count = len(samples)
    ok = sum(1 for s in samples if s["success"])
    failed = count - ok
    by_code = collections.Counter(s["code"] for s in samples)
    failed_by_code = collections.Counter(s["code"] for s in samples if not s["success"])
    reasons = collections.Counter(
        (s["code"], s["failure"] or s["message"]) for s in samples if not s["success"])
    start = min(s["ts"] for s in samples)
    end = max(s["ts"] + s["elapsed"] for s in samples)
    span_ms = max(end - start, 1)
    lat = sorted(s["elapsed"] for s in samples)

    def code_key(c):
        return (0, int(c)) if c.isdigit() else (1, c)

    print("samples:   %d" % count, file=out)
    print("successes: %d" % ok, file=out)
    print("failures:  %d" % failed, file=out)
    print("by response code:", file=out)
    for code in sorted(by_code, key=code_key):
        extra = " (%d failed)" % failed_by_code[code] if failed_by_code[code] else ""
        print("  %-6s %d%s" % (code, by_code[code], extra), file=out)
    if reasons:
        print("failure reasons (top 5):", file=out)
        for (code, why), n in reasons.most_common(5):
            why = " ".join(why.split())
            if len(why) > 160:
                why = why[:157] + "..."
            print("  %d x %s: %s" % (n, code, why), file=out)
    print("wall span: %.3f s" % (span_ms / 1000.0), file=out)
    print("throughput: %.1f req/s" % (count * 1000.0 / span_ms), file=out)
    print("latency ms: p50=%d p90=%d p99=%d max=%d (min=%d mean=%.1f)" % (
        percentile(lat, 50), percentile(lat, 90), percentile(lat, 99), lat[-1],
        lat[0], sum(lat) / float(count)), file=out)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description="Summarise JMeter CSV .jtl results.")
    parser.add_argument("jtl", nargs="+", help="CSV .jtl file(s) written by jmeter/run.sh")
    parser.add_argument("--allow-failures", action="store_true",
                        help="exit 0 even when some samples failed")
    args = parser.parse_args(argv)

    samples = []
    for path in args.jtl:
        try:
            samples.extend(read_samples(path))
        except (OSError, ValueError) as e:
            print("summarize.py: %s" % e, file=sys.stderr)
            return 2
    if not samples:
        print("summarize.py: no samples in %s" % ", ".join(args.jtl), file=sys.stderr)
        return 2
    failed = summarize(samples)
    if failed and not args.allow_failures:
        print("summarize.py: %d sample(s) failed" % failed, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(1)
