//! Contract fuzzing: schemathesis (from PyPI, installed by
//! `scripts/schemathesis` on first use) throws generated and malformed
//! requests at every documented operation of a running API and fails on any
//! 5xx, any undocumented status, any error body that is not the JSON error
//! shape and any response that does not match the document.

use std::time::Duration;

use cityhub_core::auth::Phone;

use crate::app::TestApp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_and_malformed_requests_never_break_the_contract() {
    let app = TestApp::spawn().await;
    app.on_sale(20).await;
    // A shopper's token on the shopper routes, the operator key on /admin/*.
    let auth = app.state.auth.clone();
    let phone = Phone::parse("13900009999").unwrap();
    let token = auth.issue(auth.register(&phone).await.unwrap()).await.unwrap().token;

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/schemathesis");
    let run = tokio::process::Command::new(script)
        .arg(&app.base)
        .arg(&token)
        .arg("25")
        .arg(app.admin_token())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(900), run).await.expect("schemathesis finished").unwrap();
    let report = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "schemathesis found contract violations:\n{report}");
    eprintln!("{report}");
    let generated: u64 = report
        .lines()
        .find_map(|l| l.trim().strip_suffix(" passed")?.split(" generated").next()?.trim().parse().ok())
        .unwrap_or(0);
    assert!(generated > 100, "schemathesis ran too few test cases:\n{report}");
    app.shutdown().await;
}
