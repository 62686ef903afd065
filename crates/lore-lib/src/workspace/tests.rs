//! Tests of the workspace as a whole: branch names, and that what goes wrong surfaces (as an
//! error where the operation cannot be right, else as a warning from `take_warnings`).

use std::path::Path;

use git2::Oid;
use lore_testutils::TestRepo;

use super::commit::BranchFiles;
use super::log_md::NewStep;
use super::merge::merge_base;
use super::*;
use crate::secrets::SecretPolicy;
use crate::store::WriteContext;
use crate::store::{Edit, Message, RefWrite, Store};

fn store(repo: &TestRepo) -> Store {
    Store::discover(&repo.path()).unwrap()
}

fn text_step(text: &str) -> NewStep {
    NewStep {
        text: Some(text.into()),
        ..NewStep::default()
    }
}

fn init(ws: &Workspace<'_>) {
    ws.init("ship the parser", &[], &WriteContext::default())
        .unwrap();
}

fn warned(ws: &Workspace<'_>, needle: &str) -> bool {
    ws.take_warnings().iter().any(|w| w.contains(needle))
}

/// A commit on a context branch made outside lore: its tree is the tip's with `main.md`
/// replaced, its raw header and message as given.
fn foreign_commit(ws: &Workspace<'_>, branch: &str, roadmap: &[u8], header_time: i64, msg: &[u8]) {
    let repo = ws.store().repo();
    let tip = ws.tip(branch).unwrap().unwrap();
    let mut tree = repo
        .treebuilder(Some(&repo.find_commit(tip).unwrap().tree().unwrap()))
        .unwrap();
    tree.insert(ROADMAP_FILE, repo.blob(roadmap).unwrap(), 0o100644)
        .unwrap();
    let tree = tree.write().unwrap();
    let mut raw = format!(
        "tree {tree}\nparent {tip}\nauthor A <a@example.com> {header_time} +0000\n\
         committer A <a@example.com> {header_time} +0000\n\n"
    )
    .into_bytes();
    raw.extend_from_slice(msg);
    let commit = repo
        .odb()
        .unwrap()
        .write(git2::ObjectType::Commit, &raw)
        .unwrap();
    repo.reference(&branch_ref(branch), commit, true, "test")
        .unwrap();
}

#[test]
fn branch_names_are_checked() {
    for ok in ["main", "fix-db", "v1.2_x"] {
        check_branch_name(ok).unwrap();
    }
    for bad in ["", "-x", "a/b", "a..b", "x.lock", "a b", &"x".repeat(65)] {
        assert!(check_branch_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_current_branch_that_no_longer_exists_is_a_warning() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    ws.branch("spike", "try a lexer", None, true, &WriteContext::default())
        .unwrap();
    assert!(ws.take_warnings().is_empty());
    store
        .repo()
        .find_reference(&branch_ref("spike"))
        .unwrap()
        .delete()
        .unwrap();
    assert_eq!(ws.resolve(None).unwrap(), MAIN_BRANCH);
    let warnings = ws.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("\"spike\" no longer exists"),
        "{warnings:?}"
    );
    assert!(ws.take_warnings().is_empty(), "taking forgets");

    std::fs::write(store.common_dir().join("lore/ctx/HEAD"), "no/such..name\n").unwrap();
    assert_eq!(ws.resolve(None).unwrap(), MAIN_BRANCH);
    assert!(warned(&ws, "names no valid context branch"));
}

#[test]
fn unreadable_journal_lines_are_warned_when_read_and_when_a_commit_drops_them() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    ws.log(None, text_step("read the grammar")).unwrap();
    let journal = ws.journal(MAIN_BRANCH);
    let mut text = std::fs::read_to_string(journal.path()).unwrap();
    text.push_str("{\"not a step\n");
    std::fs::write(journal.path(), text).unwrap();
    ws.log(None, text_step("wrote the tokenizer")).unwrap();

    let steps = ws.steps(MAIN_BRANCH, true).unwrap();
    assert_eq!(steps.len(), 2);
    assert!(warned(&ws, "1 line(s) of branch main's journal"));
    ws.commit(None, "tokenizer", None, None, &WriteContext::default())
        .unwrap();
    assert!(warned(&ws, "were dropped by the commit"));
}

#[test]
fn merging_branches_without_shared_history_warns_and_merges_against_an_empty_base() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    let roadmap = ws.read_context(None).unwrap();
    let meta = BranchMeta {
        name: "imported".into(),
        purpose: "work done elsewhere".into(),
        parent: None,
        created: jiff::Timestamp::now(),
        summary: String::new(),
        commits: 0,
        segments: 0,
        merged: Vec::new(),
        last: None,
    };
    let files = BranchFiles {
        roadmap,
        commit_md: String::new(),
        metadata: "tool: cargo\n".into(),
        steps: Vec::new(),
    };
    ws.write_branch(&meta, files, false, &WriteContext::default())
        .unwrap();
    let outcome = ws
        .merge(
            "imported",
            None,
            &Resolution::Refuse,
            &WriteContext::default(),
        )
        .unwrap();
    assert!(outcome.commit.is_some());
    assert!(warned(&ws, "imported and main share no history"));
    let metadata = ws.metadata_get(None, Some("tool")).unwrap();
    assert_eq!(metadata.as_str(), Some("cargo"));
}

#[test]
fn merge_base_failures_other_than_no_shared_history_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let sig = git2::Signature::now("A", "a@example.com").unwrap();
    let tree = repo
        .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
        .unwrap();
    let commit = |msg: &str, parents: &[Oid]| -> Oid {
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(None, &sig, &sig, msg, &tree, &parents).unwrap()
    };
    let root = commit("root", &[]);
    let a = commit("a", &[root]);
    let b = commit("b", &[root]);
    let other_root = commit("unrelated", &[]);
    assert_eq!(merge_base(&repo, a, b).unwrap(), Some(root));
    assert_eq!(merge_base(&repo, a, other_root).unwrap(), None);

    // The common ancestor's object is gone: that is damage, not "no shared history".
    let hex = root.to_string();
    std::fs::remove_file(repo.path().join("objects").join(&hex[..2]).join(&hex[2..])).unwrap();
    let repo = git2::Repository::open(dir.path()).unwrap();
    assert!(merge_base(&repo, a, b).is_err());
}

#[test]
fn refs_that_are_not_context_branches_are_warned_about() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    let tip = ws.tip(MAIN_BRANCH).unwrap().unwrap();
    store
        .repo()
        .reference("refs/lore/ctx/nested/name", tip, false, "test")
        .unwrap();
    assert_eq!(ws.branches().unwrap(), vec![MAIN_BRANCH.to_string()]);
    assert!(warned(
        &ws,
        "refs/lore/ctx/nested/name is not a context branch"
    ));
}

#[test]
fn a_branch_listing_that_fails_inside_an_error_message_is_a_warning() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    // A ref under the context prefix whose commit is no context commit, and a damaged
    // packed-refs file: the branch resolves (its loose ref reads), but listing the branches for
    // the error message fails.
    let code = store.head_commit().unwrap();
    store
        .repo()
        .reference(&branch_ref("code"), code, false, "test")
        .unwrap();
    // libgit2 reports a damaged packed-refs file once (until it changes again), so nothing may
    // list the refs before the operation under test.
    std::fs::write(store.repo().path().join("packed-refs"), "damaged\n").unwrap();
    let err = ws
        .commit(Some("code"), "work", None, None, &WriteContext::default())
        .unwrap_err();
    assert!(err.to_string().contains("\"code\""), "{err}");
    assert!(warned(&ws, "could not list the context branches"));
}

#[test]
fn files_lore_did_not_write_as_utf8_are_errors_not_replaced_text() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    store
        .transact_ref(&branch_ref(MAIN_BRANCH), |_| {
            let edit = Edit::Upsert {
                path: ROADMAP_FILE.into(),
                content: b"# Roadmap \xff\xfe\n".to_vec(),
            };
            let message = Message {
                subject: "damage".into(),
                body: None,
                trailers: Vec::new(),
            };
            Ok((RefWrite::on_tip(vec![edit], message), ()))
        })
        .unwrap();
    let err = ws.read_context(None).unwrap_err();
    assert!(err.to_string().contains("main.md"), "{err}");
    assert!(err.to_string().contains("not UTF-8"), "{err}");
}

#[test]
fn context_history_refuses_commit_times_and_subjects_it_cannot_read() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    // Past jiff's range (year 9999).
    foreign_commit(
        &ws,
        MAIN_BRANCH,
        b"# far future\n",
        300_000_000_000,
        b"later\n",
    );
    let err = ws.context_history(None).unwrap_err();
    assert!(
        err.to_string().contains("the time of context commit"),
        "{err}"
    );

    let repo2 = TestRepo::new();
    let store2 = Store::discover(&repo2.path()).unwrap();
    let ws2 = Workspace::new(&store2);
    init(&ws2);
    foreign_commit(
        &ws2,
        MAIN_BRANCH,
        b"# new\n",
        1_700_000_000,
        b"bad \xff subject\n",
    );
    assert!(ws2.context_history(None).is_err());
}

#[test]
fn importing_files_and_names_that_are_not_utf8_warns() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    let dir = tempfile::tempdir().unwrap();
    let branch = dir.path().join("branches").join("main");
    std::fs::create_dir_all(&branch).unwrap();
    std::fs::write(branch.join("log.md"), b"## one\nread caf\xe9 menu\n").unwrap();
    std::fs::create_dir_all(
        dir.path()
            .join("branches")
            .join(std::ffi::OsStr::from_bytes(b"bad\xffname")),
    )
    .unwrap();
    let report = ws
        .import_gcc(dir.path(), false, &WriteContext::default())
        .unwrap();
    assert_eq!(report.branches, vec!["main".to_string()]);
    let warnings = ws.take_warnings();
    let log_md = Path::new("main").join("log.md");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&log_md.display().to_string()) && w.contains("not UTF-8")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("must be UTF-8")),
        "{warnings:?}"
    );
    let steps = ws.steps(MAIN_BRANCH, false).unwrap();
    assert!(
        steps[0]
            .step
            .text
            .as_deref()
            .unwrap()
            .contains("caf\u{fffd} menu")
    );
}

#[test]
fn a_secret_policy_given_after_a_write_still_applies() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    // The first write read the configured policy (redact).
    let ws = ws.with_secret_policy(Some(SecretPolicy::Block));
    let err = ws
        .log(None, text_step("key AKIAQ7RZ3WJ5TXNB2KDM here"))
        .unwrap_err();
    assert!(err.to_string().contains("aws-access-key-id"), "{err}");
}

#[test]
fn schemas_name_every_field_that_is_serialized() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    ws.log(None, text_step("read the grammar")).unwrap();
    let keys = |value: serde_json::Value| -> Vec<String> {
        value.as_object().unwrap().keys().cloned().collect()
    };
    let properties =
        |schema: schemars::Schema| -> Vec<String> { keys(schema.as_value()["properties"].clone()) };
    let status = serde_json::to_value(ws.status(None).unwrap()).unwrap();
    let described = properties(schemars::schema_for!(Status));
    for key in keys(status.clone()) {
        assert!(described.contains(&key), "{key} not in {described:?}");
    }
    let step = status["uncommitted"][0].clone();
    let described = properties(schemars::schema_for!(Step));
    for key in keys(step) {
        assert!(described.contains(&key), "{key} not in {described:?}");
    }
}

#[test]
fn secrets_in_metadata_step_labels_and_imported_branch_files_are_redacted() {
    let slack = "xoxb-123456789012-abcdefghijklmnopqrstuvwx";
    let github = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij";
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    init(&ws);
    let value: serde_norway::Value =
        serde_norway::from_str(&format!("{{env: {{SLACK_TOKEN: {slack}}}}}")).unwrap();
    ws.metadata_set(None, "config", Some(value), &WriteContext::default())
        .unwrap();
    let step = NewStep {
        tool: Some(format!("curl -H {github}")),
        entities: vec![slack.into()],
        text: Some("called the api".into()),
        ..NewStep::default()
    };
    ws.log(None, step).unwrap();
    ws.commit(None, "first", None, None, &WriteContext::default())
        .unwrap();
    let dir = repo.path().join("exported");
    ws.export_gcc(&dir).unwrap();
    let branch_dir = dir.join("branches").join(MAIN_BRANCH);
    let branch_file = branch_dir.join(BRANCH_FILE);
    let text = std::fs::read_to_string(&branch_file).unwrap();
    let text = text.replace(
        "purpose: ship the parser",
        &format!("purpose: ship with {github}"),
    );
    std::fs::write(&branch_file, text).unwrap();
    std::fs::write(
        branch_dir.join(METADATA_FILE),
        format!("deploy:\n  token: {slack}\n"),
    )
    .unwrap();
    ws.import_gcc(&dir, true, &WriteContext::default()).unwrap();
    let everything = repo.git(&["log", "-p", "--all"]);
    assert!(everything.contains("[REDACTED:"), "{everything}");
    let tip = repo.git(&["ls-tree", "-r", "refs/lore/ctx/main"]);
    for line in tip.lines() {
        let blob = line.split_whitespace().nth(2).unwrap();
        let content = repo.git(&["cat-file", "-p", blob]);
        assert!(
            !content.contains(slack) && !content.contains(github),
            "{line}: {content}"
        );
    }
}

#[test]
fn merges_state_each_contribution_once_in_the_summary() {
    let repo = TestRepo::new();
    let store = store(&repo);
    let ws = Workspace::new(&store);
    let ctx = WriteContext::default();
    init(&ws);
    ws.commit(None, "Found the N+1 query.", None, None, &ctx)
        .unwrap();
    for (branch, work) in [
        ("batch", "Batched the loads."),
        ("cache", "Cached the results."),
    ] {
        ws.branch(branch, "speed up the page", Some(MAIN_BRANCH), true, &ctx)
            .unwrap();
        ws.commit(None, work, None, None, &ctx).unwrap();
        ws.switch(MAIN_BRANCH).unwrap();
        ws.merge(branch, None, &Resolution::Refuse, &ctx).unwrap();
    }
    let summary = ws.meta(MAIN_BRANCH).unwrap().summary;
    for sentence in [
        "Found the N+1 query",
        "Batched the loads",
        "Cached the results",
    ] {
        assert_eq!(summary.matches(sentence).count(), 1, "{summary}");
    }
}
