//! The simulated payment provider, run inside the project: it takes a
//! charge, waits its configured delay, succeeds or fails at its configured
//! rate, and reports the result to the callback URL with a signed body,
//! retrying until the receiver answers 2xx (as real providers do). Refunds
//! are synchronous and idempotent per transaction id (the same id twice is
//! one refund, with one refund id); a flaky provider is simulated by
//! refusing the first `payments.provider_refund_failures` refund calls of
//! each transaction. Callbacks not yet delivered die with the process, as a
//! provider outage would: the order stays unpaid and closes at its timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cityhub_platform::retry::Backoff;
use serde::{Deserialize, Serialize};

use super::signature;
use crate::config::PaymentSettings;
use crate::ids::OrderId;

/// What the provider reports for a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChargeResult {
    Succeeded,
    Failed,
}

/// The callback body (signed as sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callback {
    /// The provider's transaction id, unique per charge.
    pub txn_id: String,
    pub order_id: OrderId,
    /// Cents.
    pub amount: u64,
    pub result: ChargeResult,
    /// When the provider signed it, seconds since the epoch; a callback
    /// older than `payments.callback_max_age_secs` is refused.
    pub ts: i64,
}

/// The provider refused a refund for now; it is asked again later.
#[derive(Debug, thiserror::Error)]
#[error("the payment provider refused to refund {0} for now")]
pub struct RefundRefused(pub String);

/// Deliveries of one callback before the provider gives up.
const CALLBACK_ATTEMPTS: u32 = 8;

/// The simulated provider; share it behind an `Arc`.
pub struct Provider {
    http: reqwest::Client,
    secret: Vec<u8>,
    target: OnceLock<String>,
    delay: Duration,
    failure_rate: f64,
    refund_failures: u32,
    /// Refund calls refused so far, per transaction.
    refused: Mutex<HashMap<String, u32>>,
}

impl Provider {
    pub fn new(settings: &PaymentSettings) -> Arc<Self> {
        let target = OnceLock::new();
        if !settings.callback_url.is_empty() {
            let _ = target.set(settings.callback_url.clone());
        }
        Arc::new(Self {
            http: reqwest::Client::builder().timeout(Duration::from_secs(5)).build().expect("http client"),
            secret: settings.callback_secret.expose().as_bytes().to_vec(),
            target,
            delay: settings.provider_delay_ms,
            failure_rate: settings.provider_failure_rate,
            refund_failures: settings.provider_refund_failures,
            refused: Mutex::new(HashMap::new()),
        })
    }

    /// Sends callbacks to `url` unless a callback URL was configured.
    pub fn default_target(&self, url: String) {
        let _ = self.target.set(url);
    }

    /// A fresh transaction id for a charge of `order_id`.
    pub fn new_txn_id(order_id: OrderId) -> String {
        format!("sim-{:016x}{:08x}", rand::random::<u64>(), order_id.get() as u32)
    }

    /// Starts charging `amount` for `order_id` under `txn_id`; reports the
    /// result through the signed callback later.
    pub fn charge(self: &Arc<Self>, txn_id: &str, order_id: OrderId, amount: u64) {
        let result =
            if rand::random::<f64>() < self.failure_rate { ChargeResult::Failed } else { ChargeResult::Succeeded };
        let callback = Callback { txn_id: txn_id.to_owned(), order_id, amount, result, ts: 0 };
        let this = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(this.delay).await;
            this.deliver(&callback).await;
        });
    }

    async fn deliver(&self, callback: &Callback) {
        let Some(url) = self.target.get() else {
            tracing::error!(txn_id = %callback.txn_id, "no callback URL; the payment result is lost");
            return;
        };
        let signed = Callback { ts: chrono::Utc::now().timestamp(), ..callback.clone() };
        let body = serde_json::to_vec(&signed).expect("callback serializes");
        let sig = signature::sign(&self.secret, &body);
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        for attempt in 1..=CALLBACK_ATTEMPTS {
            let sent = self
                .http
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(signature::HEADER, &sig)
                .body(body.clone())
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => return,
                Ok(r) => tracing::warn!(txn_id = %callback.txn_id, attempt, status = %r.status(), "callback refused"),
                Err(err) => tracing::warn!(txn_id = %callback.txn_id, attempt, error = %err, "callback not delivered"),
            }
            backoff.sleep().await;
        }
        tracing::error!(txn_id = %callback.txn_id, "callback given up");
    }

    /// Refunds transaction `txn_id` in full and answers the refund id; the
    /// same id twice is one refund, with the same refund id.
    pub async fn refund(&self, txn_id: &str) -> Result<String, RefundRefused> {
        tokio::time::sleep(self.delay).await;
        if self.refund_failures > 0 {
            let mut refused = self.refused.lock().expect("refund ledger");
            let n = refused.entry(txn_id.to_owned()).or_default();
            if *n < self.refund_failures {
                *n += 1;
                return Err(RefundRefused(txn_id.to_owned()));
            }
        }
        Ok(format!("refund-{txn_id}"))
    }
}
