//! The operator's side against the real binaries: the alert rules under
//! promtool, the dashboard's and the rules' metrics scraped from both
//! binaries after a sale, `cityhub order close` and `cityhub reconcile`
//! through the running API, and `--help` / `--version` on every binary.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cityhub_platform::metrics::sample;

use crate::E2e;

fn ops_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ops")
}

fn promtool(args: &[&str]) -> std::process::Output {
    Command::new("promtool")
        .args(args)
        .current_dir(ops_dir().join("prometheus"))
        .output()
        .expect("promtool runs (Debian's prometheus package; scripts/test installs it)")
}

#[test]
fn the_alert_rules_pass_promtool_check_and_their_unit_tests() {
    for args in [&["check", "rules", "alerts.yml"][..], &["test", "rules", "alerts.test.yml"]] {
        let out = promtool(args);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "promtool {args:?}:\n{text}");
        assert!(text.contains("SUCCESS"), "promtool {args:?}:\n{text}");
    }
}

/// Every `cityhub_*` metric named in `text` (a PromQL expression).
fn metric_names(text: &str, into: &mut BTreeSet<String>) {
    let mut rest = text;
    while let Some(at) = rest.find("cityhub_") {
        let name: String =
            rest[at..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect();
        rest = &rest[at + name.len()..];
        into.insert(name);
    }
}

/// What an expression asks of the series it reads.
struct Asked {
    /// Each `name{label="value"}` matcher as (name, `label="value"`).
    matchers: Vec<(String, String)>,
    /// Each `by (labels)` grouping as (the names in the expression, label).
    groupings: Vec<(BTreeSet<String>, String)>,
}

fn asked_labels(expr: &str) -> Asked {
    let mut names = BTreeSet::new();
    metric_names(expr, &mut names);
    let mut matchers = Vec::new();
    for name in &names {
        for part in expr.split(&format!("{name}{{")).skip(1) {
            let inside = part.split('}').next().unwrap();
            for matcher in inside.split(',').map(str::trim).filter(|m| m.contains("=\"") && !m.contains("=~")) {
                matchers.push((name.clone(), matcher.to_owned()));
            }
        }
    }
    let mut groupings = Vec::new();
    for part in expr.split("by (").skip(1) {
        // `instance` and `job` are the scrape's own labels, not the binaries'.
        let labels = part.split(')').next().unwrap().split(',').map(str::trim);
        for label in labels.filter(|l| !l.is_empty() && !["instance", "job"].contains(l)) {
            groupings.push((names.clone(), label.to_owned()));
        }
    }
    Asked { matchers, groupings }
}

/// The queries of the dashboard and the expressions of the alert rules.
fn expressions() -> Vec<String> {
    let dashboard: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ops_dir().join("grafana/cityhub.json")).unwrap()).unwrap();
    let rules: serde_json::Value =
        serde_yaml::from_slice(&std::fs::read(ops_dir().join("prometheus/alerts.yml")).unwrap()).unwrap();
    let panels = dashboard["panels"].as_array().unwrap().iter().flat_map(|p| p["targets"].as_array().unwrap());
    let rules = rules["groups"][0]["rules"].as_array().unwrap().iter();
    panels
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .chain(rules.map(|r| r["expr"].as_str().unwrap().to_owned()))
        .collect()
}

/// The queries of the dashboard and the expressions of the alert rules.
fn named_metrics() -> (BTreeSet<String>, BTreeSet<String>) {
    let dashboard: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ops_dir().join("grafana/cityhub.json")).unwrap()).unwrap();
    let mut panels = BTreeSet::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "panel {} has no query", panel["title"]);
        for target in targets {
            metric_names(target["expr"].as_str().unwrap(), &mut panels);
        }
    }
    let rules: serde_json::Value =
        serde_yaml::from_slice(&std::fs::read(ops_dir().join("prometheus/alerts.yml")).unwrap()).unwrap();
    let mut alerts = BTreeSet::new();
    for rule in rules["groups"][0]["rules"].as_array().unwrap() {
        metric_names(rule["expr"].as_str().unwrap(), &mut alerts);
    }
    (panels, alerts)
}

/// The series names a `/metrics` answer holds.
fn exported(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap().to_owned())
        .collect()
}

async fn scrape(addr: &str) -> String {
    reqwest::get(format!("http://{addr}/metrics")).await.unwrap().text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_and_alerts_name_only_metrics_the_binaries_export_and_operators_act_through_the_cli() {
    let e2e = E2e::start().await;
    let report = e2e.dir.join("sale.json");
    let out = e2e
        .cli()
        .args(["flash-sale", "--api", &e2e.platform.base(), "--users", "40", "--requests", "80"])
        .args(["--concurrency", "10", "--stock", "10", "--quiet", "--json"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "flash-sale failed: {}", String::from_utf8_lossy(&out.stderr));
    let voucher = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&report).unwrap()).unwrap()["voucher_id"]
        .as_u64()
        .unwrap();

    // Both binaries, once the gauges sampled every few seconds have a value.
    let settings = &e2e.platform.settings;
    let (panels, alerts) = named_metrics();
    let deadline = Instant::now() + Duration::from_secs(60);
    let missing = loop {
        let mut names = exported(&scrape(&settings.http.metrics_addr).await);
        names.extend(exported(&scrape(&settings.worker.metrics_addr).await));
        let missing: Vec<&String> = panels.iter().chain(&alerts).filter(|m| !names.contains(*m)).collect();
        if missing.is_empty() || Instant::now() > deadline {
            break missing.into_iter().cloned().collect::<Vec<_>>();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(missing.is_empty(), "named but not exported by the API or the worker: {missing:?}");
    assert!(panels.len() >= 15 && alerts.len() >= 8, "{panels:?} {alerts:?}");
    // ... and the labels they match on and group by are on those series
    // (a wrong label gives an empty panel and an alert that never fires).
    let text = format!("{}{}", scrape(&settings.http.metrics_addr).await, scrape(&settings.worker.metrics_addr).await);
    let series: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let has =
        |name: &str, label: &str| series.iter().any(|l| l.split(['{', ' ']).next() == Some(name) && l.contains(label));
    for expr in expressions() {
        let Asked { matchers, groupings } = asked_labels(&expr);
        for (name, matcher) in matchers {
            assert!(has(&name, &matcher), "no series {name}{{{matcher}}} for {expr:?}");
        }
        for (names, label) in groupings {
            let needle = format!("{label}=\"");
            assert!(names.iter().any(|n| has(n, &needle)), "no series of {names:?} carries {label} for {expr:?}");
        }
    }

    // Both binaries allocate through jemalloc: its heap holds what they use
    // (a process on another allocator would show next to nothing).
    for addr in [&settings.http.metrics_addr, &settings.worker.metrics_addr] {
        let text = scrape(addr).await;
        let heap = |state: &str| sample(&text, "cityhub_heap_bytes", &[&format!(r#"state="{state}""#)]).unwrap_or(0.0);
        assert!(heap("allocated") > 1e6 && heap("resident") >= heap("allocated"), "{addr}: {}", heap("allocated"));
    }

    // `cityhub order close`: the API closes it (and answers the same again);
    // an unknown order is an error with the API's code.
    let db = e2e.env.db().await;
    let order: u64 = sqlx::query_scalar("SELECT id FROM orders WHERE voucher_id = ? AND status = 'unpaid' LIMIT 1")
        .bind(voucher)
        .fetch_one(&db)
        .await
        .unwrap();
    for _ in 0..2 {
        let out =
            e2e.cli().args(["order", "close", &order.to_string(), "--api", &e2e.platform.base()]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("\"closed\""), "{stdout}");
    }
    let status: String =
        sqlx::query_scalar("SELECT status FROM orders WHERE id = ?").bind(order).fetch_one(&db).await.unwrap();
    assert_eq!(status, "closed");
    let out = e2e.cli().args(["order", "close", "1", "--api", &e2e.platform.base()]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("order_not_found"), "{out:?}");

    // A shopper who signed up with the phone the CLI's own calls once used
    // as their account stays a shopper: the CLI acts with a key of its own.
    let services = cityhub_core::Services::on(settings, db.clone(), e2e.env.kv().await);
    let phone = cityhub_core::auth::Phone::parse("19999999999").unwrap();
    let shopper = services.auth.issue(services.auth.register(&phone).await.unwrap()).await.unwrap().token;

    // `cityhub reconcile`: the report, and an error for an unknown voucher.
    let out = e2e.cli().args(["reconcile", &voucher.to_string(), "--api", &e2e.platform.base()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("\"verdict\""), "{stdout}");
    let r = reqwest::Client::new().get(format!("{}/admin/sales", e2e.platform.base())).bearer_auth(&shopper);
    assert_eq!(r.send().await.unwrap().status(), 403, "a phone's account became an admin");
    let out = e2e.cli().args(["reconcile", "999999999", "--api", &e2e.platform.base()]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("voucher_not_found"), "{out:?}");
    e2e.stop().await;
}

/// Runs `bin args` to its end, for at most 20 s: a binary that started a
/// server instead would not end.
fn run_briefly(bin: &PathBuf, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(bin)
        .args(args)
        // Settings that could not start anything: the binaries must not read them.
        .env("CITYHUB__DATABASE__URL", "mysql://nobody@127.0.0.1:1/none")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{} {args:?} did not exit: it started instead of answering", bin.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn every_binary_answers_help_and_version_without_starting_and_refuses_unknown_arguments() {
    let dir = cityhub_cli::platform::bin_dir();
    for name in ["cityhub", "cityhub-api", "cityhub-order-worker"] {
        let bin = dir.join(name);
        let version = run_briefly(&bin, &["--version"]);
        assert!(version.status.success());
        let text = String::from_utf8_lossy(&version.stdout);
        assert_eq!(text.trim(), format!("{name} {}", env!("CARGO_PKG_VERSION")));
        let help = run_briefly(&bin, &["--help"]);
        assert!(help.status.success());
        assert!(String::from_utf8_lossy(&help.stdout).contains("Usage:"), "{help:?}");
        let bad = run_briefly(&bin, &["--no-such-flag"]);
        assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    }
    // An argument the parser refuses is an error, not a panic.
    let zero = run_briefly(&dir.join("cityhub"), &["flash-sale", "--users", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{zero:?}");
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--users"), "{zero:?}");
}
