//! `cityhub order close <id>` and `cityhub reconcile <voucher>`: an
//! operator's actions, sent to the running API's admin routes as the CLI's
//! operator account, so they take the same path, checks and logs as the
//! console's buttons. The API's answer is printed as JSON; an error answer
//! is an error of the command (non-zero exit) with the API's code and message.

use anyhow::Context;
use cityhub_core::config::Settings;
use serde_json::Value;

/// The running API and an admin token for it.
pub struct Api {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Api {
    /// The API at `base`, as the CLI's operator account.
    pub async fn connect(settings: &Settings, base: &str) -> anyhow::Result<Self> {
        let token = crate::admin::operator_token(settings, "operator").await?;
        Ok(Self { base: base.trim_end_matches('/').to_owned(), token, http: reqwest::Client::new() })
    }

    /// `POST <path>`: the status and the JSON answer, whatever the status.
    pub async fn post_raw(&self, path: &str) -> anyhow::Result<(reqwest::StatusCode, Value)> {
        let url = format!("{}{path}", self.base);
        let res = self.http.post(&url).bearer_auth(&self.token).send().await.with_context(|| format!("POST {url}"))?;
        let status = res.status();
        let body: Value =
            res.json().await.with_context(|| format!("the answer of POST {url} ({status}) is not JSON"))?;
        Ok((status, body))
    }

    /// `POST <path>`: the JSON answer; an error answer is an error.
    pub async fn post(&self, path: &str) -> anyhow::Result<Value> {
        let (status, body) = self.post_raw(path).await?;
        anyhow::ensure!(
            status.is_success(),
            "{status}: {} ({})",
            body["message"].as_str().unwrap_or("no message"),
            body["code"].as_str().unwrap_or("no code")
        );
        Ok(body)
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum OrderAction {
    /// Close an order: unpaid → closed, paid → refunded then closed; its
    /// unit goes back on sale once. Closing it again changes nothing.
    Close {
        /// The order id.
        #[arg(value_parser = crate::positive::<u64>())]
        id: u64,
        /// The running API's base URL.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        api: String,
    },
}

/// Runs an order action; prints the API's answer.
pub async fn order(settings: &Settings, action: OrderAction) -> anyhow::Result<()> {
    let OrderAction::Close { id, api } = action;
    let answer = Api::connect(settings, &api).await?.post(&format!("/admin/orders/{id}/close")).await?;
    println!("{answer}");
    Ok(())
}

/// Reconciles seckill voucher `voucher` now (only reports with `dry_run`);
/// prints the report. A report whose verdict is `drift` is an error: an
/// operator must look.
pub async fn reconcile(settings: &Settings, api: &str, voucher: u64, dry_run: bool) -> anyhow::Result<()> {
    let query = if dry_run { "?dry_run=true" } else { "" };
    let report = Api::connect(settings, api).await?.post(&format!("/admin/reconcile/{voucher}{query}")).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    anyhow::ensure!(report["verdict"] != "drift", "voucher {voucher}: differences remain that need an operator");
    Ok(())
}
