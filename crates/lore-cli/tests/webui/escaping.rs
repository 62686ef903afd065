//! Hostile stored text on every page that shows it: a memory's summary, body and tag, a review
//! suggestion, a contradiction's versions, a thought's text and a context branch's texts, each
//! full of `<script>`, quotes and `&`. The served HTML holds them escaped, and in the browser
//! they read back as the same text, in content and in form values, with nothing run.

use lore_testutils::TestRepo;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

use super::clones;
use super::common::{json, ok};
use super::server::{UiServer, visit};
use super::webdriver::{Browser, http};

const SUMMARY: &str =
    r#"<script>window.pwned=1</script>" onfocus="window.pwned=2" x=' Hostile & co"#;
const BODY: &str =
    r#"<img src=x onerror="window.pwned=3"> </textarea><script>window.pwned=4</script> "b" & 'c'"#;
const TAG: &str = "<b>t</b>&'x";
const THOUGHT: &str = r#"<script>window.pwned=5</script> Split "it" & 'go'"#;
const STEP: &str = r#"<script>window.pwned=6</script> looked "here" & 'there'"#;

/// A query string of these pairs, every value percent-encoded.
fn query(pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect();
    format!("?{}", pairs.join("&"))
}

/// The raw HTML of a page, fetched with the token cookie.
fn raw(server: &UiServer, path: &str) -> (u16, String) {
    let cookie = format!("lore_ui_{}={}", server.addr.port(), server.token);
    let got = http(server.addr, "GET", path, &[("Cookie", &cookie)], b"");
    (got.status, got.body)
}

/// Fails if the HTML holds any of the hostile texts as markup.
fn assert_no_markup(path: &str, html: &str) {
    for bad in [
        "<script>window",
        "<img",
        "<b>",
        "</textarea><script>",
        " onfocus=\"",
        " onerror=\"",
    ] {
        assert!(
            !html.contains(bad),
            "{path} holds {bad:?} as markup:\n{html}"
        );
    }
}

/// Fails if the page in the browser ran or grew anything from the hostile texts.
fn assert_nothing_ran(browser: &Browser, page: &str) {
    let injected = browser.execute(
        "return [window.pwned === undefined, document.scripts.length,
                 document.querySelectorAll('img, b, [onfocus], [onerror]').length];",
    );
    assert_eq!(injected, serde_json::json!([true, 1, 0]), "{page}");
}

/// The text of each element a CSS selector matches (`textContent`, or a field's value).
fn texts(browser: &Browser, css: &str) -> Vec<String> {
    let script = format!(
        "return [...document.querySelectorAll({css:?})]\
         .map(e => e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement \
         ? e.value : e.textContent);"
    );
    serde_json::from_value(browser.execute(&script)).unwrap_or_default()
}

/// Fails unless some element `css` matches holds `text` exactly as written.
fn assert_shows(browser: &Browser, css: &str, text: &str) {
    let found = texts(browser, css);
    assert!(
        found.iter().any(|t| t.contains(text)),
        "no {css} holds {text:?}: {found:?}"
    );
}

/// What [`seed`] wrote: the memory's id, and the reasoning session's two thoughts.
struct Seeded {
    id: String,
    root: String,
    child: String,
}

/// A memory, a review suggestion, a contradiction over the memory (another clone forgot it),
/// a reasoning session and a context branch, all written in hostile text.
fn seed(repo: &TestRepo) -> Seeded {
    let tag = format!("--tag={TAG}");
    let args = ["remember", "-n", "decisions", SUMMARY, "--key", "hostile"];
    let remembered = json(repo, &[&args[..], &["--body", BODY, &tag]].concat());
    let id = remembered["memory"]["id"].as_str().unwrap().to_string();
    let other = clones::OtherClone::of(repo);
    other.lore(&["forget", "decisions/hostile"]);
    other.lore(&["sync"]);
    ok(repo, &["update", "decisions/hostile", "--tag", "edited"]);
    clones::sync(repo);
    let dir = repo.path().join(".git/lore/capture");
    std::fs::create_dir_all(&dir).unwrap();
    let line = serde_json::json!({
        "id": "REVIEW000001", "created": "2026-03-01T10:00:00Z", "agent": SUMMARY,
        "session": "s1", "namespace": "learnings", "summary": SUMMARY, "body": BODY,
        "confidence": 0.8, "source": "pattern"
    });
    std::fs::write(dir.join("review.jsonl"), format!("{line}\n")).unwrap();
    let think = |args: &[&str]| json(repo, &[&["think", "add"], args].concat());
    let root = think(&[THOUGHT, "--in", "hostile", "--score", "0.5"]);
    let root = root["id"].as_str().unwrap().to_string();
    let child = think(&[BODY, "--parent", &root, "--score", "0.7"]);
    let child = child["id"].as_str().unwrap().to_string();
    ok(repo, &["ctx", "init", "--goal", STEP, "--todo", SUMMARY]);
    ok(repo, &["ctx", "log", STEP, "--kind", "thought"]);
    ok(repo, &["ctx", "commit", STEP]);
    Seeded { id, root, child }
}

/// A page to check: its path, its screenshot's name, and where the hostile text must show
/// (a CSS selector and the text one of its elements holds exactly).
type Check = (String, &'static str, Vec<(&'static str, &'static str)>);

/// Every page, with where each shows the hostile text.
fn pages(s: &Seeded) -> Vec<Check> {
    let echo = query(&[("q", SUMMARY), ("tag", TAG)]);
    let thoughts = query(&[
        ("session", "hostile"),
        ("node", &s.child),
        ("from", &s.root),
        ("to", &s.child),
    ]);
    vec![
        (
            "/memories".into(),
            "list",
            vec![("ul.memories h2", SUMMARY), (".tag", TAG)],
        ),
        (
            "/memories?q=hostile".into(),
            "search",
            vec![("ol.hits h2", SUMMARY), (".tag", TAG)],
        ),
        (
            format!("/memories{echo}"),
            "search-echo",
            vec![("#q", SUMMARY), ("h1", SUMMARY)],
        ),
        (
            format!("/memory/{}", s.id),
            "memory",
            vec![
                ("h1", SUMMARY),
                ("#memory-body", BODY),
                (".tag", TAG),
                ("#edit-summary", SUMMARY),
                ("#edit-body", BODY),
                ("#timeline li", SUMMARY),
            ],
        ),
        (
            "/review".into(),
            "review",
            vec![
                ("li.suggestion h2", SUMMARY),
                ("li.suggestion .prov", SUMMARY),
                ("input[name=summary]", SUMMARY),
                ("textarea[name=body]", BODY),
            ],
        ),
        (
            "/sync".into(),
            "sync",
            vec![
                ("section.side", SUMMARY),
                ("section.side pre", BODY),
                ("section.side.forgot s", SUMMARY),
                ("input[name=summary]", SUMMARY),
                ("textarea[name=body]", BODY),
            ],
        ),
        (
            format!("/thoughts{thoughts}"),
            "thoughts",
            vec![
                ("svg.tree a.node-link title", THOUGHT),
                ("#replay + ol pre", THOUGHT),
                ("#replay + ol pre", BODY),
                ("table.diff td code", THOUGHT),
            ],
        ),
        (
            "/context".into(),
            "context",
            vec![
                ("#commits li", STEP),
                ("table.steps td", STEP),
                ("pre.doc", STEP),
            ],
        ),
        ("/overview".into(), "overview", Vec::new()),
    ]
}

#[test]
fn hostile_text_is_escaped_on_every_page_that_shows_it() {
    let repo = TestRepo::new();
    let seeded = seed(&repo);
    let server = UiServer::start(&repo);
    let browser = Browser::start();
    visit(&browser, &server.login_url(), "hostile-memories");
    for (path, name, shows) in pages(&seeded) {
        let (status, html) = raw(&server, &path);
        assert_eq!(status, 200, "{path}: {html}");
        assert_no_markup(&path, &html);
        if !shows.is_empty() {
            assert!(
                html.contains("&lt;script&gt;window.pwned="),
                "{path}: {html}"
            );
        }
        let url = format!("{}{path}", server.base());
        visit(&browser, &url, &format!("hostile-{name}"));
        assert_nothing_ran(&browser, name);
        for (css, text) in shows {
            assert_shows(&browser, css, text);
        }
    }
    let url = format!("{}/memory/{}", server.base(), seeded.id);
    visit(&browser, &url, "hostile-title");
    let title = browser.execute("return document.title;");
    assert_eq!(title, serde_json::json!(format!("{SUMMARY} · lore")));

    // An error page says what was asked for as text.
    let missing = format!("/memory/{}", utf8_percent_encode(SUMMARY, NON_ALPHANUMERIC));
    let (status, html) = raw(&server, &missing);
    assert!((400..500).contains(&status), "{status}: {html}");
    assert!(html.contains("&lt;script&gt;window.pwned="), "{html}");
    assert_no_markup(&missing, &html);
}
