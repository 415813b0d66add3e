//! A real browser for tests: Debian's headless Chromium driven by its
//! ChromeDriver over the W3C WebDriver protocol (JSON over HTTP, spoken
//! here with reqwest, so no WebDriver crate is needed). Each [`Browser`]
//! starts a ChromeDriver of its own, in a process group of its own, on a
//! free port, and one session. [`Browser::close`] ends the session (and its
//! Chromium) cleanly; dropping it kills the whole group, Chromium included,
//! so a failed test leaves no browser behind.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

/// The key under which WebDriver names an element.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// One browser session.
pub struct Browser {
    driver: Child,
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/session/<id>`.
    session: String,
}

/// An element of the page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Browser {
    /// Starts ChromeDriver and a headless Chromium session with a window of
    /// `width` × `height`.
    pub async fn start(width: u32, height: u32) -> anyhow::Result<Self> {
        for path in [CHROMIUM, CHROMEDRIVER] {
            anyhow::ensure!(
                std::path::Path::new(path).exists(),
                "{path} is missing: install Debian's chromium and chromium-driver (scripts/test does)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start chromedriver")?;
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Self { driver, http, session: String::new() };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = browser.http.get(format!("{base}/status")).send().await;
            if let Ok(r) = ready {
                if r.json::<Value>().await.is_ok_and(|v| v["value"]["ready"] == true) {
                    break;
                }
            }
            if Instant::now() > deadline {
                bail!("chromedriver did not become ready on port {port}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let args = [
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--disable-gpu".to_owned(),
            format!("--window-size={width},{height}"),
        ];
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        }}});
        let created = browser.call(reqwest::Method::POST, &format!("{base}/session"), Some(caps)).await?;
        let id = created["sessionId"].as_str().context("no session id")?;
        browser.session = format!("{base}/session/{id}");
        Ok(browser)
    }

    async fn call(&self, method: reqwest::Method, url: &str, body: Option<Value>) -> anyhow::Result<Value> {
        let mut req = self.http.request(method.clone(), url);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.with_context(|| format!("{method} {url}"))?;
        let status = res.status();
        let value: Value = res.json().await.with_context(|| format!("{method} {url}: not JSON"))?;
        if !status.is_success() {
            bail!("{method} {url}: {status}: {}", value["value"]);
        }
        Ok(value["value"].clone())
    }

    async fn session(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        self.call(method, &format!("{}{path}", self.session), body).await
    }

    /// Opens `url`.
    pub async fn goto(&self, url: &str) -> anyhow::Result<()> {
        self.session(reqwest::Method::POST, "/url", Some(json!({ "url": url }))).await.map(drop)
    }

    /// The first element matching the CSS `selector`.
    pub async fn find(&self, selector: &str) -> anyhow::Result<Element> {
        let found = self
            .session(reqwest::Method::POST, "/element", Some(json!({ "using": "css selector", "value": selector })))
            .await?;
        Ok(Element(found[ELEMENT].as_str().context("no element id")?.to_owned()))
    }

    /// Waits up to `within` for an element matching `selector`.
    pub async fn wait_for(&self, selector: &str, within: Duration) -> anyhow::Result<Element> {
        let deadline = Instant::now() + within;
        loop {
            match self.find(selector).await {
                Ok(element) => return Ok(element),
                Err(err) if Instant::now() > deadline => return Err(err.context(format!("waiting for {selector}"))),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// Types `text` into the element `selector` (after clearing it).
    pub async fn type_into(&self, selector: &str, text: &str) -> anyhow::Result<()> {
        let Element(id) = self.find(selector).await?;
        self.session(reqwest::Method::POST, &format!("/element/{id}/clear"), Some(json!({}))).await?;
        self.session(reqwest::Method::POST, &format!("/element/{id}/value"), Some(json!({ "text": text }))).await?;
        Ok(())
    }

    /// Clicks the element `selector`, as a user would.
    pub async fn click(&self, selector: &str) -> anyhow::Result<()> {
        let Element(id) = self.find(selector).await?;
        self.session(reqwest::Method::POST, &format!("/element/{id}/click"), Some(json!({}))).await.map(drop)
    }

    /// The visible text of the element `selector`.
    pub async fn text(&self, selector: &str) -> anyhow::Result<String> {
        let Element(id) = self.find(selector).await?;
        let text = self.session(reqwest::Method::GET, &format!("/element/{id}/text"), None).await?;
        Ok(text.as_str().unwrap_or_default().to_owned())
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page
    /// and answers what it returns.
    pub async fn script(&self, script: &str, args: Value) -> anyhow::Result<Value> {
        self.session(reqwest::Method::POST, "/execute/sync", Some(json!({ "script": script, "args": args }))).await
    }

    /// Polls the page's `script` until `done` holds for its answer, for up
    /// to `within`; answers the last value.
    pub async fn until(&self, script: &str, within: Duration, done: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
        let deadline = Instant::now() + within;
        loop {
            let value = self.script(script, json!([])).await?;
            if done(&value) || Instant::now() > deadline {
                return Ok(value);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> anyhow::Result<Vec<u8>> {
        let shot = self.session(reqwest::Method::GET, "/screenshot", None).await?;
        base64_decode(shot.as_str().context("no screenshot")?)
    }
}

impl Browser {
    /// Ends the session (Chromium quits), then the driver.
    pub async fn close(self) {
        if !self.session.is_empty() {
            let _ = self.session(reqwest::Method::DELETE, "", None).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The driver's whole group: Chromium and its helpers too.
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.driver.id())]).status();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (with padding), as WebDriver sends screenshots.
fn base64_decode(text: &str) -> anyhow::Result<Vec<u8>> {
    let value = |c: u8| -> anyhow::Result<u32> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => bail!("not base64: {:?}", c as char),
        } as u32)
    };
    let bytes: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= if c == b'=' { 0 } else { value(c)? } << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad.min(2)]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(super::base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(super::base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(super::base64_decode("aGV5").unwrap(), b"hey");
        assert!(super::base64_decode("a$==").is_err());
    }
}
