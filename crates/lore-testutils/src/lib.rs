//! Test helpers: hermetic temporary git repositories and the `git` CLI run inside them.

mod fake_embedder;

pub use fake_embedder::FakeEmbedder;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Environment that keeps git away from the machine's and user's configuration.
pub fn hermetic_env(home: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME",
            home.join(".local/share").display().to_string(),
        ),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
        ("GIT_AUTHOR_NAME", "Test Author".into()),
        ("GIT_AUTHOR_EMAIL", "author@example.com".into()),
        ("GIT_COMMITTER_NAME", "Test Author".into()),
        ("GIT_COMMITTER_EMAIL", "author@example.com".into()),
    ]
}

/// A git repository in a temporary directory, with a fixed identity and one commit on main.
pub struct TestRepo {
    dir: tempfile::TempDir,
}

impl TestRepo {
    /// A fresh repository with one commit (`README.md`).
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("creating a temp dir");
        std::fs::create_dir_all(dir.path().join("home")).expect("creating home");
        std::fs::create_dir_all(dir.path().join("work")).expect("creating work");
        let repo = TestRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Test Author"]);
        repo.git(&["config", "user.email", "author@example.com"]);
        repo.write("README.md", "# test project\n");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    /// The work tree.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// A home directory for processes run against this repository.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Writes a file in the work tree.
    pub fn write(&self, rel: &str, content: &str) {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("creating dirs");
        }
        std::fs::write(path, content).expect("writing a file");
    }

    /// A `git` command in the work tree with the hermetic environment.
    pub fn git_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(self.path());
        for (k, v) in hermetic_env(&self.home()) {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs git and returns its stdout; panics (with stderr) if it fails.
    pub fn git(&self, args: &[&str]) -> String {
        let out: Output = self.git_command(args).output().expect("running git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}
