//! Test helpers: hermetic temporary git repositories and the `git` CLI run inside them.

mod fake_embedder;

pub use fake_embedder::FakeEmbedder;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The identity of every hermetic git and lore process.
pub const TEST_NAME: &str = "Test Author";
/// The email of that identity.
pub const TEST_EMAIL: &str = "author@example.com";

/// Writes (if needed) the user-level git configuration of the hermetic environment rooted at
/// `home`: the fixed identity and nothing else. It lives apart from `home/.gitconfig`, so a
/// test may put a hostile file there and show that nothing reads it.
pub fn hermetic_gitconfig(home: &Path) -> PathBuf {
    let dir = home.join(".hermetic");
    let path = dir.join("gitconfig");
    if !path.exists() {
        std::fs::create_dir_all(&dir).expect("creating the hermetic config directory");
        let text = format!("[user]\n\tname = {TEST_NAME}\n\temail = {TEST_EMAIL}\n");
        // Written under a name of its own and renamed, so parallel tests never read half.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!("gitconfig.{}-{n}.tmp", std::process::id()));
        std::fs::write(&tmp, text).expect("writing the hermetic config");
        std::fs::rename(&tmp, &path).expect("placing the hermetic config");
    }
    path
}

/// Environment that keeps git and lore away from the machine's and the user's configuration:
/// no system file, the user-level file [`hermetic_gitconfig`] (a fixed identity), `HOME` and the
/// XDG directories inside `home`, and no identity variables (so the configuration decides).
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
        (
            "GIT_CONFIG_GLOBAL",
            hermetic_gitconfig(home).display().to_string(),
        ),
    ]
}

/// Variables of the caller's environment that would change what git or lore do; hermetic
/// commands remove them.
pub const FOREIGN_GIT_VARIABLES: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
];

/// Makes `cmd` hermetic: removes [`FOREIGN_GIT_VARIABLES`] and sets [`hermetic_env`].
pub fn make_hermetic(cmd: &mut Command, home: &Path) {
    for name in FOREIGN_GIT_VARIABLES {
        cmd.env_remove(name);
    }
    cmd.envs(hermetic_env(home));
}

/// Runs git in `dir` with the hermetic environment rooted at `home`; panics (with stderr) if it
/// fails. Returns stdout, trimmed.
pub fn git_in(dir: &Path, home: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(dir);
    make_hermetic(&mut cmd, home);
    let out = cmd.output().expect("running git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
        // In the repository too: a store opened by the library alone reads no user-level file.
        repo.git(&["config", "user.name", TEST_NAME]);
        repo.git(&["config", "user.email", TEST_EMAIL]);
        repo.write("README.md", "# test project\n");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    /// The work tree.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// A home directory for processes run against this repository (see [`hermetic_env`]).
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
        make_hermetic(&mut cmd, &self.home());
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

    /// Commits, moving no ref, the tree of `parent` changed by `edits` (each the arguments of
    /// one `git update-index` run on a scratch index, the work tree's index untouched), with
    /// `message`; returns the new commit's id. A hand edit, as a user with stock git makes it.
    pub fn commit_edited(&self, parent: &str, edits: &[&[&str]], message: &str) -> String {
        let index = self.home().join("scratch-index");
        let git = |args: &[&str]| {
            let out = self
                .git_command(args)
                .env("GIT_INDEX_FILE", &index)
                .output()
                .expect("running git");
            assert!(
                out.status.success(),
                "git {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["read-tree", parent]);
        for edit in edits {
            let mut args = vec!["update-index"];
            args.extend_from_slice(edit);
            git(&args);
        }
        let tree = git(&["write-tree"]);
        git(&["commit-tree", &tree, "-p", parent, "-m", message])
    }
}

/// The shortest of three runs of `f`: a timing with the least of the machine's noise in it.
pub fn best_of_three(mut f: impl FnMut()) -> std::time::Duration {
    (0..3)
        .map(|_| {
            let start = std::time::Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .expect("three runs")
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

/// How many cases a property test draws: `default`, or `PROPTEST_CASES` when set (to run many
/// more). The cases come from a fixed seed, so a CI run is reproducible.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every file under `dir`, recursively, in no particular order.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, recursively, in no particular order: for tests that read the
/// project's own sources.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = files(dir);
    out.retain(|path| path.extension().is_some_and(|e| e == "rs"));
    out
}

/// Rewrites the index's `record` column as schemas up to 10 wrote it (each memory whole as JSON,
/// but for its body): for tests that make an index of an earlier schema.
pub fn write_records_whole(conn: &rusqlite::Connection, memories: &[lore::Memory]) {
    for memory in memories {
        let whole = lore::Memory {
            body: String::new(),
            ..memory.clone()
        };
        let json = serde_json::to_string(&whole).expect("a memory serializes");
        let rows = conn
            .execute(
                "UPDATE memories SET record = ?2 WHERE id = ?1",
                (memory.id.as_str(), json),
            )
            .expect("the index's memories table is writable");
        assert_eq!(rows, 1, "{} is indexed once", memory.id);
    }
}

/// The FTS5 table the index kept up to schema 11 beside its BM25 postings, filled with every
/// memory's text, and the delete trigger that kept it: tests that make an index of an earlier
/// schema put them back (first: the schema-9 triggers write into it).
pub const FULL_TEXT_TABLE_OF_SCHEMA_11: &str = "
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        summary, body, tags,
        content = 'memories', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
    DROP TRIGGER memories_ad;
    CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, summary, body, tags)
        VALUES ('delete', old.rowid, old.summary, old.body, old.tags);
        DELETE FROM chunks WHERE memory = old.rowid;
        DELETE FROM mentions WHERE memory = old.rowid;
    END;";

/// The triggers that indexed a memory's text and counted it on insert in the index's schemas 8
/// and 9 (schema 10 does that work in `Writer::insert_memory`): tests that make an index of an
/// earlier schema put them back, after [`FULL_TEXT_TABLE_OF_SCHEMA_11`].
pub const INDEX_INSERT_TRIGGERS_OF_SCHEMA_9: &str = "
    CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, summary, body, tags)
        VALUES (new.rowid, new.summary, new.body, new.tags);
    END;
    CREATE TRIGGER memories_count_ai AFTER INSERT ON memories BEGIN
        INSERT INTO counts (namespace, status, n) VALUES (new.namespace, new.status, 1)
        ON CONFLICT (namespace, status) DO UPDATE SET n = n + 1;
    END;";
