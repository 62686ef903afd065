//! Bad input gets a clear error and the documented exit code, and loses nothing.

mod common;

use common::{json, json_at, lore_command, ok, run};
use lore_testutils::TestRepo;

fn fails(repo: &TestRepo, args: &[&str], stdin: Option<&[u8]>, code: i32, needle: &str) {
    let out = run(repo, args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "lore {args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "lore {args:?}: expected {needle:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn memory_count(repo: &TestRepo) -> usize {
    json(repo, &["list", "--limit", "0"])["memories"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn invalid_namespaces_and_keys_are_refused() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "a valid one"]);
    for ns in [
        "../x",
        "/etc",
        "a/b",
        "Decisions",
        "de\u{1}cisions",
        ".hidden",
        "",
    ] {
        fails(&repo, &["remember", "s", "-n", ns], None, 2, "namespace");
    }
    for key in ["../x", "/abs/path", "a/b", "k\u{7}ey", "UPPER", "x", ".git"] {
        fails(
            &repo,
            &["remember", "s", "-n", "decisions", "-k", key],
            None,
            2,
            "key",
        );
    }
    fails(
        &repo,
        &["remember", "s", "-n", "decsions"],
        None,
        2,
        "did you mean \"decisions\"",
    );
    assert_eq!(memory_count(&repo), 1);
    let refs = repo.git(&["for-each-ref", "--format=%(refname)", "refs/lore/"]);
    assert_eq!(refs.trim(), "refs/lore/memory");
    repo.git(&["fsck", "--strict"]);
}

#[test]
fn summaries_must_fit() {
    let repo = TestRepo::new();
    let long = "x".repeat(101);
    fails(
        &repo,
        &["remember", &long],
        None,
        2,
        "101 characters; the limit is 100",
    );
    fails(
        &repo,
        &["remember", "   "],
        None,
        2,
        "a summary is required",
    );
    fails(&repo, &["remember", "two\nlines"], None, 2, "one line");
    ok(&repo, &["remember", &"é".repeat(100)]);
    assert_eq!(memory_count(&repo), 1);
}

#[test]
fn non_utf8_input_is_refused_with_its_offset() {
    let repo = TestRepo::new();
    fails(
        &repo,
        &["remember", "-"],
        Some(b"summary\n\nbody \xff\xfe here"),
        2,
        "not valid UTF-8 (invalid byte at offset 14)",
    );
    fails(
        &repo,
        &["remember", "ok", "--body-file", "-"],
        Some(b"\xc3\x28"),
        2,
        "not valid UTF-8",
    );
    std::fs::write(repo.path().join("bad.jsonl"), b"{\"summary\": \"x\xff\"}\n").unwrap();
    let out = run(&repo, &["import", "jsonl", "bad.jsonl"], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"));
    assert_eq!(memory_count(&repo), 0);
}

#[test]
fn citations_cannot_leave_the_repository() {
    let repo = TestRepo::new();
    fails(
        &repo,
        &["remember", "s", "--cite", "../outside.txt"],
        None,
        2,
        "outside the repository",
    );
    fails(
        &repo,
        &["remember", "s", "--cite", "/etc/passwd"],
        None,
        2,
        "outside the repository",
    );
    fails(
        &repo,
        &["remember", "s", "--cite", "missing.rs:1-2"],
        None,
        2,
        "no such file",
    );
    fails(
        &repo,
        &["remember", "s", "--cite", ".git/config"],
        None,
        2,
        ".git",
    );
    assert_eq!(memory_count(&repo), 0);
}

#[test]
fn lookups_that_fail_say_so_with_exit_codes() {
    let repo = TestRepo::new();
    fails(&repo, &["show", "nosuchkey"], None, 3, "no memory matches");
    fails(
        &repo,
        &["forget", "zzzzzzzzzzzz"],
        None,
        3,
        "no memory matches",
    );
    ok(&repo, &["remember", "keyed", "-n", "decisions", "-k", "db"]);
    fails(
        &repo,
        &["remember", "again", "-n", "decisions", "-k", "db"],
        None,
        4,
        "already exists",
    );
    fails(&repo, &["update", "db"], None, 2, "nothing to change");
    fails(
        &repo,
        &["update", "db", "--status", "done"],
        None,
        2,
        "use one of active",
    );
    fails(
        &repo,
        &["update", "db", "--confidence", "1.5"],
        None,
        2,
        "between 0 and 1",
    );
    fails(
        &repo,
        &["list", "--since", "yesterday"],
        None,
        2,
        "invalid time",
    );
    fails(&repo, &["recall"], None, 2, "give something to recall");
    // Errors in JSON mode are JSON too.
    let out = run(&repo, &["--json", "show", "nosuchkey"], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "not_found");
    assert_eq!(v["error"]["exit_code"], 3);
}

#[test]
fn a_hand_broken_file_is_reported_by_id_and_others_still_load() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "stays readable"]);
    let broken = json(&repo, &["remember", "will be broken"]);
    let id = broken["memory"]["id"].as_str().unwrap().to_string();
    let path = broken["path"].as_str().unwrap().to_string();
    // Edit the file by hand with stock git plumbing, as a user might.
    let blob = {
        let mut cmd = repo.git_command(&["hash-object", "-w", "--stdin"]);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"---\nid: [oops\nsummary: broken\n---\n")
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string()
    };
    let entry = format!("100644,{blob},{path}");
    let commit = repo.commit_edited("refs/lore/memory", &[&["--cacheinfo", &entry]], "hand edit");
    repo.git(&["update-ref", "refs/lore/memory", commit.trim()]);

    let listed = json(&repo, &["list"])["memories"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["summary"], "stays readable");
    let status = json(&repo, &["status"]);
    assert_eq!(status["invalid"][0]["name"], id.as_str());
    let text = ok(&repo, &["status"]);
    assert!(text.contains(&format!("{id} ({path})")), "{text}");
}

#[test]
fn outside_any_repository_the_personal_store_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("not-a-repo");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    json_at(&work, &home, &["remember", "personal note"]);
    let status = json_at(&work, &home, &["status"]);
    assert_eq!(status["kind"], "personal");
    assert_eq!(status["total"], 1);
    let expected = home.join(".local/share/lore/personal.git");
    assert!(
        expected.join("HEAD").exists(),
        "personal store at {}",
        expected.display()
    );
    // --repo pointing outside any repository is an error, not a silent fallback.
    let out = lore_command(&work, &home, &["--repo", work.to_str().unwrap(), "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not inside a git repository"));
}

#[test]
fn a_deleted_index_is_rebuilt_with_a_message() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "alpha lesson"]);
    ok(&repo, &["list"]);
    std::fs::remove_file(repo.path().join(".git/lore/index.sqlite3")).unwrap();
    let out = run(&repo, &["recall", "alpha"], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("built the index"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("alpha lesson"));
    std::fs::write(repo.path().join(".git/lore/index.sqlite3"), b"garbage").unwrap();
    let out = run(&repo, &["list"], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuilt it"));
}

#[test]
fn import_export_round_trips() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "first",
            "-n",
            "decisions",
            "-k",
            "topic",
            "-t",
            "a,b",
            "-b",
            "body\n\n---\nwith a rule\n",
        ],
    );
    ok(&repo, &["supersede", "topic", "second"]);
    ok(
        &repo,
        &[
            "remember", "third", "-n", "blockers", "--status", "resolved",
        ],
    );
    let jsonl = ok(&repo, &["export", "jsonl"]);
    ok(&repo, &["export", "markdown", "md-out"]);
    let other = TestRepo::new();
    std::fs::write(other.path().join("in.jsonl"), &jsonl).unwrap();
    let report = json(&other, &["import", "jsonl", "in.jsonl"]);
    assert_eq!(report["written"], 3);
    let again = json(&other, &["import", "jsonl", "in.jsonl"]);
    assert_eq!(again["unchanged"], 3);
    assert_eq!(
        ok(&other, &["export", "jsonl"]),
        jsonl,
        "JSONL round trip is exact"
    );
    let md = repo.path().join("md-out");
    let from_md = json(&other, &["import", "markdown", md.to_str().unwrap()]);
    assert_eq!(from_md["unchanged"], 3, "{from_md}");
    // git-notes-memory layout, written by hand the way that tool does.
    let third = TestRepo::new();
    let note = "---\ntype: decisions\nspec: auth\ntimestamp: 2025-12-14T10:30:00Z\nsummary: Use JWT for sessions\ntags: [jwt, security]\n---\n## Context\nStateless.\n\n---\ntype: decisions\ntimestamp: 2025-12-15T09:00:00Z\nsummary: Rotate keys monthly\n---\nBody two\n";
    third.git(&["notes", "--ref=mem/decisions", "add", "-m", note, "HEAD"]);
    let imported = json(&third, &["import", "notes"]);
    assert_eq!(imported["written"], 2, "{imported}");
    let listed = json(&third, &["list", "--sort", "oldest"])["memories"].clone();
    assert_eq!(listed[0]["summary"], "Use JWT for sessions");
    assert_eq!(listed[0]["created"], "2025-12-14T10:30:00Z");
    assert_eq!(
        listed[0]["tags"],
        serde_json::json!(["jwt", "security", "spec:auth"])
    );
    assert_eq!(listed[0]["body"], "## Context\nStateless.\n");
    assert_eq!(json(&third, &["import", "notes"])["unchanged"], 2);
}

#[test]
fn messages_come_from_arguments_stdin_or_a_file() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join("msg.md"),
        "From a file\n\nThe body, from the file.\n",
    )
    .unwrap();
    let from_file = json(&repo, &["remember", "-F", "msg.md", "-n", "research"]);
    assert_eq!(from_file["memory"]["summary"], "From a file");
    assert_eq!(from_file["memory"]["body"], "The body, from the file.\n");
    let out = run(
        &repo,
        &["--json", "remember", "-"],
        Some(b"From stdin\n\nStdin body\n"),
    );
    let from_stdin: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_stdin["memory"]["summary"], "From stdin");
    assert_eq!(from_stdin["memory"]["body"], "Stdin body\n");
    fails(&repo, &["remember"], None, 2, "give a summary");
    fails(
        &repo,
        &["remember", "x", "-F", "msg.md"],
        None,
        2,
        "not both",
    );
    fails(
        &repo,
        &["remember", "-", "--body-file", "-"],
        Some(b"x"),
        2,
        "only once",
    );
    fails(
        &repo,
        &["remember", "-F", "missing.md"],
        None,
        2,
        "cannot read missing.md",
    );
    assert_eq!(memory_count(&repo), 2);
}

#[test]
fn oversized_standard_input_is_refused_after_a_bounded_read_and_errors_quote_little() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "a first memory"]);
    // 200 MB offered on stdin: refused having read 16 MiB and a byte; the writer sees the pipe
    // close rather than the whole input being taken in.
    let mut child = lore_command(&repo.path(), &repo.home(), &["remember", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let chunk = vec![b'a'; 1 << 20];
        let mut written = 0usize;
        for _ in 0..200 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    let out = child.wait_with_output().unwrap();
    let written = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("more than 16777216 bytes"), "{stderr}");
    assert!(written < 200 << 20, "the whole input was taken in");
    assert_eq!(memory_count(&repo), 1);

    // A summary far past its bound is refused without being echoed whole.
    let long = "word ".repeat(20_000);
    let out = run(&repo, &["remember", &long], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &stderr[..200.min(stderr.len())]
    );
    assert!(stderr.len() < 4_000, "{} bytes of stderr", stderr.len());
    assert_eq!(memory_count(&repo), 1);
}

#[test]
fn reimporting_jsonl_without_ids_adds_nothing_and_a_reason_to_skip_is_said_once() {
    let repo = TestRepo::new();
    ok(&repo, &["init"]);
    let mut data = String::new();
    for i in 0..50 {
        data.push_str(&format!(
            "{{\"namespace\":\"learnings\",\"summary\":\"lesson {i}\",\"body\":\"body {i}\"}}\n"
        ));
    }
    for i in 0..20 {
        data.push_str(&format!("{{\"summary\":\"no namespace {i}\"}}\n"));
    }
    std::fs::write(repo.path().join("in.jsonl"), data).unwrap();
    let out = run(&repo, &["import", "jsonl", "in.jsonl"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(memory_count(&repo), 50);
    let namespace_lines: Vec<&str> = stderr.lines().filter(|l| l.contains("namespace")).collect();
    assert_eq!(namespace_lines.len(), 1, "{stderr}");
    assert!(
        namespace_lines[0].contains("skipped 20 records"),
        "{stderr}"
    );

    let again = json(&repo, &["import", "jsonl", "in.jsonl"]);
    assert_eq!(again["written"], 0, "{again}");
    assert_eq!(again["unchanged"], 50, "{again}");
    assert_eq!(memory_count(&repo), 50);
    let said = again["warnings"].to_string();
    assert!(
        said.contains("50 record(s) without an id were imported before"),
        "{said}"
    );
    // A record imported and forgotten since stays forgotten.
    let first = json(&repo, &["list", "--limit", "1"])["memories"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&repo, &["forget", &first]);
    let third = json(&repo, &["import", "jsonl", "in.jsonl"]);
    assert_eq!(third["written"], 0, "{third}");
    assert_eq!(memory_count(&repo), 49);
}

/// `lore ARGS` under a file-size limit of `kib` KiB (`ulimit -f`), in the repository.
fn under_file_size_limit(repo: &TestRepo, kib: u32, args: &str) -> std::process::Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -f {kib}; exec {} {args}",
            common::lore_bin()
        ))
        .current_dir(repo.path());
    lore_testutils::make_hermetic(&mut cmd, &repo.home());
    cmd.output().unwrap()
}

#[test]
fn past_a_file_size_limit_reads_answer_from_memory_and_nothing_is_killed() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "first memory"]);
    for entry in std::fs::read_dir(repo.path().join(".git/lore")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains("index.sqlite3") {
            std::fs::remove_file(path).unwrap();
        }
    }
    // The index cannot be written (8 KiB): the read answers from memory and says why.
    let out = under_file_size_limit(&repo, 8, "list");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("first memory"), "{stdout}");
    assert!(stderr.contains("no space left for the index"), "{stderr}");
    // A write is an answer too (it lands in git, or fails saying why), never a kill by signal.
    let out = under_file_size_limit(&repo, 8, "remember 'second memory'");
    assert!(out.status.code().is_some(), "killed: {out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{out:?}"
    );
}

#[test]
fn a_lost_or_damaged_memory_ref_is_named_with_what_restores_it_and_doctor_puts_it_back() {
    let repo = TestRepo::new();
    ok(&repo, &["remember", "first memory"]);
    ok(&repo, &["remember", "second memory"]);
    assert_eq!(memory_count(&repo), 2);
    let sound = json(&repo, &["doctor"]);
    assert_eq!(sound["state"], "sound", "{sound}");
    let ref_file = repo.path().join(".git/refs/lore/memory");
    for damage in ["damaged", "missing"] {
        match damage {
            "damaged" => std::fs::write(&ref_file, "garbage\n").unwrap(),
            _ => {
                repo.git(&["update-ref", "-d", "refs/lore/memory"]);
            }
        }
        if damage == "damaged" {
            // A ref git cannot read: reads refuse, naming what still knows the memories.
            fails(&repo, &["list"], None, 3, "lore doctor --restore");
            fails(&repo, &["status"], None, 3, "the index still knows commit");
        } else {
            // A missing ref: the read goes on (an empty store), the commit the index knew is
            // kept under refs/lore-lost/memory, and the user is told how to put it back.
            let out = run(&repo, &["list"], None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            assert!(stderr.contains("refs/lore-lost/memory"), "{stderr}");
            assert!(stderr.contains("lore doctor --restore"), "{stderr}");
            assert_eq!(memory_count(&repo), 0);
        }
        let found = json(&repo, &["doctor"]);
        assert_eq!(found["state"], damage, "{found}");
        assert_eq!(found["restore_points"][0]["memories"], 2, "{found}");
        let fixed = json(&repo, &["doctor", "--restore"]);
        assert!(fixed["restored"].is_string(), "{fixed}");
        assert_eq!(memory_count(&repo), 2);
        assert_eq!(json(&repo, &["doctor"])["state"], "sound");
    }
}

#[test]
fn a_markdown_file_that_never_closes_its_front_matter_is_skipped_and_said() {
    let repo = TestRepo::new();
    let dir = repo.path().join("notes-in");
    std::fs::create_dir_all(&dir).unwrap();
    // A plain note takes its namespace from its directory.
    std::fs::create_dir_all(dir.join("learnings")).unwrap();
    std::fs::write(
        dir.join("learnings/plain.md"),
        "A plain note, no front matter.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("open.md"),
        "---\nsummary: never closed\ntags: [a]\n\nthe body\n",
    )
    .unwrap();
    let huge: String = (0..20_000).map(|i| format!("- t{i}\n")).collect();
    std::fs::write(
        dir.join("huge.md"),
        format!("---\nsummary: huge\ntags:\n{huge}---\nbody\n"),
    )
    .unwrap();
    let report = json(&repo, &["import", "markdown", dir.to_str().unwrap()]);
    assert_eq!(report["written"], 1, "{report}");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("open.md") && warnings.contains("no closing"),
        "{report}"
    );
    assert!(
        warnings.contains("huge.md") && warnings.contains("the limit is"),
        "{report}"
    );
    let listed = json(&repo, &["list"]);
    assert_eq!(listed["memories"].as_array().unwrap().len(), 1, "{listed}");
    assert!(!listed.to_string().contains("never closed"), "{listed}");
}
