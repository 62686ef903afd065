//! Git's configuration and identity as the library composes them from a [`GitEnv`]: the same
//! values stock `git` reads under the equivalent environment, a placeholder identity reported
//! once, and a library that reads nothing of the user's own (a hostile `~/.gitconfig` in `HOME`
//! changes nothing).

// A test process reads its own settings (worker roles, case counts) from the environment;
// the library it tests does not.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use lore::{GitEnv, ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::{TEST_EMAIL, TEST_NAME, TestRepo};

fn remember(lore: &Lore, summary: &str) {
    lore.remember(
        &NewMemory {
            namespace: "learnings".into(),
            summary: summary.into(),
            ..NewMemory::default()
        },
        &WriteContext::default(),
    )
    .unwrap();
}

/// `git log -1` of lore's memory ref in `format`.
fn last_commit(repo: &TestRepo, format: &str) -> String {
    repo.git(&[
        "log",
        "-1",
        &format!("--format={format}"),
        "refs/lore/memory",
    ])
    .trim()
    .to_string()
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

#[test]
fn without_any_identity_the_placeholder_signs_and_is_reported_once() {
    let repo = TestRepo::new();
    repo.git(&["config", "--unset", "user.name"]);
    repo.git(&["config", "--unset", "user.email"]);
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    remember(&lore, "first lesson");
    remember(&lore, "second lesson");
    let warnings = lore.store().take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("no git identity"), "{warnings:?}");
    assert!(
        warnings[0].contains("lore <lore@localhost>"),
        "{warnings:?}"
    );
    remember(&lore, "third lesson");
    assert!(lore.store().take_warnings().is_empty(), "given once");
    assert_eq!(last_commit(&repo, "%an <%ae>"), "lore <lore@localhost>");
    let listed = lore.list(&ListFilter::default()).unwrap();
    assert!(
        listed
            .iter()
            .all(|m| m.author.as_deref() == Some("lore <lore@localhost>"))
    );
}

#[test]
fn identity_variables_sign_as_git_signs() {
    let repo = TestRepo::new();
    let env = GitEnv {
        author_name: Some("Env Author".into()),
        author_email: Some("env-author@example.com".into()),
        author_date: Some("1112911993 +0200".into()),
        committer_name: Some("Env Committer".into()),
        committer_email: Some("env-committer@example.com".into()),
        committer_date: Some("Fri, 08 Apr 2005 00:20:00 +0200".into()),
        ..GitEnv::repository_only()
    };
    let lore = Lore::new(Store::discover_with(&repo.path(), &env).unwrap());
    remember(&lore, "signed by the environment");
    assert!(lore.store().take_warnings().is_empty());
    let format = "%an|%ae|%at %ad|%cn|%ce|%ct %cd";
    let lore_signed = last_commit(&repo, format);
    // Stock git under the same variables.
    let out = repo
        .git_command(&["commit", "-q", "--allow-empty", "-m", "by git"])
        .env("GIT_AUTHOR_NAME", "Env Author")
        .env("GIT_AUTHOR_EMAIL", "env-author@example.com")
        .env("GIT_AUTHOR_DATE", "1112911993 +0200")
        .env("GIT_COMMITTER_NAME", "Env Committer")
        .env("GIT_COMMITTER_EMAIL", "env-committer@example.com")
        .env("GIT_COMMITTER_DATE", "Fri, 08 Apr 2005 00:20:00 +0200")
        .output()
        .unwrap();
    assert!(out.status.success());
    let git_signed = repo
        .git(&["log", "-1", &format!("--format={format}"), "HEAD"])
        .trim()
        .to_string();
    assert_eq!(lore_signed, git_signed);
    assert!(lore_signed.starts_with("Env Author|env-author@example.com|1112911993"));
}

/// What stock git reads for `key` with these configuration variables (`None`: unset).
fn git_config_get(
    repo: &TestRepo,
    vars: &[(&str, &Path)],
    nosystem: bool,
    key: &str,
) -> Option<String> {
    let mut cmd: Command = repo.git_command(&["config", "--get", key]);
    cmd.env_remove("GIT_CONFIG_NOSYSTEM");
    cmd.env_remove("GIT_CONFIG_GLOBAL");
    if nosystem {
        cmd.env("GIT_CONFIG_NOSYSTEM", "1");
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// An environment for the library, the same as variables for git, and whether
/// `GIT_CONFIG_NOSYSTEM` is set.
type Case<'a> = (GitEnv, Vec<(&'a str, &'a Path)>, bool);

#[test]
fn configuration_files_are_read_at_the_levels_git_reads_them() {
    let repo = TestRepo::new();
    let home = repo.home().join("elsewhere");
    let dir = repo.path().parent().unwrap().join("configs");
    let system = write(
        &dir.join("system"),
        "[lore]\n\tsecrets = warn\n[x]\n\ts = system\n",
    );
    let global = write(&dir.join("global"), "[lore]\n\tsecrets = block\n");
    write(
        &home.join(".gitconfig"),
        "[lore]\n\tsecrets = redact\n[x]\n\th = home\n",
    );
    let xdg = home.join("xdg");
    write(&xdg.join("git/config"), "[x]\n\th = xdg\n\tx = xdg\n");
    let dev_null = PathBuf::from("/dev/null");
    let cases: Vec<Case> = vec![
        (
            GitEnv {
                config_system: Some(system.clone()),
                home: Some(home.clone()),
                xdg_config_home: Some(xdg.clone()),
                ..GitEnv::default()
            },
            vec![
                ("GIT_CONFIG_SYSTEM", &system),
                ("HOME", &home),
                ("XDG_CONFIG_HOME", &xdg),
            ],
            false,
        ),
        (
            GitEnv {
                config_system: Some(system.clone()),
                config_global: Some(global.clone()),
                home: Some(home.clone()),
                ..GitEnv::default()
            },
            vec![
                ("GIT_CONFIG_SYSTEM", &system),
                ("GIT_CONFIG_GLOBAL", &global),
                ("HOME", &home),
            ],
            false,
        ),
        (
            GitEnv {
                config_system: Some(system.clone()),
                config_nosystem: true,
                home: Some(home.clone()),
                ..GitEnv::default()
            },
            vec![("GIT_CONFIG_SYSTEM", &system), ("HOME", &home)],
            true,
        ),
        (
            GitEnv {
                config_global: Some(dev_null.clone()),
                config_nosystem: true,
                home: Some(home.clone()),
                ..GitEnv::default()
            },
            vec![("GIT_CONFIG_GLOBAL", &dev_null), ("HOME", &home)],
            true,
        ),
    ];
    for (env, vars, nosystem) in cases {
        let store = Store::discover_with(&repo.path(), &env).unwrap();
        for key in ["lore.secrets", "x.s", "x.h", "x.x", "user.name"] {
            assert_eq!(
                store.config_string(key),
                git_config_get(&repo, &vars, nosystem, key),
                "{key} under {vars:?}"
            );
        }
        assert!(store.take_warnings().is_empty());
    }
}

#[test]
fn conditional_includes_are_reported_as_not_evaluated() {
    let repo = TestRepo::new();
    let dir = repo.path().parent().unwrap().join("configs");
    let global = write(
        &dir.join("global"),
        "[includeIf \"gitdir:~/work/\"]\n\tpath = work.gitconfig\n",
    );
    let env = GitEnv {
        config_global: Some(global),
        ..GitEnv::repository_only()
    };
    let store = Store::discover_with(&repo.path(), &env).unwrap();
    let warnings = store.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("includeif.gitdir:~/work/.path"),
        "{warnings:?}"
    );
}

#[test]
fn a_hostile_home_changes_nothing_the_library_does() {
    const WORKER: &str = "LORE_TEST_HOSTILE_HOME";
    if let Some(work) = std::env::var_os(WORKER) {
        // In a process whose HOME holds a hostile ~/.gitconfig.
        let lore = Lore::new(Store::discover(Path::new(&work)).unwrap());
        remember(&lore, "written under a hostile home");
        assert!(lore.store().take_warnings().is_empty());
        return;
    }
    let repo = TestRepo::new();
    let hostile = repo.path().parent().unwrap().join("hostile-home");
    write(
        &hostile.join(".gitconfig"),
        "[user]\n\tname = Hostile\n\temail = hostile@example.com\n\
         [lore]\n\tsecrets = not-a-policy\n\
         [include]\n\tpath = /nonexistent/hostile\n",
    );
    write(
        &hostile.join(".config/git/config"),
        "[user]\n\tname = Hostile XDG\n",
    );
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["a_hostile_home_changes_nothing_the_library_does", "--exact"])
        .env(WORKER, repo.path())
        .env("HOME", &hostile)
        .env("XDG_CONFIG_HOME", hostile.join(".config"))
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("GIT_CONFIG_NOSYSTEM")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the write failed under the hostile home: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        last_commit(&repo, "%an <%ae>|%cn <%ce>"),
        format!("{TEST_NAME} <{TEST_EMAIL}>|{TEST_NAME} <{TEST_EMAIL}>")
    );
}
