//! A running `lore ui` for the web UI's end-to-end tests, and visiting its pages: each visit
//! waits for the page, saves its screenshot into target/webui-screenshots/ and fails on any
//! browser console error.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use lore_testutils::TestRepo;

use super::common::lore_command;
use super::webdriver::Browser;

/// A running `lore ui`; killed when dropped.
pub struct UiServer {
    child: Child,
    pub addr: SocketAddr,
    pub token: String,
}

impl UiServer {
    pub fn start(repo: &TestRepo) -> UiServer {
        let mut child = lore_command(
            &repo.path(),
            &repo.home(),
            &["ui", "--addr", "127.0.0.1:0", "--no-open"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting lore ui");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("reading the address");
        let url = line
            .trim()
            .strip_prefix("lore ui: ")
            .unwrap_or_else(|| panic!("lore ui printed {line:?}"))
            .to_string();
        let rest = url.strip_prefix("http://").expect("an http address");
        let (host, query) = rest.split_once("/?token=").expect("a token in the address");
        UiServer {
            child,
            addr: host.parse().expect("host:port"),
            token: query.to_string(),
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn login_url(&self) -> String {
        format!("{}/?token={}", self.base(), self.token)
    }
}

impl Drop for UiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/webui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Visits a page, checks it for console errors and saves its screenshot.
pub fn visit(browser: &Browser, url: &str, name: &str) {
    browser.goto(url);
    browser.wait_for("the page", Duration::from_secs(10), |b| {
        b.execute("return document.readyState === 'complete' && !!document.getElementById('main');")
            == serde_json::Value::Bool(true)
    });
    browser.screenshot(&screenshots().join(format!("{name}.png")));
    browser.assert_no_console_errors(name);
}

/// Starts `lore ui` on `repo` and a browser, and logs in through the printed address (its
/// screenshot saved as `name`).
pub fn open(repo: &TestRepo, name: &str) -> (UiServer, Browser) {
    let server = UiServer::start(repo);
    let browser = Browser::start();
    visit(&browser, &server.login_url(), name);
    (server, browser)
}
