//! `lore ui` end to end, as a person would use it: a real `lore ui` process on a temporary
//! repository, driven by headless Chromium through chromedriver (Debian's `chromium` and
//! `chromium-driver`, installed by scripts/setup.sh; missing ones fail the test, never skip it).
//! Search finds a memory; an edit makes a new version in the timeline and in `git log`;
//! accepting a review item writes a memory; another process's write appears without a reload;
//! a foreign Origin is refused. Every page is screenshotted into target/webui-screenshots/, and
//! any browser console error fails the test.

mod common;
#[path = "webui/webdriver.rs"]
mod webdriver;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{json, lore_command, ok};
use lore_testutils::TestRepo;
use webdriver::{Browser, http};

/// A running `lore ui`; killed when dropped.
struct UiServer {
    child: Child,
    addr: SocketAddr,
    token: String,
}

impl UiServer {
    fn start(repo: &TestRepo) -> UiServer {
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

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn login_url(&self) -> String {
        format!("{}/?token={}", self.base(), self.token)
    }
}

impl Drop for UiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/webui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Visits a page, checks it for console errors and saves its screenshot.
fn visit(browser: &Browser, url: &str, name: &str) {
    browser.goto(url);
    browser.wait_for("the page", Duration::from_secs(10), |b| {
        b.execute("return document.readyState === 'complete' && !!document.getElementById('main');")
            == serde_json::Value::Bool(true)
    });
    browser.screenshot(&screenshots().join(format!("{name}.png")));
    browser.assert_no_console_errors(name);
}

fn queue_suggestion(repo: &TestRepo, id: &str, summary: &str) {
    let dir = repo.path().join(".git/lore/capture");
    std::fs::create_dir_all(&dir).unwrap();
    let line = serde_json::json!({
        "id": id,
        "created": "2026-03-01T10:00:00Z",
        "agent": "claude-code",
        "session": "s1",
        "namespace": "learnings",
        "summary": summary,
        "body": "Seen while profiling: the WAL file grows until a checkpoint runs.",
        "confidence": 0.8,
        "source": "pattern"
    });
    std::fs::write(dir.join("review.jsonl"), format!("{line}\n")).unwrap();
}

fn seed(repo: &TestRepo) -> String {
    let remembered = json(
        repo,
        &[
            "remember",
            "-n",
            "decisions",
            "Use SQLite in WAL mode for the index",
            "--body",
            "Readers never block the writer; checkpoints run on commit.",
            "--tag",
            "storage,sqlite",
        ],
    );
    ok(
        repo,
        &[
            "remember",
            "-n",
            "blockers",
            "<script>alert('stored')</script> CI runner lacks a GPU",
            "--body",
            "<img src=x onerror=alert(1)> nothing here runs",
        ],
    );
    ok(
        repo,
        &[
            "ctx",
            "init",
            "--goal",
            "Ship the web UI",
            "--todo",
            "write the e2e test",
        ],
    );
    ok(
        repo,
        &[
            "ctx",
            "log",
            "looked at the axum router",
            "--kind",
            "thought",
        ],
    );
    ok(repo, &["ctx", "commit", "Sketched the pages"]);
    ok(
        repo,
        &["ctx", "branch", "charts", "--purpose", "draw the plots"],
    );
    let root = json(
        repo,
        &[
            "think",
            "add",
            "Plan the tree layout",
            "--in",
            "layout",
            "--score",
            "0.6",
        ],
    );
    let root_id = root["id"].as_str().unwrap().to_string();
    let good = json(
        repo,
        &[
            "think",
            "add",
            "Leaves in columns, parents centred",
            "--parent",
            &root_id,
            "--score",
            "0.9",
        ],
    );
    ok(
        repo,
        &[
            "think",
            "add",
            "Force-directed layout",
            "--parent",
            &root_id,
            "--score",
            "0.2",
        ],
    );
    ok(
        repo,
        &["think", "outcome", good["id"].as_str().unwrap(), "success"],
    );
    queue_suggestion(
        repo,
        "REVIEW000001",
        "The WAL file grows until a checkpoint runs",
    );
    remembered["memory"]["id"].as_str().unwrap().to_string()
}

fn server_time_ms(browser: &Browser) -> f64 {
    browser
        .execute(
            "const n = performance.getEntriesByType('navigation')[0];\
             const t = n && n.serverTiming.find(s => s.name === 'render');\
             return t ? t.duration : -1;",
        )
        .as_f64()
        .unwrap_or(-1.0)
}

#[test]
fn the_web_ui_works_in_a_real_browser() {
    let repo = TestRepo::new();
    let memory_id = seed(&repo);
    let server = UiServer::start(&repo);
    let browser = Browser::start();

    // The printed address sets the token cookie and lands on the memories.
    visit(&browser, &server.login_url(), "memories");
    assert!(!browser.url().contains("token="), "{}", browser.url());
    let text = browser.text();
    assert!(text.contains("Use SQLite in WAL mode"), "{text}");
    // Hostile stored text is shown as text, never run.
    assert!(text.contains("<script>alert('stored')</script>"), "{text}");
    assert!(
        server_time_ms(&browser) >= 0.0,
        "no Server-Timing on the page"
    );

    // Search finds a memory, with the recall explanation.
    let q = browser.find("#q");
    browser.type_into(&q, "sqlite wal index");
    browser.click(&browser.find("form.search button[type=submit]"));
    browser.wait_for("search results", Duration::from_secs(10), |b| {
        b.count("ol.hits li") > 0
    });
    let text = browser.text();
    assert!(text.contains("Use SQLite in WAL mode"), "{text}");
    assert!(text.contains("BM25") && text.contains("recency"), "{text}");
    browser.screenshot(&screenshots().join("search.png"));
    browser.assert_no_console_errors("search");

    // Editing a memory makes a new version, in the timeline and in git log.
    visit(
        &browser,
        &format!("{}/memory/{memory_id}", server.base()),
        "memory-before-edit",
    );
    assert_eq!(browser.count("#timeline li"), 1);
    let summary = browser.find("#edit-summary");
    browser.clear(&summary);
    browser.type_into(&summary, "Use SQLite in WAL mode, checkpoint on idle");
    browser.click(&browser.find("#edit-save"));
    browser.wait_for("the new version", Duration::from_secs(10), |b| {
        b.count("#timeline li") == 2
    });
    let text = browser.text();
    assert!(text.contains("checkpoint on idle"), "{text}");
    // The line diff between the two versions shows the summary that changed.
    let diff = |class: &str| {
        browser
            .execute(&format!(
                "return [...document.querySelectorAll('table.diff tr.{class}')].map(r => r.innerText).join('\\n');"
            ))
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        diff("add").contains("checkpoint on idle"),
        "{}",
        diff("add")
    );
    assert!(
        diff("del").contains("WAL mode for the index"),
        "{}",
        diff("del")
    );
    browser.screenshot(&screenshots().join("memory.png"));
    browser.assert_no_console_errors("memory");
    let log = repo.git(&["log", "--format=%s", "refs/lore/memory"]);
    let newest = log.lines().next().unwrap_or("");
    assert!(newest.starts_with("update"), "{log}");
    assert!(
        text.contains(newest),
        "the timeline shows {newest:?}: {text}"
    );

    // Accepting a review item writes a memory.
    visit(&browser, &format!("{}/review", server.base()), "review");
    assert!(browser.text().contains("The WAL file grows"));
    browser.click(&browser.find("li.suggestion button.accept"));
    browser.wait_for("the accepted notice", Duration::from_secs(10), |b| {
        b.text().contains("Accepted")
    });
    browser.assert_no_console_errors("review accepted");
    let learned = json(&repo, &["list", "-n", "learnings"]);
    assert!(
        learned
            .to_string()
            .contains("The WAL file grows until a checkpoint runs"),
        "{learned}"
    );

    // Another process's write appears without a reload.
    visit(
        &browser,
        &format!("{}/memories", server.base()),
        "memories-live",
    );
    browser.execute("window.__sameDocument = true; return null;");
    ok(
        &repo,
        &["remember", "-n", "progress", "Written by another process"],
    );
    browser.wait_for("the other process's memory", Duration::from_secs(15), |b| {
        b.text().contains("Written by another process")
    });
    assert_eq!(
        browser.execute("return window.__sameDocument === true;"),
        serde_json::Value::Bool(true),
        "the page was reloaded"
    );
    browser.assert_no_console_errors("live update");

    // The other pages render, each with its screenshot.
    visit(&browser, &format!("{}/context", server.base()), "context");
    assert!(browser.text().contains("Sketched the pages"));
    visit(
        &browser,
        &format!("{}/context?branch=charts&into=main", server.base()),
        "context-merge-preview",
    );
    assert!(
        browser.text().contains("Roadmap after the merge")
            || browser.text().contains("already has")
    );
    visit(
        &browser,
        &format!("{}/thoughts?session=layout", server.base()),
        "thoughts",
    );
    assert_eq!(browser.count("svg.tree circle"), 3);
    // Each node shows its first words without a click.
    assert_eq!(browser.count("svg.tree text.thought"), 3);
    browser.click(&browser.find("svg.tree a.node-link"));
    browser.wait_for("the replay", Duration::from_secs(10), |b| {
        b.count("#replay") == 1
    });
    browser.screenshot(&screenshots().join("thoughts-replay.png"));
    browser.assert_no_console_errors("thoughts replay");
    visit(&browser, &format!("{}/sync", server.base()), "sync");
    assert!(browser.text().contains("No open contradictions"));
    visit(&browser, &format!("{}/overview", server.base()), "overview");
    assert!(browser.count("svg.chart") >= 2, "{}", browser.text());

    // A foreign Origin is refused, even with the token; the UI's own origin is not.
    let cookie = format!("lore_ui_{}={}", server.addr.port(), server.token);
    let form = format!("csrf={}&status=archived", server.token);
    let post = |origin: &str, body: &str| {
        http(
            server.addr,
            "POST",
            &format!("/memory/{memory_id}/status"),
            &[
                ("Cookie", &cookie),
                ("Origin", origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body.as_bytes(),
        )
    };
    let foreign = post("http://evil.example", &form);
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    let no_csrf = post(&server.base(), "status=archived");
    assert_eq!(no_csrf.status, 403, "{}", no_csrf.body);
    let no_token = http(server.addr, "GET", "/memories", &[], b"");
    assert_eq!(no_token.status, 401, "{}", no_token.body);
    let rebinding = http(
        server.addr,
        "GET",
        "/memories",
        &[("Host", "evil.example"), ("Cookie", &cookie)],
        b"",
    );
    assert_eq!(rebinding.status, 403, "{}", rebinding.body);
    let own = post(&server.base(), &form);
    assert_eq!(own.status, 303, "{}", own.body);
    let shown = json(&repo, &["show", &memory_id]);
    assert_eq!(shown["memory"]["status"], "archived", "{shown}");
}

/// A contradiction on the Sync page reads as what happened: the forgetting side as a forget,
/// each side named by its author and commit, each button saying which version it keeps; the
/// Overview prints counts as counts.
#[test]
fn the_sync_page_names_each_side_and_what_each_button_keeps() {
    let repo = TestRepo::new();
    let central = repo.home().join("central.git");
    lore_testutils::git_in(
        &repo.home(),
        &repo.home(),
        &["init", "-q", "--bare", central.to_str().unwrap()],
    );
    repo.git(&["remote", "add", "origin", central.to_str().unwrap()]);
    ok(
        &repo,
        &[
            "remember",
            "The API uses version 2",
            "-n",
            "decisions",
            "--key",
            "api",
        ],
    );
    ok(&repo, &["sync"]);
    // Another clone, another person: forgets it.
    let other = repo.home().join("other");
    lore_testutils::git_in(
        &repo.home(),
        &repo.home(),
        &[
            "clone",
            "-q",
            central.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    lore_testutils::git_in(
        &other,
        &repo.home(),
        &["config", "user.name", "Other Person"],
    );
    lore_testutils::git_in(
        &other,
        &repo.home(),
        &["config", "user.email", "other@example.com"],
    );
    let run = |dir: &std::path::Path, args: &[&str]| {
        let out = lore_command(dir, &repo.home(), args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&other, &["sync"]);
    run(&other, &["forget", "decisions/api"]);
    run(&other, &["sync"]);
    ok(
        &repo,
        &[
            "update",
            "decisions/api",
            "--summary",
            "The API uses version 3",
        ],
    );
    ok(&repo, &["sync"]);

    let server = UiServer::start(&repo);
    let browser = Browser::start();
    visit(&browser, &server.login_url(), "memories");
    visit(
        &browser,
        &format!("{}/sync", server.base()),
        "sync-contradiction",
    );
    let text = browser.text();
    assert!(text.contains("Forgot the memory"), "{text}");
    assert!(
        text.contains("by Other Person <other@example.com>"),
        "{text}"
    );
    assert!(
        text.contains("Accept the forget (other version 1, by Other Person <other@example.com>)"),
        "{text}"
    );
    assert!(text.contains("Keep the version in force (by "), "{text}");
    assert!(!text.contains("(forgotten)"), "{text}");
    browser.assert_no_console_errors("sync page");
    visit(
        &browser,
        &format!("{}/overview", server.base()),
        "overview-counts",
    );
    let text = browser.text();
    assert!(!text.contains(".00 memories"), "{text}");
}

/// The figures the issue sets targets for: the first page's server time at 10k memories and a
/// search end to end in the browser at 100k. Building the stores takes minutes, so it runs on
/// demand: `cargo test --release -p lore-cli --test webui -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_first_page_and_search_at_scale() {
    for (memories, check) in [(10_000usize, "first page"), (100_000, "search")] {
        let repo = TestRepo::new();
        let mut jsonl = String::new();
        let words = [
            "index",
            "sqlite",
            "cache",
            "vector",
            "merge",
            "branch",
            "context",
            "review",
            "token",
            "origin",
            "schema",
            "checkpoint",
            "latency",
            "budget",
            "recall",
        ];
        for i in 0..memories {
            let a = words[i % words.len()];
            let b = words[(i / words.len()) % words.len()];
            jsonl.push_str(
                &serde_json::json!({
                    "namespace": "learnings",
                    "summary": format!("Note {i} about {a} and {b}"),
                    "body": format!("Details {i}: the {a} interacts with the {b} (case {i})."),
                    "created": "2026-01-01T00:00:00Z",
                    "updated": "2026-01-01T00:00:00Z",
                })
                .to_string(),
            );
            jsonl.push('\n');
        }
        std::fs::write(repo.path().join("in.jsonl"), &jsonl).unwrap();
        let started = Instant::now();
        ok(&repo, &["import", "jsonl", "in.jsonl"]);
        ok(&repo, &["reindex"]);
        eprintln!(
            "built {memories} memories in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        let server = UiServer::start(&repo);
        let browser = Browser::start();
        visit(&browser, &server.login_url(), &format!("scale-{memories}"));
        let mut renders = Vec::new();
        for _ in 0..5 {
            visit(
                &browser,
                &format!("{}/", server.base()),
                &format!("scale-{memories}"),
            );
            renders.push(server_time_ms(&browser));
        }
        renders.sort_by(f64::total_cmp);
        eprintln!(
            "{memories} memories: first page server time median {:.1} ms (runs {renders:?})",
            renders[renders.len() / 2]
        );
        let mut searches = Vec::new();
        for q in [
            "sqlite checkpoint",
            "vector cache latency",
            "merge branch origin",
        ] {
            browser.goto(&format!(
                "{}/memories?q={}",
                server.base(),
                q.replace(' ', "+")
            ));
            let ms = browser
                .execute(
                    "const n = performance.getEntriesByType('navigation')[0];\
                     return n.domContentLoadedEventEnd - n.startTime;",
                )
                .as_f64()
                .unwrap_or(-1.0);
            assert!(browser.count("ol.hits li") > 0, "{}", browser.text());
            searches.push(ms);
        }
        searches.sort_by(f64::total_cmp);
        eprintln!(
            "{memories} memories: search end to end in the browser median {:.1} ms (runs {searches:?}) [{check}]",
            searches[searches.len() / 2]
        );
    }
}
