//! The `lore` binary follows git's own environment: `GIT_AUTHOR_*`/`GIT_COMMITTER_*` sign its
//! commits exactly as they sign `git commit`'s, `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` and
//! `GIT_CONFIG_NOSYSTEM` choose the files its configuration (identity, `lore.secrets`) comes
//! from, and the hermetic test environment keeps a hostile `~/.gitconfig` out.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{lore_command, stdout_of};
use lore_testutils::{TEST_EMAIL, TEST_NAME, TestRepo};

/// The signature fields compared between lore's commit and git's.
const SIGNATURE: &str = "--format=%an|%ae|%at|%cn|%ce";

/// `lore remember SUMMARY` in the repository with extra variables set (and some removed).
fn lore_with(repo: &TestRepo, vars: &[(&str, &str)], unset: &[&str], args: &[&str]) -> Command {
    let mut cmd = lore_command(&repo.path(), &repo.home(), args);
    for name in unset {
        cmd.env_remove(name);
    }
    cmd.envs(vars.iter().copied());
    cmd
}

/// `git commit --allow-empty` on the user's branch under the same variables.
fn git_commit_with(repo: &TestRepo, vars: &[(&str, &str)], unset: &[&str]) -> String {
    let mut cmd = repo.git_command(&["commit", "-q", "--allow-empty", "-m", "by git"]);
    for name in unset {
        cmd.env_remove(name);
    }
    cmd.envs(vars.iter().copied());
    stdout_of(cmd.output().unwrap(), "git commit");
    repo.git(&["log", "-1", SIGNATURE, "HEAD"])
}

fn lore_signature(repo: &TestRepo) -> String {
    repo.git(&["log", "-1", SIGNATURE, "refs/lore/memory"])
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

#[test]
fn identity_variables_sign_lores_commits_as_they_sign_gits() {
    let repo = TestRepo::new();
    let vars = [
        ("GIT_AUTHOR_NAME", "Session Agent"),
        ("GIT_AUTHOR_EMAIL", "agent@example.com"),
        ("GIT_AUTHOR_DATE", "1700000000 +0100"),
        ("GIT_COMMITTER_NAME", "Session Runner"),
        ("GIT_COMMITTER_EMAIL", "runner@example.com"),
        ("GIT_COMMITTER_DATE", "1700000100 +0100"),
    ];
    let out = lore_with(&repo, &vars, &[], &["remember", "signed by the session"])
        .output()
        .unwrap();
    stdout_of(out, "lore remember");
    let by_lore = lore_signature(&repo);
    assert_eq!(by_lore, git_commit_with(&repo, &vars, &[]));
    assert_eq!(
        by_lore.trim(),
        "Session Agent|agent@example.com|1700000000|Session Runner|runner@example.com"
    );
    // The memory's author is the commit's.
    let out = lore_with(&repo, &vars, &[], &["--json", "list"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&stdout_of(out, "lore list")).unwrap();
    assert_eq!(
        listed["memories"][0]["author"],
        "Session Agent <agent@example.com>"
    );
}

#[test]
fn git_config_global_gives_the_identity_when_the_repository_has_none() {
    let repo = TestRepo::new();
    repo.git(&["config", "--unset", "user.name"]);
    repo.git(&["config", "--unset", "user.email"]);
    let global = write(
        &repo.path().parent().unwrap().join("configs/global"),
        "[user]\n\tname = Global Person\n\temail = global@example.com\n",
    );
    let global = global.display().to_string();
    let vars = [("GIT_CONFIG_GLOBAL", global.as_str())];
    let out = lore_with(
        &repo,
        &vars,
        &[],
        &["remember", "signed from the global file"],
    )
    .output()
    .unwrap();
    stdout_of(out, "lore remember");
    let by_lore = lore_signature(&repo);
    let by_git = git_commit_with(&repo, &vars, &[]);
    let fields = |s: &str| -> Vec<String> {
        s.trim()
            .split('|')
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, f)| f.to_string())
            .collect()
    };
    assert_eq!(fields(&by_lore), fields(&by_git));
    assert_eq!(
        fields(&by_lore),
        [
            "Global Person",
            "global@example.com",
            "Global Person",
            "global@example.com"
        ]
    );
}

/// A fabricated access key id in AWS's format (the documented example is not a finding).
const FAKE_SECRET: &str = "AKIAQ7RZ3WJ5TXNB2KDM";

/// Whether `lore remember` with a secret in it is refused under the given variables, and what
/// `git config --get lore.secrets` says under them.
fn policy_under(
    repo: &TestRepo,
    case: &str,
    vars: &[(&str, &str)],
    unset: &[&str],
) -> (bool, String) {
    let summary = format!("{case}: the deploy key is {FAKE_SECRET}");
    let out = lore_with(repo, vars, unset, &["remember", &summary])
        .output()
        .unwrap();
    let mut git = repo.git_command(&["config", "--get", "lore.secrets"]);
    for name in unset {
        git.env_remove(name);
    }
    git.envs(vars.iter().copied());
    let said = String::from_utf8_lossy(&git.output().unwrap().stdout)
        .trim()
        .to_string();
    (!out.status.success(), said)
}

#[test]
fn the_secret_policy_comes_from_the_files_git_reads() {
    let repo = TestRepo::new();
    let dir = repo.path().parent().unwrap().join("configs");
    let system = write(&dir.join("system"), "[lore]\n\tsecrets = block\n");
    let global = write(&dir.join("global"), "[lore]\n\tsecrets = redact\n");
    let system = system.display().to_string();
    let global = global.display().to_string();
    let hermetic_global = lore_testutils::hermetic_gitconfig(&repo.home());
    let hermetic_global = hermetic_global.display().to_string();

    // The system file counts once GIT_CONFIG_NOSYSTEM is unset.
    let with_system = [
        ("GIT_CONFIG_SYSTEM", system.as_str()),
        ("GIT_CONFIG_GLOBAL", hermetic_global.as_str()),
    ];
    assert_eq!(
        policy_under(&repo, "system", &with_system, &["GIT_CONFIG_NOSYSTEM"]),
        (true, "block".to_string()),
        "the system file's block refuses the secret"
    );
    // GIT_CONFIG_NOSYSTEM leaves it out.
    let nosystem = [
        ("GIT_CONFIG_SYSTEM", system.as_str()),
        ("GIT_CONFIG_NOSYSTEM", "1"),
    ];
    assert_eq!(
        policy_under(&repo, "no system", &nosystem, &[]),
        (false, String::new()),
        "without the system file the default (redact) stores it redacted"
    );
    // The global file overrides the system file.
    let both = [
        ("GIT_CONFIG_SYSTEM", system.as_str()),
        ("GIT_CONFIG_GLOBAL", global.as_str()),
    ];
    assert_eq!(
        policy_under(&repo, "global over system", &both, &["GIT_CONFIG_NOSYSTEM"]),
        (false, "redact".to_string())
    );
    let stored = repo.git(&["grep", "-h", "deploy key", "refs/lore/memory"]);
    assert_eq!(stored.matches("the deploy key is").count(), 2, "{stored}");
    assert!(!stored.contains(FAKE_SECRET), "{stored}");
}

#[test]
fn a_hostile_home_gitconfig_changes_nothing_under_the_hermetic_environment() {
    let repo = TestRepo::new();
    repo.git(&["config", "--unset", "user.name"]);
    repo.git(&["config", "--unset", "user.email"]);
    write(
        &repo.home().join(".gitconfig"),
        "[user]\n\tname = Hostile\n\temail = hostile@example.com\n[lore]\n\tsecrets = bogus\n",
    );
    write(
        &repo.home().join(".config/git/config"),
        "[user]\n\tname = Hostile XDG\n",
    );
    let out = lore_command(&repo.path(), &repo.home(), &["remember", "a quiet lesson"])
        .output()
        .unwrap();
    stdout_of(out, "lore remember");
    assert_eq!(
        lore_signature(&repo).trim().split('|').collect::<Vec<_>>()[..2],
        [TEST_NAME, TEST_EMAIL]
    );
}
