//! The streamed HR chat (`examples::chat`) in a real browser: Debian's Chromium driven over
//! WebDriver (Debian's chromedriver, installed on first use). The page shows the answer while
//! the model is still writing it (a screenshot mid-answer, the end not yet reached), then the
//! whole answer, written from the tool's real result.

use std::sync::Arc;
use std::time::{Duration, Instant};

use examples::chat::{Chat, ScriptedModel, router};
use examples::hr::{Peran, Session, domain::Db};
use fantoccini::{Client, ClientBuilder};
use serde_json::{Value, json};

/// Chromium, headless, under chromedriver on a free port; the driver dies with the guard.
struct Browser {
    client: Client,
    driver: std::process::Child,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

async fn browser() -> Browser {
    let chromium = crate::common::provision("chromium");
    let chromedriver = crate::common::provision("chromedriver");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let driver = std::process::Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let profile = std::env::temp_dir().join(format!("chat-chromium-{}", std::process::id()));
    let caps = json!({"goog:chromeOptions": {"binary": chromium, "args": [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1000,700", format!("--user-data-dir={}", profile.display())]}});
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let started = Instant::now();
    loop {
        match ClientBuilder::new(connector.clone())
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return Browser { client, driver },
            Err(e) if started.elapsed() < Duration::from_secs(20) => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("no WebDriver session: {e}"),
        }
    }
}

/// Evaluates `script` in the page until `done` holds for its value (at most 20 s).
async fn until(client: &Client, script: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let value = client.execute(script, vec![]).await.unwrap();
        if done(&value) {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "`{script}` stayed {value}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const STATE: &str = "return {answer: document.getElementById('jawaban').textContent, \
    done: document.body.classList.contains('selesai'), \
    calls: [...document.querySelectorAll('#panggilan li')].map(li => li.textContent + ' ' + li.className)};";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_shows_the_answer_while_it_is_written() {
    // The model stops after four words of its answer until the test has looked.
    let (model, release) = ScriptedModel::held(Duration::from_millis(20), 4);
    let db = Arc::new(Db::in_memory().unwrap());
    let chat = Chat::new(db, Session::new("K-001", Peran::Karyawan), model);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router(chat)).await });

    let browser = browser().await;
    let client = &browser.client;
    client
        .goto(&format!(
            "http://{addr}/?pesan=Berapa%20sisa%20cuti%20saya%3F"
        ))
        .await
        .unwrap();
    // Mid-answer: the tool ran, four words of the answer are on the page, the turn is not over.
    let mid = until(client, STATE, |s| {
        s["answer"]
            .as_str()
            .unwrap_or_default()
            .ends_with("Halo Sari, sisa cuti ")
    })
    .await;
    assert_eq!(mid["done"], false, "{mid}");
    assert_eq!(
        mid["calls"],
        json!(["memanggil cek-sisa-cuti selesai"]),
        "{mid}"
    );
    assert_eq!(mid["answer"], "Baik, saya cek dulu.\nHalo Sari, sisa cuti ");
    let shot = client.screenshot().await.unwrap();
    assert!(
        shot.starts_with(b"\x89PNG") && shot.len() > 5_000,
        "{} bytes",
        shot.len()
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(dir.join("chat-mid-answer.png"), &shot).unwrap();

    // Released: the rest streams in, written from the tool's result (Sari: 7 days left, 5 used).
    release.send(true).unwrap();
    let end = until(client, STATE, |s| s["done"] == true).await;
    assert_eq!(
        end["answer"],
        "Baik, saya cek dulu.\nHalo Sari, sisa cuti tahunan Anda 7 hari; yang sudah terpakai 5 hari."
    );
    let shot = client.screenshot().await.unwrap();
    std::fs::write(dir.join("chat-answered.png"), &shot).unwrap();
    browser.client.clone().close().await.unwrap();
}
