//! The approvals page in a real headless Chromium, driven over WebDriver (fantoccini →
//! Debian's chromedriver): sign in, see a request whose arguments hold a `<script>` as text,
//! approve it, and find the row approved under the token's name. Screenshots go to
//! `$CARGO_TARGET_TMPDIR/approvals.png` (the list) and `approvals-decided.png` (after).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Map, Value, json};
use tollgate_approval::Status;

use crate::{OPS, Server};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";
const ARGUMENT: &str = "<script>window.pwned = 1; alert(1)</script>";

/// A chromedriver on a free port; killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start(log: &Path) -> Self {
        for (binary, package) in [(CHROMEDRIVER, "chromium-driver"), (CHROMIUM, "chromium")] {
            assert!(
                Path::new(binary).exists(),
                "{binary} is missing: this test drives a real browser; install it with \
                 `apt-get install -y chromium chromium-driver` (package `{package}`)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// Waits until chromedriver answers `/status`.
    async fn ready(&mut self) {
        let start = Instant::now();
        loop {
            if let Ok(r) = reqwest::get(format!("{}/status", self.url)).await
                && r.status().is_success()
            {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("chromedriver exited ({status})");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "chromedriver never answered"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn browser(driver: &Driver, profile: &Path) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
    ]
    .map(str::to_owned)
    .into_iter()
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect::<Vec<_>>();
    let capabilities: Map<String, Value> = serde_json::from_value(json!({
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
    }))
    .unwrap();
    ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .unwrap()
}

fn artifact(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_signs_in_sees_a_script_as_text_and_approves() {
    let dir = tempfile::tempdir().unwrap();
    let mut driver = Driver::start(&dir.path().join("chromedriver.log"));
    let server = Server::start(None).await;
    let id = server.file(json!({"sql": ARGUMENT}), &["ops-lead"]).await;
    driver.ready().await;
    let client = browser(&driver, &dir.path().join("profile")).await;
    // Run the steps in a task so that the browser is closed even when an assertion fails.
    let steps = tokio::spawn(sign_in_and_approve(
        client.clone(),
        server.url.clone(),
        id.clone(),
    ));
    let outcome = steps.await;
    let _ = client.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
    let request = server.store.get(&id).await.unwrap().unwrap();
    assert_eq!(request.status, Status::Approved);
    assert_eq!(request.responded_by.as_deref(), Some("ops-lead"));
    assert_eq!(request.channel.as_deref(), Some("web"));
    assert_eq!(request.response_note.as_deref(), Some("looks right"));
}

async fn sign_in_and_approve(client: Client, url: String, id: String) {
    client.goto(&format!("{url}/approvals")).await.unwrap();
    assert_eq!(
        client.current_url().await.unwrap().path(),
        "/approvals/login"
    );
    client
        .find(Locator::Css("#token"))
        .await
        .unwrap()
        .send_keys(OPS)
        .await
        .unwrap();
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let card = Locator::Css("article.request");
    let wait = client.wait().at_most(Duration::from_secs(30));
    let Ok(card) = wait.for_element(card).await else {
        let url = client.current_url().await.unwrap();
        panic!("no request on {url}: {}", client.source().await.unwrap());
    };
    assert_eq!(client.current_url().await.unwrap().path(), "/approvals");
    assert!(card.text().await.unwrap().contains(&id));

    let arguments = card.find(Locator::Css("pre.arguments")).await.unwrap();
    assert!(
        arguments.text().await.unwrap().contains(ARGUMENT),
        "shown as text"
    );
    let scripts = client
        .execute("return document.scripts.length", vec![])
        .await
        .unwrap();
    assert_eq!(scripts, json!(0), "no script element on the page");
    let pwned = client
        .execute("return window.pwned === undefined", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, json!(true), "the argument's script never ran");
    assert!(client.get_alert_text().await.is_err(), "no alert is open");
    let png = client.screenshot().await.unwrap();
    std::fs::write(artifact("approvals.png"), png).unwrap();

    card.find(Locator::Css("textarea[name=note]"))
        .await
        .unwrap()
        .send_keys("looks right")
        .await
        .unwrap();
    card.find(Locator::Css("button.approve"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let flash = client
        .wait()
        .for_element(Locator::Css("#flash"))
        .await
        .unwrap();
    assert_eq!(flash.text().await.unwrap(), format!("{id} approved."));
    let png = client.screenshot().await.unwrap();
    std::fs::write(artifact("approvals-decided.png"), png).unwrap();
}
