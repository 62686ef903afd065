//! Runs every shell example of README.md and docs/*.md with the built `lore`, so the documentation
//! shows only commands that work. The conventions (```sh blocks run, `<!-- not-run: REASON -->`
//! before the ones that cannot) are stated in docs/README.md; this test enforces them.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lore_testutils::{TestRepo, git_in};

/// What marks a shell block that is not run: `<!-- not-run: REASON -->` on the line before it.
const NOT_RUN_OPEN: &str = "<!-- not-run:";
const NOT_RUN_CLOSE: &str = "-->";
/// The one fence that holds shell commands.
const SHELL_FENCE: &str = "sh";
/// Fences that would hold shell commands the test does not see: refused.
const OTHER_SHELL_FENCES: &[&str] = &["bash", "shell", "console", "zsh", "shell-session"];
/// How long one block may run before it counts as failed.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// One ```sh block of a markdown file.
#[derive(Debug)]
struct Block {
    /// `README.md` or `docs/NAME.md`, for messages.
    file: String,
    /// The line of the opening fence (1-based).
    line: usize,
    code: String,
    /// The reason given by a not-run marker, when there is one.
    not_run: Option<String>,
}

/// The reason of a not-run marker line, `None` if the line is no marker; an empty reason is an
/// error.
fn marker_reason(line: &str) -> Option<Result<String, String>> {
    let rest = line.trim().strip_prefix(NOT_RUN_OPEN)?;
    Some(match rest.strip_suffix(NOT_RUN_CLOSE).map(str::trim) {
        Some(reason) if !reason.is_empty() => Ok(reason.to_string()),
        _ => Err(format!(
            "a not-run marker needs a reason: `{NOT_RUN_OPEN} REASON {NOT_RUN_CLOSE}`"
        )),
    })
}

/// The complaint about a not-run marker at `line` that no ```sh block follows.
fn stray_marker(file: &str, line: usize) -> String {
    format!("{file}:{line}: a not-run marker with no ```sh block after it")
}

/// The shell blocks of one markdown text, or every way it breaks the convention.
fn shell_blocks(file: &str, text: &str) -> Result<Vec<Block>, Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut errors = Vec::new();
    // The marker waiting for its block: (line, reason).
    let mut marker: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let at = i + 1;
        let trimmed = line.trim_start();
        if let Some(reason) = marker_reason(line) {
            if let Some((prev, _)) = marker.take() {
                errors.push(stray_marker(file, prev));
            }
            match reason {
                Ok(reason) => marker = Some((at, reason)),
                Err(e) => errors.push(format!("{file}:{at}: {e}")),
            }
            i += 1;
            continue;
        }
        let Some(info) = trimmed.strip_prefix("```") else {
            if !line.trim().is_empty()
                && let Some((prev, _)) = marker.take()
            {
                errors.push(stray_marker(file, prev));
            }
            i += 1;
            continue;
        };
        let indent = line.len() - trimmed.len();
        let lang = info.split_whitespace().next().unwrap_or("");
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            // The fence's indentation (a block inside a list item) is not part of the code.
            let l = lines[i];
            let cut = indent.min(l.len() - l.trim_start().len());
            body.push(l.get(cut..).unwrap_or(l));
            i += 1;
        }
        if i == lines.len() {
            errors.push(format!("{file}:{at}: a fenced block that never closes"));
        }
        i += 1;
        let waiting = marker.take();
        if lang == SHELL_FENCE {
            blocks.push(Block {
                file: file.to_string(),
                line: at,
                code: body.join("\n") + "\n",
                not_run: waiting.map(|(_, reason)| reason),
            });
        } else if lang.is_empty() || OTHER_SHELL_FENCES.contains(&lang) {
            errors.push(format!(
                "{file}:{at}: a block fenced ```{lang}: shell commands are fenced ```sh (and run \
                 by this test, or marked not-run), anything else ```text or its language"
            ));
        } else if let Some((prev, _)) = waiting {
            errors.push(format!(
                "{file}:{prev}: a not-run marker before a ```{lang} block, which is never run"
            ));
        }
    }
    if let Some((prev, _)) = marker {
        errors.push(stray_marker(file, prev));
    }
    if errors.is_empty() {
        Ok(blocks)
    } else {
        Err(errors)
    }
}

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, as (name shown in messages, text), in a fixed order.
fn documentation() -> Vec<(String, String)> {
    let root = workspace();
    let mut names = vec!["README.md".to_string()];
    let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("reading docs/")
        .map(|e| {
            e.expect("a docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    names.extend(pages);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).expect("reading a page");
            (n, text)
        })
        .collect()
}

/// The repository a page's blocks run in: one commit (README.md and a 60-line src/index.rs) and
/// a bare repository beside it as `origin`, with `main` pushed and tracked.
fn page_repository() -> TestRepo {
    let repo = TestRepo::new();
    let source: String = (1..=60)
        .map(|n| format!("// line {n} of the index\n"))
        .collect();
    repo.write("src/index.rs", &source);
    repo.git(&["add", "src/index.rs"]);
    repo.git(&["commit", "-q", "-m", "the index"]);
    let root = repo
        .path()
        .parent()
        .expect("the repository's temp dir")
        .to_path_buf();
    let origin = root.join("origin.git");
    git_in(
        &root,
        &repo.home(),
        &["init", "-q", "--bare", "-b", "main", "origin.git"],
    );
    repo.git(&["remote", "add", "origin", &origin.display().to_string()]);
    repo.git(&["push", "-q", "-u", "origin", "main"]);
    repo
}

/// PATH with the directory of the `lore` under test first.
fn path_with_lore() -> String {
    let dir = Path::new(common::lore_bin())
        .parent()
        .expect("the binary's directory");
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", dir.display())
}

/// How a block ended: its exit code (None when killed or out of time), and what it printed.
struct Outcome {
    code: Option<i32>,
    timed_out: bool,
    output: String,
}

/// Runs one block as a bash script in the repository's work tree.
fn run_block(repo: &TestRepo, block: &Block, path: &str) -> Outcome {
    let logs = repo.path().parent().expect("temp dir").join("block-output");
    std::fs::create_dir_all(&logs).expect("creating the output directory");
    let out_path = logs.join(format!("{}.out", block.line));
    let err_path = logs.join(format!("{}.err", block.line));
    let mut cmd = Command::new("bash");
    cmd.args([
        "--noprofile",
        "--norc",
        "-e",
        "-o",
        "pipefail",
        "-c",
        &block.code,
    ])
    .current_dir(repo.path());
    common::isolate(&mut cmd, &repo.home());
    cmd.env("PATH", path)
        .env("LORE_HOME", repo.home().join("lore"))
        .env_remove("BASH_ENV")
        .env_remove("ENV")
        .env_remove("CDPATH")
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"));
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().expect("spawning bash");
    let deadline = Instant::now() + BLOCK_TIMEOUT;
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("waiting for bash") {
            break (status.code(), false);
        }
        if Instant::now() > deadline {
            // The whole group: a block may have started servers of its own.
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let output = format!("stdout:\n{}\nstderr:\n{}", read(&out_path), read(&err_path));
    Outcome {
        code,
        timed_out,
        output,
    }
}

/// The last `n` characters of `text`.
fn tail(text: &str, n: usize) -> &str {
    let start = text.len().saturating_sub(n);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

#[test]
fn every_shell_block_of_the_readme_and_the_book_runs() {
    let path = path_with_lore();
    let mut problems = Vec::new();
    let (mut ran, mut not_run, mut files) = (0, Vec::new(), 0);
    for (name, text) in documentation() {
        files += 1;
        let blocks = match shell_blocks(&name, &text) {
            Ok(blocks) => blocks,
            Err(errors) => {
                problems.extend(errors);
                continue;
            }
        };
        let (skip, run): (Vec<Block>, Vec<Block>) =
            blocks.into_iter().partition(|b| b.not_run.is_some());
        not_run.extend(skip);
        if run.is_empty() {
            continue;
        }
        let repo = page_repository();
        for (k, block) in run.iter().enumerate() {
            let outcome = run_block(&repo, block, &path);
            ran += 1;
            if outcome.code != Some(0) {
                let how = if outcome.timed_out {
                    format!("did not finish within {} s", BLOCK_TIMEOUT.as_secs())
                } else {
                    match outcome.code {
                        Some(code) => format!("exited with code {code}"),
                        None => "was killed by a signal".to_string(),
                    }
                };
                problems.push(format!(
                    "{}:{}: the block {how} (the page's {} later blocks were not run)\n{}\n{}",
                    block.file,
                    block.line,
                    run.len() - k - 1,
                    block.code,
                    tail(&outcome.output, 3000)
                ));
                break;
            }
        }
    }
    println!(
        "{ran} shell blocks run from {files} files; {} marked not-run:",
        not_run.len()
    );
    for b in &not_run {
        println!(
            "  {}:{}: {}",
            b.file,
            b.line,
            b.not_run.as_deref().unwrap_or("")
        );
    }
    assert!(
        problems.is_empty(),
        "documentation examples fail:\n\n{}",
        problems.join("\n\n")
    );
    assert!(ran > 0, "found no shell block to run in README.md or docs/");
}

#[test]
fn the_readme_shows_the_test_command_that_ci_runs() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = shell_blocks("README.md", &readme).expect("README.md follows the convention");
    let shown = blocks
        .iter()
        .any(|b| b.code.lines().any(|l| l.trim() == "scripts/test"));
    assert!(
        shown,
        "README.md no longer shows `scripts/test` in a ```sh block"
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines()
            .any(|l| l.trim_start().starts_with("scripts/test ")),
        ".ci/run no longer runs scripts/test"
    );
    let test = std::fs::read_to_string(root.join("scripts/test")).expect("scripts/test");
    assert!(
        test.lines()
            .any(|l| l.trim_start().starts_with("cargo test --workspace")),
        "scripts/test no longer runs the workspace's tests"
    );
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let root = workspace();
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("valid");
    let mut broken = Vec::new();
    for (name, text) in documentation() {
        let dir = root
            .join(&name)
            .parent()
            .expect("a page's directory")
            .to_path_buf();
        for (n, line) in text.lines().enumerate() {
            for cap in link.captures_iter(line) {
                let target = &cap[1];
                if target.contains("://") || target.starts_with('#') {
                    continue;
                }
                let file = target.split('#').next().unwrap_or(target);
                if !dir.join(file).exists() {
                    broken.push(format!("{name}:{}: {target}", n + 1));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_convention_refuses_what_the_test_would_not_see() {
    let page = "Text.\n\n```bash\nlore list\n```\n\n```\nlore list\n```\n\n\
                <!-- not-run: -->\n```sh\nlore ui\n```\n\n<!-- not-run: serves -->\nText.\n\n\
                <!-- not-run: a layout -->\n```text\nrefs/lore/memory\n```\n";
    let errors = shell_blocks("page.md", page).expect_err("five problems");
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors[0].contains("page.md:3: a block fenced ```bash"));
    assert!(errors[1].contains("page.md:7: a block fenced ```:"));
    assert!(errors[2].contains("page.md:11: a not-run marker needs a reason"));
    assert!(errors[3].contains("page.md:16: a not-run marker with no ```sh block"));
    assert!(errors[4].contains("page.md:19: a not-run marker before a ```text block"));

    let page = "<!-- not-run: serves until stopped -->\n```sh\nlore ui\n```\n\n```sh\n  lore list\n```\n\
                \n- a list item:\n\n  ```sh\n  lore status\n  ```\n";
    let blocks = shell_blocks("page.md", page).expect("a valid page");
    let summary: Vec<(usize, &str, Option<&str>)> = blocks
        .iter()
        .map(|b| (b.line, b.code.as_str(), b.not_run.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (2, "lore ui\n", Some("serves until stopped")),
            (6, "  lore list\n", None),
            (12, "lore status\n", None),
        ]
    );
}
