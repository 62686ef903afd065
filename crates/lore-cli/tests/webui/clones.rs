//! Two clones of one store and a bare remote between them, for the web UI's pages about what
//! sync did: the test's repository, and another person's clone of the same remote.

use std::path::{Path, PathBuf};

use lore_testutils::{TestRepo, git_in};

use super::common::lore_command;

/// Another person's clone of the test repository's remote.
pub struct OtherClone {
    pub dir: PathBuf,
    home: PathBuf,
}

/// The other person's git identity, as lore credits their versions.
pub const OTHER: &str = "Other Person <other@example.com>";

impl OtherClone {
    /// Gives `repo` a bare remote `origin`, syncs to it, and clones that remote as another
    /// person's ([`OTHER`]), synced too.
    pub fn of(repo: &TestRepo) -> OtherClone {
        let home = repo.home();
        let central = home.join("central.git");
        git_in(
            &home,
            &home,
            &["init", "-q", "--bare", central.to_str().unwrap()],
        );
        repo.git(&["remote", "add", "origin", central.to_str().unwrap()]);
        sync(repo);
        let dir = home.join("other");
        git_in(
            &home,
            &home,
            &[
                "clone",
                "-q",
                central.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        git_in(&dir, &home, &["config", "user.name", "Other Person"]);
        git_in(&dir, &home, &["config", "user.email", "other@example.com"]);
        let other = OtherClone { dir, home };
        other.lore(&["sync"]);
        other
    }

    /// Runs lore in the other clone; fails the test if it fails.
    pub fn lore(&self, args: &[&str]) {
        let out = lore_command(&self.dir, &self.home, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} in the other clone: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The tip of the other clone's memory chain.
    pub fn tip(&self) -> String {
        memory_tip(&self.dir, &self.home)
    }
}

/// `lore sync` in the test repository.
pub fn sync(repo: &TestRepo) {
    super::common::ok(repo, &["sync"]);
}

/// The tip of a clone's memory chain.
pub fn memory_tip(dir: &Path, home: &Path) -> String {
    git_in(dir, home, &["rev-parse", "refs/lore/memory"])
}

/// How many parents a commit has.
pub fn parents(repo: &TestRepo, commit: &str) -> usize {
    repo.git(&["rev-list", "--parents", "-n", "1", commit])
        .split_whitespace()
        .count()
        - 1
}
