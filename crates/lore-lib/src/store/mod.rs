//! The git side of lore: finding the repository, reading lore's tree, and the one write path.
//!
//! Every mutation goes through [`Store::transact`]: a closure looks at the current tip and returns
//! edits; they become one commit, and the ref moves by compare-and-swap. A writer that loses the
//! race runs its closure again on the new tip, so concurrent writers never lose a record and no
//! lock is held on the repository between attempts. Nothing here touches the user's branches,
//! index or working tree.

pub(crate) mod git_cli;
pub mod git_env;
mod guard;
mod history;
pub mod layout;
pub mod locks;
mod lost;
mod open;
mod pack;
pub mod purge;
pub mod purged;
pub mod remotes;
mod write_context;

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{ErrorCode, FileMode, ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::retry::Backoff;
pub use git_env::GitEnv;
pub use history::FileVersion;
pub(crate) use history::blob_at;
pub use layout::{LORE_REF_PREFIX, MEMORY_REF};
pub use lost::ChainHead;
pub(crate) use pack::pack_sizes;
pub use write_context::WriteContext;

/// The store format version written to `lore.yaml`.
pub const STORE_FORMAT: u32 = 1;
/// How long a writer keeps retrying a lost compare-and-swap before giving up.
const MAX_RETRY_TIME: Duration = Duration::from_secs(120);

/// Which kind of store this is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// lore's refs in a project's repository.
    Repository,
    /// A personal store (a bare repository of lore's own, used outside any project).
    Personal,
}

/// The contents of `lore.yaml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoreMeta {
    /// The store format version.
    pub format: u32,
    /// The project identity recorded when the store was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A repository holding lore's refs.
pub struct Store {
    repo: Repository,
    kind: StoreKind,
    git_env: GitEnv,
    identity: std::sync::OnceLock<git_env::Identity>,
    warnings: std::sync::Mutex<open::Warnings>,
    before_ref_update: Option<Box<dyn Fn() + Send>>,
    secret_policy: Option<crate::secrets::SecretPolicy>,
    /// The last diff taken ([`Store::diff`]).
    last_diff: std::sync::Mutex<Option<history::KeptDiff>>,
}

/// One change to the memory tree.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Write (or overwrite) a file.
    Upsert {
        /// Path in the memory tree.
        path: String,
        /// The file's new content.
        content: Vec<u8>,
    },
    /// Remove a file.
    Remove {
        /// Path in the memory tree.
        path: String,
    },
}

/// A commit message: a subject line and `Key: value` trailers.
#[derive(Clone, Debug, Default)]
pub struct Message {
    /// The first line.
    pub subject: String,
    /// Optional free text between subject and trailers.
    pub body: Option<String>,
    /// Trailers such as `Lore-Agent: claude-code`.
    pub trailers: Vec<(String, String)>,
}

impl Message {
    pub(crate) fn render(&self) -> String {
        let mut out = one_line(&self.subject, 200);
        out.push('\n');
        if let Some(body) = &self.body {
            out.push('\n');
            out.push_str(body.trim_end());
            out.push('\n');
        }
        if !self.trailers.is_empty() {
            out.push('\n');
            for (k, v) in &self.trailers {
                out.push_str(k);
                out.push_str(": ");
                out.push_str(&one_line(v, 200));
                out.push('\n');
            }
        }
        out
    }
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > max {
        let mut cut: String = flat.chars().take(max - 1).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

/// A step between making a transaction's commit (given, with the edits it made) and moving the
/// ref to it.
type BeforeSwap<'a> = dyn FnMut(Oid, &[Edit]) -> Result<()> + 'a;

/// What one transaction on a ref writes.
#[derive(Clone, Debug, Default)]
pub struct RefWrite {
    /// Changes to the tree of the tip (or of `start`).
    pub edits: Vec<Edit>,
    /// The commit message.
    pub message: Message,
    /// A second parent: the commit is a merge of this one into the tip.
    pub merge_parent: Option<Oid>,
    /// When the ref does not exist yet: the commit it starts from (parent and base tree).
    pub start: Option<Oid>,
}

impl RefWrite {
    /// Edits on the current tip.
    pub fn on_tip(edits: Vec<Edit>, message: Message) -> RefWrite {
        RefWrite {
            edits,
            message,
            ..RefWrite::default()
        }
    }
}

/// A read-only view of the tree at one tip, handed to a transaction's closure.
pub struct Snapshot<'r> {
    repo: &'r Repository,
    tree: Option<Tree<'r>>,
    commit: Option<Oid>,
}

impl<'r> Snapshot<'r> {
    /// The commit this view is of (none for an empty store).
    pub fn commit(&self) -> Option<Oid> {
        self.commit
    }

    /// The blob id at a path, if a file is there.
    pub fn blob_id(&self, path: &str) -> Result<Option<Oid>> {
        let Some(tree) = &self.tree else {
            return Ok(None);
        };
        match tree.get_path(Path::new(path)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Blob) => Ok(Some(entry.id())),
            Ok(_) => Ok(None),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The files directly inside a directory of the tree (name and blob), sorted by name; empty
    /// when there is no such directory.
    pub fn files_in(&self, dir: &str) -> Result<Vec<(String, Oid)>> {
        self.entries_in(dir, ObjectType::Blob)
    }

    /// The directories directly inside a directory of the tree (name and tree id), sorted; `""`
    /// is the root.
    pub fn dirs_in(&self, dir: &str) -> Result<Vec<(String, Oid)>> {
        self.entries_in(dir, ObjectType::Tree)
    }

    fn entries_in(&self, dir: &str, kind: ObjectType) -> Result<Vec<(String, Oid)>> {
        let Some(tree) = &self.tree else {
            return Ok(Vec::new());
        };
        let sub = if dir.is_empty() {
            tree.clone()
        } else {
            let entry = match tree.get_path(Path::new(dir)) {
                Ok(entry) if entry.kind() == Some(ObjectType::Tree) => entry,
                Ok(_) => return Ok(Vec::new()),
                Err(e) if e.code() == ErrorCode::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            };
            self.repo.find_tree(entry.id())?
        };
        let mut out: Vec<(String, Oid)> = sub
            .iter()
            .filter(|e| e.kind() == Some(kind))
            .filter_map(|e| Some((e.name().ok()?.to_string(), e.id())))
            .collect();
        out.sort();
        Ok(out)
    }

    /// The content of a blob.
    pub fn blob(&self, oid: Oid) -> Result<Vec<u8>> {
        Ok(self.repo.find_blob(oid)?.content().to_vec())
    }

    /// The content of the file at a path, if any.
    pub fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.blob_id(path)? {
            Some(oid) => Ok(Some(self.repo.find_blob(oid)?.content().to_vec())),
            None => Ok(None),
        }
    }
}

/// A file of the memory tree: its path and blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFile {
    /// Path in the memory tree.
    pub path: String,
    /// Blob id.
    pub blob: Oid,
}

/// A difference between two trees, file by file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// Path in the memory tree.
    pub path: String,
    /// Blob before (none when added).
    pub old: Option<Oid>,
    /// Blob after (none when removed).
    pub new: Option<Oid>,
}

impl Store {
    /// The underlying repository.
    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// Which kind of store this is.
    pub fn kind(&self) -> &StoreKind {
        &self.kind
    }

    /// The git directory shared by all worktrees (where lore keeps its index).
    pub fn common_dir(&self) -> PathBuf {
        self.repo.commondir().to_path_buf()
    }

    /// The work tree's root, if the repository has one.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// Test seam: a callback run between building a commit and moving the ref, to let a test
    /// move the ref underneath a writer.
    #[doc(hidden)]
    pub fn set_before_ref_update(&mut self, hook: Option<Box<dyn Fn() + Send>>) {
        self.before_ref_update = hook;
    }

    /// A stable identity for the project: its normalised `origin` URL, else its git directory.
    pub fn project_identity(&self) -> String {
        if let Ok(remote) = self.repo.find_remote("origin")
            && let Ok(url) = remote.url()
            && let Some(id) = normalize_remote_url(url)
        {
            return id;
        }
        let dir = self.common_dir();
        let dir = dir.canonicalize().unwrap_or(dir);
        format!("file://{}", dir.display())
    }

    /// The current tip of the memory chain.
    pub fn tip(&self) -> Result<Option<Oid>> {
        ref_target(&self.repo, MEMORY_REF)
    }

    /// The HEAD commit of the project's code, if any.
    pub fn head_commit(&self) -> Option<Oid> {
        // Resolving the ref is enough: HEAD points at a commit (reading the object would cost
        // an inflate on every write).
        self.repo.refname_to_id("HEAD").ok()
    }

    /// A view of the tree at a commit (or the empty tree).
    pub fn snapshot(&self, commit: Option<Oid>) -> Result<Snapshot<'_>> {
        let tree = match commit {
            Some(oid) => Some(self.repo.find_commit(oid)?.tree()?),
            None => None,
        };
        Ok(Snapshot {
            repo: &self.repo,
            tree,
            commit,
        })
    }

    /// Reads a blob's content.
    pub fn read_blob(&self, oid: Oid) -> Result<Vec<u8>> {
        Ok(self.repo.find_blob(oid)?.content().to_vec())
    }

    /// The store metadata at a tip, if written.
    pub fn meta(&self, commit: Option<Oid>) -> Result<Option<StoreMeta>> {
        let snap = self.snapshot(commit)?;
        match snap.read(layout::STORE_FILE)? {
            Some(bytes) => {
                let meta = serde_norway::from_slice(&bytes).map_err(|e| Error::Record {
                    path: layout::STORE_FILE.into(),
                    message: e.to_string(),
                })?;
                Ok(Some(meta))
            }
            None => Ok(None),
        }
    }

    /// Every file of the tree at a commit.
    pub fn files(&self, commit: Option<Oid>) -> Result<Vec<TreeFile>> {
        let Some(commit) = commit else {
            return Ok(Vec::new());
        };
        let tree = self.repo.find_commit(commit)?.tree()?;
        let mut out = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                out.push(TreeFile {
                    path: format!("{dir}{name}"),
                    blob: entry.id(),
                });
            }
            TreeWalkResult::Ok
        })?;
        Ok(out)
    }

    /// Whether a commit object exists (it may not after a purge or a fresh clone).
    pub fn has_commit(&self, oid: Oid) -> bool {
        self.repo.find_commit(oid).is_ok()
    }

    /// The one write path. `build` sees the current tip and returns edits, a message and a value;
    /// the edits become one commit on [`MEMORY_REF`], moved by compare-and-swap. If another
    /// writer moved the ref first, `build` runs again on the new tip. No edits: nothing is written.
    pub fn transact<T>(
        &self,
        build: impl FnMut(&Snapshot<'_>) -> Result<(Vec<Edit>, Message, T)>,
    ) -> Result<(T, Option<Oid>)> {
        self.transact_memory(build, &mut |_, _| Ok(()))
    }

    /// [`Store::transact`] with `before_swap` run after each attempt's commit is made and
    /// before the ref moves to it (a packed write lands its objects there).
    fn transact_memory<T>(
        &self,
        mut build: impl FnMut(&Snapshot<'_>) -> Result<(Vec<Edit>, Message, T)>,
        before_swap: &mut BeforeSwap<'_>,
    ) -> Result<(T, Option<Oid>)> {
        self.transact_ref_then(MEMORY_REF, before_swap, |snap| {
            let (mut edits, message, value) = build(snap)?;
            let writes_store_file = edits
                .iter()
                .any(|e| matches!(e, Edit::Upsert { path, .. } if path == layout::STORE_FILE));
            purged::refused_by_purge(snap, &edits)?;
            if !edits.is_empty()
                && !writes_store_file
                && snap.blob_id(layout::STORE_FILE)?.is_none()
            {
                edits.push(self.store_file_edit()?);
            }
            Ok((RefWrite::on_tip(edits, message), value))
        })
    }

    /// The write path for any of lore's refs: `build` sees the ref's current tip (an empty view
    /// when the ref does not exist) and returns a [`RefWrite`]; it becomes one commit and the ref
    /// moves by compare-and-swap, retried on a new tip exactly like [`Store::transact`].
    pub fn transact_ref<T>(
        &self,
        refname: &str,
        build: impl FnMut(&Snapshot<'_>) -> Result<(RefWrite, T)>,
    ) -> Result<(T, Option<Oid>)> {
        self.transact_ref_then(refname, &mut |_, _| Ok(()), build)
    }

    /// [`Store::transact_ref`] with `before_swap` run between making each attempt's commit and
    /// moving the ref to it.
    fn transact_ref_then<T>(
        &self,
        refname: &str,
        before_swap: &mut BeforeSwap<'_>,
        mut build: impl FnMut(&Snapshot<'_>) -> Result<(RefWrite, T)>,
    ) -> Result<(T, Option<Oid>)> {
        let mut backoff = Backoff::new(
            Duration::from_micros(400),
            Duration::from_micros(25_600),
            MAX_RETRY_TIME,
        );
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let tip = ref_target(&self.repo, refname)?;
            let snap = self.snapshot(tip)?;
            let (write, value) = build(&snap)?;
            if write.edits.is_empty() && write.merge_parent.is_none() && write.start.is_none() {
                return Ok((value, tip));
            }
            // A ref that does not exist yet may start from another commit (a new branch).
            let first_parent = tip.or(write.start);
            let base_tree = match first_parent {
                Some(c) if Some(c) != tip => Some(self.repo.find_commit(c)?.tree()?),
                _ => None,
            };
            let base = base_tree.as_ref().or(snap.tree.as_ref());
            let other = write
                .merge_parent
                .map(|c| self.repo.find_commit(c).and_then(|c| c.tree()))
                .transpose()?;
            let mut prior = || self.replaced_texts(&write.edits, base, other.as_ref());
            let tree = self.apply_edits(base, &write.edits, &mut prior)?;
            let mut parents: Vec<Oid> = first_parent.into_iter().collect();
            parents.extend(write.merge_parent);
            let commit = self.make_commit(&write.message, tree, &parents, &mut prior)?;
            before_swap(commit, &write.edits)?;
            if let Some(hook) = &self.before_ref_update {
                hook();
            }
            match self.compare_and_swap(refname, tip, commit, &write.message.subject) {
                Ok(()) => return Ok((value, Some(commit))),
                Err(e) if is_race(&e) => {
                    // A lock whose holder died is removed (with a warning) and the write goes on.
                    if e.code() == ErrorCode::Locked && self.heal_stale_lock(refname)? {
                        continue;
                    }
                    if !backoff.wait() {
                        return Err(Error::Contention {
                            refname: format!(
                                "{refname} (if no other lore or git process is running, remove {}/{refname}.lock)",
                                self.common_dir().display()
                            ),
                            attempts: attempt,
                        });
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes `lore.yaml` if the store has none yet. Returns whether it did.
    pub fn init(&self) -> Result<bool> {
        let (created, _) = self.transact(|snap| {
            if snap.blob_id(layout::STORE_FILE)?.is_some() {
                return Ok((Vec::new(), Message::default(), false));
            }
            let message = Message {
                subject: "init lore store".into(),
                body: None,
                trailers: vec![("Lore-Action".into(), "init".into())],
            };
            Ok((vec![self.store_file_edit()?], message, true))
        })?;
        Ok(created)
    }

    fn store_file_edit(&self) -> Result<Edit> {
        let meta = StoreMeta {
            format: STORE_FORMAT,
            project: match self.kind {
                StoreKind::Repository => Some(self.project_identity()),
                StoreKind::Personal => None,
            },
        };
        let text = serde_norway::to_string(&meta).map_err(|e| Error::Parse {
            context: "writing lore.yaml".into(),
            message: e.to_string(),
        })?;
        Ok(Edit::Upsert {
            path: layout::STORE_FILE.into(),
            content: text.into_bytes(),
        })
    }

    /// The texts a write replaces, removes or merges: what each path it touches holds in the
    /// tree it starts from and in the tree it merges (a conflict record's memory too), for the
    /// guard to tell a secret carried over from a new one.
    fn replaced_texts(
        &self,
        edits: &[Edit],
        base: Option<&Tree<'_>>,
        other: Option<&Tree<'_>>,
    ) -> Result<Vec<Vec<u8>>> {
        let mut paths: Vec<String> = Vec::new();
        for edit in edits {
            let (Edit::Upsert { path, .. } | Edit::Remove { path }) = edit;
            paths.push(path.clone());
            paths.extend(layout::contested_path(path));
        }
        let mut out = Vec::new();
        for tree in base.into_iter().chain(other) {
            for path in &paths {
                let entry = match tree.get_path(Path::new(path)) {
                    Ok(entry) => entry,
                    Err(e) if e.code() == ErrorCode::NotFound => continue,
                    Err(e) => return Err(e.into()),
                };
                if entry.kind() == Some(ObjectType::Blob) {
                    out.push(self.repo.find_blob(entry.id())?.content().to_vec());
                }
            }
        }
        Ok(out)
    }

    fn apply_edits(
        &self,
        base: Option<&Tree<'_>>,
        edits: &[Edit],
        prior: &mut dyn FnMut() -> Result<Vec<Vec<u8>>>,
    ) -> Result<Oid> {
        let empty;
        let base = match base {
            Some(t) => t,
            None => {
                let oid = self.repo.treebuilder(None)?.write()?;
                empty = self.repo.find_tree(oid)?;
                &empty
            }
        };
        // Edits apply in order: a later edit of a path replaces an earlier one.
        let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, edit) in edits.iter().enumerate() {
            let (Edit::Upsert { path, .. } | Edit::Remove { path }) = edit;
            last.insert(path.as_str(), i);
        }
        let odb = self.repo.odb()?;
        let mut has = pack::Holdings::new(&odb);
        let mut builder = git2::build::TreeUpdateBuilder::new();
        for (i, edit) in edits.iter().enumerate() {
            let (Edit::Upsert { path, .. } | Edit::Remove { path }) = edit;
            if last.get(path.as_str()) != Some(&i) {
                continue;
            }
            match edit {
                Edit::Upsert { path, content } => {
                    // A blob the repository has (a merge taking the other side's version) is
                    // not written again: libgit2 would write a temporary file and remove it.
                    let blob = Oid::hash_object(ObjectType::Blob, content)?;
                    // A conflict record is written only by a merge (and removed by a resolve):
                    // its texts are copies of versions the repository holds (ours, theirs, the
                    // base, some re-encoded as YAML), not new text; the guard passes it.
                    let copies_only = layout::classify(path) == layout::PathKind::Conflict;
                    if !has.object(blob) {
                        if !copies_only
                            && let Err(refused) = self.guard_carried(path, content, prior)
                            && !has.surely(blob)
                        {
                            return Err(refused);
                        }
                        self.repo.blob(content)?;
                    }
                    builder.upsert(path.as_str(), blob, FileMode::Blob);
                }
                // Removing what is not there is a no-op (libgit2 would refuse the whole tree).
                Edit::Remove { path } => {
                    if base.get_path(Path::new(path)).is_ok() {
                        builder.remove(path.as_str());
                    }
                }
            }
        }
        Ok(builder.create_updated(&self.repo, base)?)
    }

    fn make_commit(
        &self,
        message: &Message,
        tree: Oid,
        parents: &[Oid],
        prior: &mut dyn FnMut() -> Result<Vec<Vec<u8>>>,
    ) -> Result<Oid> {
        let identity = self.resolved_identity();
        let author = identity.author.signature()?;
        let committer = identity.committer.signature()?;
        let tree = self.repo.find_tree(tree)?;
        let parent_commits = parents
            .iter()
            .map(|p| self.repo.find_commit(*p))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let parents: Vec<&git2::Commit<'_>> = parent_commits.iter().collect();
        let text = message.render();
        self.guard_carried("the commit message", text.as_bytes(), prior)?;
        Ok(self
            .repo
            .commit(None, &author, &committer, &text, &tree, &parents)?)
    }

    /// Moves `refname` from `expected` to `new`, failing if it is no longer at `expected`.
    pub(crate) fn compare_and_swap(
        &self,
        refname: &str,
        expected: Option<Oid>,
        new: Oid,
        log: &str,
    ) -> std::result::Result<(), git2::Error> {
        let log = format!("lore: {}", one_line(log, 100));
        // The expected value is compared under the ref's lock. For creation the expected value
        // is the zero id ("must not exist"), checked under the lock too: `reference(.., force =
        // false)` checks existence before locking, so two first writers could both succeed.
        let expected = expected.unwrap_or(Oid::ZERO_SHA1);
        self.repo
            .reference_matching(refname, new, true, expected, &log)
            .map(|_| ())
    }
}

/// Reads where a ref points, if it exists.
pub(crate) fn ref_target(repo: &Repository, name: &str) -> Result<Option<Oid>> {
    match repo.find_reference(name) {
        Ok(r) => Ok(r.target()),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// git's three-way merge of one file's texts. git2 starts libgit2 in most of its entry points
/// but not in `merge_file`, which without it reports every merge as a conflict (a process
/// whose first git call is a merge): parsing an id starts it.
pub(crate) fn merge_file(
    base: &git2::MergeFileInput<'_>,
    ours: &git2::MergeFileInput<'_>,
    theirs: &git2::MergeFileInput<'_>,
    options: &mut git2::MergeFileOptions,
) -> Result<git2::MergeFileResult> {
    Oid::from_bytes(&[0; 20])?;
    Ok(git2::merge_file(base, ours, theirs, Some(options))?)
}

fn is_race(e: &git2::Error) -> bool {
    matches!(
        e.code(),
        ErrorCode::Modified | ErrorCode::Locked | ErrorCode::Exists
    )
}

/// Normalises a remote URL to `host/path` (no scheme, user, port or `.git`), lower-case host.
pub fn normalize_remote_url(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((_, rest)) = url.split_once("://") {
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (hostport, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = hostport.split(':').next().unwrap_or(hostport);
        (host.to_string(), path.to_string())
    } else if let Some((userhost, path)) = url.split_once(':')
        && !url.starts_with('/')
        && !userhost.contains('/')
    {
        let host = userhost.rsplit_once('@').map_or(userhost, |(_, h)| h);
        (host.to_string(), path.to_string())
    } else {
        // A local path remote.
        return Some(format!("file://{}", url.trim_end_matches('/')));
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if host.is_empty() {
        return None;
    }
    Some(format!("{}/{}", host.to_lowercase(), path))
}

/// Creates a non-bare repository with a local identity (for benchmarks and scratch stores).
pub fn init_repository(dir: &Path) -> Result<Repository> {
    let repo = Repository::init(dir)?;
    {
        let mut config = repo.config()?;
        config.set_str("user.name", "lore bench")?;
        config.set_str("user.email", "bench@lore.invalid")?;
    }
    Ok(repo)
}

/// Writes a chain of `n` empty-tree commits on `refs/heads/main` with messages from `message`,
/// and returns their ids (for the git baseline of the benchmarks).
pub fn bench_commit_chain(
    repo: &Repository,
    n: usize,
    mut message: impl FnMut(usize) -> String,
) -> Result<Vec<String>> {
    let sig = git2::Signature::now("lore bench", "bench@lore.invalid")?;
    let tree = repo.find_tree(repo.treebuilder(None)?.write()?)?;
    let mut ids = Vec::with_capacity(n);
    let mut parent: Option<Oid> = None;
    for i in 0..n {
        let parent_commit = parent.map(|p| repo.find_commit(p)).transpose()?;
        let parents: Vec<&git2::Commit<'_>> = parent_commit.iter().collect();
        let oid = repo.commit(None, &sig, &sig, &message(i), &tree, &parents)?;
        ids.push(oid.to_string());
        parent = Some(oid);
    }
    if let Some(tip) = parent {
        repo.reference("refs/heads/main", tip, true, "bench chain")?;
        repo.set_head("refs/heads/main")?;
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::normalize_remote_url as n;

    #[test]
    fn remote_urls_normalise_to_one_identity() {
        let want = Some("github.com/owner/repo".to_string());
        assert_eq!(n("https://github.com/owner/repo.git"), want);
        assert_eq!(n("git@github.com:owner/repo.git"), want);
        assert_eq!(n("ssh://git@GitHub.com:22/owner/repo"), want);
        assert_eq!(n("https://user:pw@github.com/owner/repo/"), want);
        assert_eq!(n("/srv/git/x.git/"), Some("file:///srv/git/x.git".into()));
        assert_eq!(n(""), None);
    }
}
