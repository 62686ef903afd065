//! A small WebDriver client for the web UI's end-to-end tests: Debian's chromedriver driving
//! headless Chromium, spoken to as JSON over plain HTTP/1.1 on loopback (no client library).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One HTTP response: status, headers (lower-cased names), body.
pub struct HttpResponse {
    pub status: u16,
    pub body: String,
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&body[..end])
                .split(';')
                .next()
                .unwrap_or("0")
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&body[start..(start + size).min(body.len())]);
        body = &body[(start + size + 2).min(body.len())..];
    }
    out
}

/// Sends one HTTP/1.1 request to `addr` (with `Connection: close`) and reads the answer.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    let mut stream =
        TcpStream::connect(addr).unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    // Read until the header ends, then exactly the body it announces (a server may keep the
    // connection open whatever the request said).
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = read_some(&mut stream, &mut buf);
        assert!(
            n > 0,
            "the connection closed before the header: {:?}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut content = raw[split + 4..].to_vec();
    let length: Option<usize> = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok());
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    loop {
        let complete = match length {
            Some(n) => content.len() >= n,
            None if chunked => content.windows(5).any(|w| w == b"0\r\n\r\n"),
            None => false,
        };
        if complete {
            break;
        }
        let n = read_some(&mut stream, &mut buf);
        if n == 0 {
            break;
        }
        content.extend_from_slice(&buf[..n]);
    }
    if chunked {
        content = dechunk(&content);
    }
    HttpResponse {
        status,
        body: String::from_utf8_lossy(&content).to_string(),
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A headless Chromium session through chromedriver; both end when it drops.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    /// chromedriver's and Chromium's `TMPDIR`: the profile and scoped directories Chromium
    /// leaves behind go with it.
    _temp: tempfile::TempDir,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn find_program(names: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate.display().to_string());
            }
        }
    }
    None
}

impl Browser {
    /// Starts chromedriver and a headless Chromium. Fails (never skips) when either is missing.
    pub fn start() -> Browser {
        let driver_bin = find_program(&["chromedriver"]).expect(
            "chromedriver is not installed: run scripts/setup.sh (Debian: chromium-driver)",
        );
        let chromium = find_program(&["chromium", "chromium-browser"])
            .expect("chromium is not installed: run scripts/setup.sh (Debian: chromium)");
        let port = free_port();
        let temp = tempfile::tempdir().expect("a temporary directory for Chromium");
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .env("TMPDIR", temp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let started = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1000",
                         "--no-first-run", "--disable-extensions"]
            }
        }}});
        let mut browser = Browser {
            driver,
            addr,
            session: String::new(),
            _temp: temp,
        };
        let created = browser.call("POST", "/session", Some(capabilities));
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        browser
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let response = http(
            self.addr,
            method,
            path,
            &[("Content-Type", "application/json; charset=utf-8")],
            body.as_bytes(),
        );
        let value: Value = serde_json::from_str(&response.body).unwrap_or_else(|e| {
            panic!(
                "WebDriver answered {}: {e}: {}",
                response.status, response.body
            )
        });
        if response.status >= 400 {
            panic!("WebDriver {method} {path}: {}", value["value"]);
        }
        value.get("value").cloned().unwrap_or(Value::Null)
    }

    fn session_call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let full = format!("/session/{}{path}", self.session);
        self.call(method, &full, body)
    }

    /// Navigates and waits for the page to load.
    pub fn goto(&self, url: &str) {
        self.session_call("POST", "/url", Some(json!({ "url": url })));
    }

    /// The current URL.
    pub fn url(&self) -> String {
        self.session_call("GET", "/url", None)
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Runs a script in the page and returns its value.
    pub fn execute(&self, script: &str) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
    }

    /// The first element matching a CSS selector.
    pub fn find(&self, css: &str) -> String {
        let v = self.session_call(
            "POST",
            "/element",
            Some(json!({ "using": "css selector", "value": css })),
        );
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    /// How many elements match a CSS selector.
    pub fn count(&self, css: &str) -> usize {
        self.session_call(
            "POST",
            "/elements",
            Some(json!({ "using": "css selector", "value": css })),
        )
        .as_array()
        .map_or(0, Vec::len)
    }

    /// Clicks an element.
    pub fn click(&self, element: &str) {
        self.session_call(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
    }

    /// Empties a field.
    pub fn clear(&self, element: &str) {
        self.session_call(
            "POST",
            &format!("/element/{element}/clear"),
            Some(json!({})),
        );
    }

    /// Types into a field.
    pub fn type_into(&self, element: &str, text: &str) {
        self.session_call(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The visible text of the page's body.
    pub fn text(&self) -> String {
        self.execute("return document.body.innerText;")
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Waits until `check` holds (polling), or fails saying `what`.
    pub fn wait_for(&self, what: &str, timeout: Duration, check: impl Fn(&Browser) -> bool) {
        let started = Instant::now();
        while !check(self) {
            assert!(
                started.elapsed() < timeout,
                "timed out waiting for {what}; page text:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Saves a screenshot of the page as PNG.
    pub fn screenshot(&self, path: &Path) {
        let b64 = self.session_call("GET", "/screenshot", None);
        let bytes = base64_decode(b64.as_str().unwrap_or(""));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// The browser console's entries since the last call.
    pub fn console(&self) -> Vec<Value> {
        self.session_call("POST", "/se/log", Some(json!({ "type": "browser" })))
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Fails on any console error (or uncaught exception) logged since the last check.
    pub fn assert_no_console_errors(&self, page: &str) {
        let errors: Vec<Value> = self
            .console()
            .into_iter()
            .filter(|e| e["level"] == "SEVERE")
            .collect();
        assert!(errors.is_empty(), "console errors on {page}: {errors:?}");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(
                self.addr,
                "DELETE",
                &format!("/session/{}", self.session),
                &[],
                b"",
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// One read from the driver's connection, retried when a signal interrupts it (the test process
/// has child processes; their exits interrupt blocking reads).
fn read_some(stream: &mut impl Read, buf: &mut [u8]) -> usize {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => return read.unwrap(),
        }
    }
}
