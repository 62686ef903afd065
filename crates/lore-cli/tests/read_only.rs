//! A repository this process may not write (a read-only `.git`, another user's clone): every
//! read works, from a present, stale or missing index, and nothing under `.git` changes.
//!
//! As root, permissions do not restrict, so the repository is handed to `nobody` and lore runs
//! as that user through `setpriv`; otherwise the files lose their write bits.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{lore_command, ok};
use lore_testutils::TestRepo;

const NOBODY: &str = "65534";

fn running_as_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("running id");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// The repository's directory and home, made unwritable for the lore processes [`read`] runs.
struct ReadOnly<'a> {
    repo: &'a TestRepo,
    root: PathBuf,
    as_nobody: bool,
}

fn shell(args: &[&str]) {
    let status = Command::new(args[0])
        .args(&args[1..])
        .status()
        .expect(args[0]);
    assert!(status.success(), "{args:?} failed");
}

impl<'a> ReadOnly<'a> {
    fn new(repo: &'a TestRepo) -> ReadOnly<'a> {
        let root = repo.path().parent().expect("temp root").to_path_buf();
        let as_nobody = running_as_root();
        let root_arg = root.display().to_string();
        if as_nobody {
            shell(&["chown", "-R", &format!("{NOBODY}:{NOBODY}"), &root_arg]);
        }
        shell(&["chmod", "-R", "a-w", &root_arg]);
        ReadOnly {
            repo,
            root,
            as_nobody,
        }
    }

    fn read(&self, args: &[&str]) -> Output {
        let lore = lore_command(&self.repo.path(), &self.repo.home(), args);
        let mut cmd = if self.as_nobody {
            let mut cmd = Command::new("setpriv");
            cmd.args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "--",
            ]);
            cmd.arg(lore.get_program()).args(lore.get_args());
            for (name, value) in lore.get_envs() {
                match value {
                    Some(v) => cmd.env(name, v),
                    None => cmd.env_remove(name),
                };
            }
            cmd.current_dir(self.repo.path());
            cmd
        } else {
            lore
        };
        cmd.output().expect("running lore")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.read(args);
        assert!(
            out.status.success(),
            "lore {args:?} failed on a read-only repository: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        // Give the files back so the temporary directory can be removed.
        let root = self.root.display().to_string();
        let _ = Command::new("chmod").args(["-R", "u+w", &root]).status();
        if self.as_nobody {
            let _ = Command::new("chown").args(["-R", "0:0", &root]).status();
        }
    }
}

/// Every file under `dir` with its length and modification time.
fn files(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let entry = entry.expect("entry");
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                out.insert(entry.path(), (meta.len(), meta.modified().expect("mtime")));
            }
        }
    }
    out
}

fn remember(repo: &TestRepo, summary: &str) -> String {
    ok(repo, &["remember", "-n", "decisions", summary, "-b", "why"])
        .split_whitespace()
        .find(|w| w.len() == 12 && w.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_string)
        .unwrap_or_default()
}

#[test]
fn every_read_works_on_a_repository_this_process_may_not_write() {
    let repo = TestRepo::new();
    remember(&repo, "sqlite index for embedded recall");
    ok(&repo, &["ctx", "init", "--goal", "ship read-only recall"]);
    ok(&repo, &["ctx", "commit", "chose sqlite for the index"]);
    ok(
        &repo,
        &["think", "add", "--in", "s1", "try an in-memory copy"],
    );
    // The index file is left one write behind: the last memory is only in the refs.
    let index = repo.path().join(".git/lore/index.sqlite3");
    ok(&repo, &["reindex"]);
    let saved = std::fs::read(&index).unwrap();
    remember(&repo, "bloom filters for the novelty check");
    ok(&repo, &["status"]);
    std::fs::write(&index, &saved).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(repo.path().join(format!(".git/lore/index.sqlite3{suffix}")));
    }

    let git_dir = repo.path().join(".git");
    let before = files(&git_dir);
    {
        let ro = ReadOnly::new(&repo);
        for (words, expected) in [
            ("sqlite", "sqlite index for embedded recall"),
            ("bloom", "bloom filters for the novelty check"),
        ] {
            let out = ro.ok(&["recall", words]);
            assert!(out.contains(expected), "recall {words}: {out}");
        }
        assert!(ro.ok(&["list"]).contains("bloom filters"));
        assert!(ro.ok(&["context"]).contains("bloom filters"));
        assert!(ro.ok(&["status"]).contains("memories: 2"));
        assert!(
            ro.ok(&["ctx", "show"])
                .contains("chose sqlite for the index")
        );
        assert!(
            ro.ok(&["think", "search", "memory"])
                .contains("in-memory copy")
        );
        ro.ok(&["verify"]);

        // A write says why it cannot be done, and changes nothing.
        let out = ro.read(&["remember", "-n", "decisions", "not stored"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
            "{out:?}"
        );

        // With no index file at all, reads build one in memory.
        drop(ro);
        std::fs::remove_file(&index).unwrap();
        let before_missing = files(&git_dir);
        let ro = ReadOnly::new(&repo);
        let out = ro.ok(&["recall", "bloom"]);
        assert!(out.contains("bloom filters"), "{out}");
        assert!(
            ro.ok(&["think", "search", "memory"])
                .contains("in-memory copy")
        );
        drop(ro);
        assert_eq!(files(&git_dir), before_missing, "reads changed .git");
    }
    let mut after = files(&git_dir);
    after.insert(index.clone(), before[&index]);
    assert_eq!(after, before, "reads changed .git");
}
