//! The `Lore` handle: one store and its index, and every operation on memories.
//!
//! Writes go straight to git through [`Store::transact`] and never wait for the index; reads open
//! the index lazily and catch it up from the refs first, rebuilding it if it is missing or damaged.

use std::collections::HashSet;

use git2::Oid;
use jiff::Timestamp;
use serde::Serialize;

use crate::embed::SharedEmbedder;
use crate::error::{Error, Result};
use crate::index::{self, CatchUp, Hit, Index, IndexNotice, InvalidFile, ListFilter, RankOptions};
use crate::model::{
    BUILTIN_NAMESPACES, Citation, Key, LineRange, Memory, MemoryId, Namespace, Status,
    check_relative_path, check_summary, normalize_tags, to_millis,
};
use crate::record;
use crate::secrets::{self, SecretPolicy, SecretReport};
use crate::store::layout::{self, id_path, memory_path, namespace_marker_path, path_of};
use crate::store::{Edit, FileVersion, Message, Snapshot, Store, StoreKind, purge::PurgeReport};

/// Who is writing and when: recorded in the memory and in the commit's trailers.
#[derive(Clone, Debug, Default)]
pub struct WriteContext {
    /// The agent (e.g. `claude-code`).
    pub agent: Option<String>,
    /// The agent's session id.
    pub session: Option<String>,
    /// Overrides the author taken from the repository's git identity.
    pub author: Option<String>,
    /// The time to record (default: now). Lets tests and imports fix time.
    pub now: Option<Timestamp>,
}

impl WriteContext {
    fn now(&self) -> Timestamp {
        to_millis(self.now.unwrap_or_else(Timestamp::now))
    }

    fn trailers(&self, action: &str, ids: &[&MemoryId]) -> Vec<(String, String)> {
        let mut t = vec![("Lore-Action".to_string(), action.to_string())];
        for id in ids {
            t.push(("Lore-Memory".into(), id.to_string()));
        }
        if let Some(a) = &self.agent {
            t.push(("Lore-Agent".into(), a.clone()));
        }
        if let Some(s) = &self.session {
            t.push(("Lore-Session".into(), s.clone()));
        }
        t
    }
}

/// A memory to write, as given by a user or an agent.
#[derive(Clone, Debug, Default)]
pub struct NewMemory {
    /// Namespace name (validated; must be built in or registered).
    pub namespace: String,
    /// Optional topic slug.
    pub key: Option<String>,
    /// One line, at most 100 characters.
    pub summary: String,
    /// Markdown body.
    pub body: String,
    /// Tags (normalised to lower case).
    pub tags: Vec<String>,
    /// Status (default active).
    pub status: Option<Status>,
    /// Confidence in 0..=1.
    pub confidence: Option<f64>,
    /// Cited files.
    pub citations: Vec<Citation>,
    /// Ids of related memories.
    pub relates_to: Vec<String>,
}

/// Changes to apply to an existing memory.
#[derive(Clone, Debug, Default)]
pub struct Patch {
    /// New summary.
    pub summary: Option<String>,
    /// New body.
    pub body: Option<String>,
    /// Tags to add.
    pub add_tags: Vec<String>,
    /// Tags to remove.
    pub remove_tags: Vec<String>,
    /// New status.
    pub status: Option<Status>,
    /// New confidence.
    pub confidence: Option<f64>,
    /// Citations to add.
    pub add_citations: Vec<Citation>,
    /// Related memory ids to add.
    pub add_relates_to: Vec<String>,
}

impl Patch {
    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.summary.is_none()
            && self.body.is_none()
            && self.add_tags.is_empty()
            && self.remove_tags.is_empty()
            && self.status.is_none()
            && self.confidence.is_none()
            && self.add_citations.is_empty()
            && self.add_relates_to.is_empty()
    }
}

/// A stored memory version that holds secrets (from [`Lore::scan_secrets`]).
#[derive(Clone, Debug, Serialize)]
pub struct StoredSecret {
    /// The memory's id.
    pub id: String,
    /// Its path in the memory tree.
    pub path: String,
    /// Its summary (as stored; it may itself hold the secret).
    pub summary: String,
    /// Whether this is the memory as it is now (else an earlier or forgotten version).
    pub current: bool,
    /// For an earlier version, the commit that wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// What the scanner found.
    pub findings: Vec<secrets::Finding>,
}

/// The result of a write.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// The memory as stored.
    pub memory: Memory,
    /// Its path in the memory tree.
    pub path: String,
    /// The commit that recorded it.
    pub commit: String,
    /// What the secret scanner found and did, when it found anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretReport>,
}

/// What to do when a new memory repeats an existing one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Novelty {
    /// Refuse the write with [`Error::Duplicate`].
    #[default]
    Check,
    /// Supersede the existing memory with the new one.
    Upsert,
    /// Write it anyway.
    Force,
}

/// An existing memory that a new one repeats.
#[derive(Clone, Debug, Serialize)]
pub struct DuplicateOf {
    /// The existing memory.
    pub memory: Memory,
    /// Exact same content (else similar: see `similarity`).
    pub exact: bool,
    /// Cosine similarity of the two texts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
}

/// The outcome of a checked write.
#[derive(Clone, Debug, Serialize)]
pub struct Remembered {
    /// The new memory.
    #[serde(flatten)]
    pub written: Written,
    /// The memory it superseded (with [`Novelty::Upsert`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<Written>,
}

/// Namespaces whose memories legitimately look alike (status notes): they need a closer match
/// to count as duplicates.
const STRICT_NOVELTY: &[(&str, f32)] = &[("progress", 0.97), ("reviews", 0.95)];

/// A memory whose cited content changed.
#[derive(Clone, Debug, Serialize)]
pub struct StaleMemory {
    /// The memory's id.
    pub id: String,
    /// Its summary.
    pub summary: String,
    /// What changed, per citation.
    pub reasons: Vec<String>,
}

/// What `verify` found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    /// Memories with citations that were checked.
    pub checked: usize,
    /// Citations without a recorded blob (cannot be checked).
    pub unpinned: usize,
    /// Memories whose cited content changed.
    pub stale: Vec<StaleMemory>,
}

/// The result of `supersede`.
#[derive(Clone, Debug, Serialize)]
pub struct Superseded {
    /// The old memory, now marked superseded.
    pub old: Written,
    /// The new memory.
    pub new: Written,
}

/// One version of a memory in its history.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryVersion {
    /// The commit.
    pub commit: String,
    /// Commit time.
    pub time: Timestamp,
    /// The commit's subject.
    pub subject: String,
    /// Who committed it.
    pub committer: String,
    /// Path at that version.
    pub path: String,
    /// The memory at that version (none: deleted by this commit).
    pub memory: Option<Memory>,
}

/// Where the store is and what it holds.
#[derive(Clone, Debug, Serialize)]
pub struct StoreStatus {
    /// Repository or personal store.
    pub kind: StoreKind,
    /// The git directory holding lore's refs.
    pub git_dir: String,
    /// The work tree, if any.
    pub workdir: Option<String>,
    /// Project identity recorded in the store (or computed, if nothing is written yet).
    pub project: Option<String>,
    /// The memory ref.
    pub memory_ref: String,
    /// Its tip.
    pub tip: Option<String>,
    /// Total memories.
    pub total: u64,
    /// Counts per namespace.
    pub namespaces: Vec<NamespaceCount>,
    /// Unreadable memory files.
    pub invalid: Vec<InvalidFile>,
    /// The index.
    pub index: IndexStatus,
}

/// Counts for one namespace.
#[derive(Clone, Debug, Serialize)]
pub struct NamespaceCount {
    /// Namespace name.
    pub namespace: String,
    /// Built in (true) or registered.
    pub builtin: bool,
    /// Memories per status.
    pub by_status: std::collections::BTreeMap<String, u64>,
    /// All memories in it.
    pub total: u64,
}

/// The index's state.
#[derive(Clone, Debug, Serialize)]
pub struct IndexStatus {
    /// Where the file is.
    pub path: String,
    /// Whether it was current before this command caught it up.
    pub was_current: bool,
    /// What the catch-up did.
    pub caught_up_files: usize,
    /// The embedder whose vectors the index holds (`none`: lexical only).
    pub embedder: String,
}

/// A cited or anchored file's content, for the `files` hydration level.
#[derive(Clone, Debug, Serialize)]
pub struct FileContent {
    /// Path relative to the repository root.
    pub path: String,
    /// Where the content came from (`blob <id>`, `anchor <commit>`).
    pub source: String,
    /// The lines cited, if any.
    pub lines: Option<LineRange>,
    /// The text (possibly truncated), or none if unavailable.
    pub content: Option<String>,
    /// Whether `content` was cut to the size limit.
    pub truncated: bool,
    /// Why there is no content, if there is none.
    pub note: Option<String>,
}

/// Bounds for the `files` hydration level.
#[derive(Clone, Copy, Debug)]
pub struct FileLimits {
    /// At most this many files.
    pub max_files: usize,
    /// At most this many bytes per file.
    pub max_bytes: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 10,
            max_bytes: 16 * 1024,
        }
    }
}

/// A store and its (lazily opened) index.
pub struct Lore {
    store: Store,
    embedder: Option<SharedEmbedder>,
    index: Option<Index>,
    notices: Vec<IndexNotice>,
    last_catch_up: Option<CatchUp>,
    secret_policy: Option<SecretPolicy>,
}

impl Lore {
    /// Wraps a store. The index is opened on first read.
    pub fn new(store: Store) -> Lore {
        Lore {
            store,
            embedder: None,
            index: None,
            notices: Vec::new(),
            last_catch_up: None,
            secret_policy: None,
        }
    }

    /// Overrides the secret policy for this handle's writes (else `git config lore.secrets`,
    /// else redact).
    pub fn set_secret_policy(&mut self, policy: Option<SecretPolicy>) {
        self.secret_policy = policy;
    }

    /// The secret policy in force: the override, else the repository's `lore.secrets`, else
    /// [`SecretPolicy::Redact`]. A configured value that is not a policy is an error, so a typo
    /// never silently weakens protection.
    pub fn secret_policy(&self) -> Result<SecretPolicy> {
        match self.secret_policy {
            Some(p) => Ok(p),
            None => secrets::configured_policy(&self.store),
        }
    }

    /// Runs a memory's text (summary and body) through the secret scanner under the policy in
    /// force, redacting in place when the policy says so.
    pub fn screen(&self, memory: &mut Memory) -> Result<Option<SecretReport>> {
        screen_memory(memory, self.secret_policy()?)
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, mutably (for test seams).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Index notices (created, rebuilt) gathered so far; front ends show them.
    pub fn take_notices(&mut self) -> Vec<IndexNotice> {
        std::mem::take(&mut self.notices)
    }

    /// Sets the embedder for semantic recall (`None`: lexical only; the default). The index
    /// re-embeds on its next catch-up if its vectors came from another embedder.
    pub fn set_embedder(&mut self, embedder: Option<SharedEmbedder>) {
        if let Some(index) = self.index.as_mut() {
            index.set_embedder(embedder.clone());
        }
        self.embedder = embedder;
    }

    /// The embedder in use.
    pub fn embedder(&self) -> Option<&SharedEmbedder> {
        self.embedder.as_ref()
    }

    fn fresh_index(&self) -> Result<(Index, Option<IndexNotice>)> {
        let (mut index, notice) = Index::open(&index::index_path(&self.store))?;
        index.set_embedder(self.embedder.clone());
        Ok((index, notice))
    }

    fn open_index(&mut self) -> Result<()> {
        if self.index.is_none() {
            let (index, notice) = self.fresh_index()?;
            self.notices.extend(notice);
            self.index = Some(index);
        }
        Ok(())
    }

    /// Opens the index if needed and catches it up with the refs.
    pub fn index(&mut self) -> Result<&Index> {
        self.open_index()?;
        let result = {
            let index = self.index.as_mut().ok_or_else(missing_index)?;
            index.catch_up(&self.store)
        };
        match result {
            Ok(done) => {
                if self.last_catch_up.is_none() {
                    self.last_catch_up = Some(done);
                }
            }
            Err(e) if index::is_corruption(&e) => self.rebuild_index(&e.to_string())?,
            Err(e) => return Err(e),
        }
        self.index.as_ref().ok_or_else(missing_index)
    }

    fn rebuild_index(&mut self, reason: &str) -> Result<()> {
        let index = match self.index.take() {
            Some(index) => index.reset()?,
            None => self.fresh_index()?.0,
        };
        self.notices.push(IndexNotice::Rebuilt {
            reason: reason.to_string(),
        });
        let index = self.index.insert(index);
        let done = index.catch_up(&self.store)?;
        self.last_catch_up = Some(CatchUp {
            moved: true,
            ..done
        });
        Ok(())
    }

    /// Runs a read against the caught-up index; a damaged index is rebuilt and the read retried.
    fn read<T>(&mut self, f: impl Fn(&Index) -> Result<T>) -> Result<T> {
        let first = f(self.index()?);
        match first {
            Err(e) if index::is_corruption(&e) => {
                self.rebuild_index(&e.to_string())?;
                f(self.index()?)
            }
            other => other,
        }
    }

    fn author(&self, ctx: &WriteContext) -> Option<String> {
        if let Some(a) = &ctx.author {
            return Some(a.clone());
        }
        let (name, email) = self.store.identity();
        Some(format!("{name} <{email}>"))
    }

    /// Builds a validated memory from input (fresh id; times, author, agent and anchor filled
    /// in) without writing it: for batch writes.
    pub fn prepare(&self, new: &NewMemory, ctx: &WriteContext) -> Result<Memory> {
        let now = ctx.now();
        let memory = Memory {
            id: MemoryId::generate()?,
            namespace: Namespace::parse(&new.namespace)?,
            key: new.key.as_deref().map(Key::parse).transpose()?,
            summary: new.summary.clone(),
            body: new.body.clone(),
            tags: normalize_tags(&new.tags)?,
            status: new.status.unwrap_or(Status::Active),
            created: now,
            updated: now,
            author: self.author(ctx),
            agent: ctx.agent.clone(),
            session: ctx.session.clone(),
            confidence: new.confidence,
            anchor: self.store.head_commit().map(|c| c.to_string()),
            citations: new.citations.clone(),
            relates_to: new
                .relates_to
                .iter()
                .map(|r| MemoryId::parse(r))
                .collect::<Result<_>>()?,
            supersedes: None,
            superseded_by: None,
        };
        memory.validate()?;
        Ok(memory)
    }

    /// Writes a new memory (one commit).
    pub fn remember(&self, new: &NewMemory, ctx: &WriteContext) -> Result<Written> {
        let mut memory = self.prepare(new, ctx)?;
        let secrets = self.screen(&mut memory)?;
        let (path, commit) = self.store.transact(|snap| {
            check_namespace(snap, &memory.namespace)?;
            let path = free_path(snap, &mut memory)?;
            let content = record::render(&memory)?.into_bytes();
            let message = Message {
                subject: format!("remember {}: {}", display_name(&memory), memory.summary),
                body: None,
                trailers: ctx.trailers("remember", &[&memory.id]),
            };
            Ok((
                vec![Edit::Upsert {
                    path: path.clone(),
                    content,
                }],
                message,
                path,
            ))
        })?;
        Ok(Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets,
        })
    }

    /// Writes many complete memories in one commit (used by import). Memories whose id already
    /// exists with the same content are skipped; ones that collide with different content are
    /// reported and skipped (or overwritten with `replace`).
    pub fn write_batch(
        &mut self,
        memories: &[Memory],
        subject: &str,
        replace: bool,
        ctx: &WriteContext,
    ) -> Result<BatchReport> {
        // The policy is read from the repository's configuration once for the whole batch.
        let policy = self.secret_policy()?;
        let mut screened = Vec::with_capacity(memories.len());
        let mut secret_reports = Vec::new();
        for m in memories {
            m.validate()?;
            let mut m = m.clone();
            if let Some(report) = screen_memory(&mut m, policy)? {
                secret_reports.push((m.id.to_string(), report));
            }
            screened.push(m);
        }
        let memories = &screened[..];
        // Where each id already lives (a memory may come back with another key or namespace).
        let existing: std::collections::HashMap<String, String> = if self.store.tip()?.is_some() {
            let ids: Vec<&str> = memories.iter().map(|m| m.id.as_str()).collect();
            self.read(|i| i.paths_of(&ids))?.into_iter().collect()
        } else {
            Default::default()
        };
        let (report, commit) = self.store.transact(|snap| {
            let mut report = BatchReport::default();
            let mut edits = Vec::new();
            let mut seen_paths = HashSet::new();
            let mut known_ns = HashSet::new();
            for m in memories {
                if known_ns.insert(m.namespace.clone()) && !namespace_known(snap, &m.namespace)? {
                    edits.push(namespace_marker_edit(&m.namespace, "registered by import")?);
                }
                let path = path_of(m);
                if !seen_paths.insert(path.clone()) {
                    report
                        .conflicts
                        .push(format!("{path}: given twice in this import"));
                    continue;
                }
                if let Some(elsewhere) = existing.get(m.id.as_str())
                    && *elsewhere != path
                    && snap.blob_id(elsewhere)?.is_some()
                {
                    if !replace {
                        report.conflicts.push(format!(
                            "{path}: memory {} exists at {elsewhere} (use --replace to move it)",
                            m.id
                        ));
                        continue;
                    }
                    edits.push(Edit::Remove {
                        path: elsewhere.clone(),
                    });
                }
                let content = record::render(m)?;
                match snap.read(&path)? {
                    Some(existing) if existing == content.as_bytes() => {
                        report.unchanged += 1;
                        continue;
                    }
                    Some(_) if !replace => {
                        report
                            .conflicts
                            .push(format!("{path}: exists with other content (use --replace)"));
                        continue;
                    }
                    Some(_) => report.replaced += 1,
                    None => report.written += 1,
                }
                edits.push(Edit::Upsert {
                    path,
                    content: content.into_bytes(),
                });
            }
            let written = report.written + report.replaced;
            let message = Message {
                subject: format!("{subject} ({written} memories)"),
                body: None,
                trailers: ctx.trailers("import", &[]),
            };
            Ok((edits, message, report))
        })?;
        Ok(BatchReport {
            commit: commit.map(|c| c.to_string()),
            secrets: secret_reports,
            ..report
        })
    }

    /// Registers a user-defined namespace.
    pub fn add_namespace(&self, name: &str, description: &str, ctx: &WriteContext) -> Result<bool> {
        let ns = Namespace::parse(name)?;
        if ns.is_builtin() {
            return Ok(false);
        }
        let (added, _) = self.store.transact(|snap| {
            if namespace_known(snap, &ns)? {
                return Ok((Vec::new(), Message::default(), false));
            }
            let message = Message {
                subject: format!("namespace add {ns}"),
                body: None,
                trailers: ctx.trailers("namespace", &[]),
            };
            Ok((
                vec![namespace_marker_edit(&ns, description)?],
                message,
                true,
            ))
        })?;
        Ok(added)
    }

    /// All namespaces: built in, then registered.
    pub fn namespaces(&mut self) -> Result<Vec<(String, bool)>> {
        let mut out: Vec<(String, bool)> = BUILTIN_NAMESPACES
            .iter()
            .map(|n| (n.to_string(), true))
            .collect();
        for n in self.read(|i| i.registered_namespaces())? {
            out.push((n, false));
        }
        Ok(out)
    }

    /// Finds one memory by id, unique id prefix (≥ 4 characters), `namespace/key` or key.
    pub fn resolve(&mut self, query: &str) -> Result<(String, Memory)> {
        let query = query.trim();
        let mut found = Vec::new();
        if query.len() >= 4 && MemoryId::is_prefix_like(query) {
            found = self.read(|i| i.find_by_id_prefix(query))?;
            if found.len() > 1
                && let Some(exact) = found.iter().position(|(_, m)| m.id.as_str() == query)
            {
                found = vec![found.swap_remove(exact)];
            }
        }
        if found.is_empty() {
            let (ns, key) = match query.split_once('/') {
                Some((ns, key)) => (Some(ns), key),
                None => (None, query),
            };
            if Key::parse(key).is_ok() {
                let rows = self.read(|i| i.find_by_key(ns, key))?;
                // Keep only the holders of the key path when there are any.
                let holders: Vec<_> = rows
                    .iter()
                    .filter(|(p, _)| layout::name_from_path(p) == key)
                    .cloned()
                    .collect();
                found = if holders.is_empty() { rows } else { holders };
            }
        }
        match found.len() {
            0 => Err(Error::NotFound(query.to_string())),
            1 => Ok(found.remove(0)),
            _ => Err(Error::Ambiguous {
                query: query.to_string(),
                candidates: found
                    .iter()
                    .map(|(p, m)| format!("{} ({p})", m.id))
                    .collect(),
            }),
        }
    }

    /// One memory.
    pub fn get(&mut self, query: &str) -> Result<Memory> {
        Ok(self.resolve(query)?.1)
    }

    /// Memories matching a filter.
    pub fn list(&mut self, filter: &ListFilter) -> Result<Vec<Memory>> {
        self.read(|i| i.list(filter))
    }

    /// Memories relevant to a query, ranked with the default options (hybrid when an embedder
    /// is set, else BM25; recency, namespace and status weights; near-duplicates collapsed).
    pub fn recall(&mut self, text: &str, filter: &ListFilter) -> Result<Vec<Hit>> {
        self.search(text, filter, &RankOptions::default(), false)
    }

    /// [`Lore::recall`] with explicit ranking options; `explain` fills in each hit's components.
    pub fn search(
        &mut self,
        text: &str,
        filter: &ListFilter,
        options: &RankOptions,
        explain: bool,
    ) -> Result<Vec<Hit>> {
        self.read(|i| i.search(text, filter, options, explain))
    }

    /// Active memories that cite `path` or name it in their text, newest first.
    pub fn mentioning(&mut self, path: &str, limit: usize) -> Result<Vec<Memory>> {
        self.read(|i| i.mentioning(path, limit))
    }

    /// The existing memory a new one would repeat in its namespace, if any: the same text
    /// (ignoring case and spacing), or vectors at or above the namespace's similarity threshold
    /// (the embedder's calibrated near-duplicate threshold, stricter for status-like
    /// namespaces) *with the same specifics* — numbers, names and identifiers (see
    /// [`crate::novelty`]). Superseded memories do not count.
    pub fn find_duplicate(&mut self, new: &NewMemory) -> Result<Option<DuplicateOf>> {
        let ns = new.namespace.as_str();
        let exact = self.read(|i| i.same_content(ns, &new.summary, &new.body))?;
        if let Some(m) = exact
            .into_iter()
            .find(|m| m.status != crate::model::Status::Superseded)
        {
            return Ok(Some(DuplicateOf {
                memory: m,
                exact: true,
                similarity: None,
            }));
        }
        let Some(embedder) = self.embedder.clone() else {
            return Ok(None);
        };
        let threshold = STRICT_NOVELTY
            .iter()
            .find(|(n, _)| *n == ns)
            .map(|(_, t)| t.max(embedder.near_duplicate()))
            .unwrap_or_else(|| embedder.near_duplicate());
        let text = format!("{}\n{}", new.summary, new.body);
        let embedded = index::vectors::text_of(&new.summary, &new.tags, &new.body);
        let similar = self.read(|i| i.similar(ns, &embedded, 20))?;
        Ok(similar
            .into_iter()
            .filter(|(m, cos)| {
                *cos >= threshold
                    && m.status != crate::model::Status::Superseded
                    && crate::novelty::same_specifics(&text, &format!("{}\n{}", m.summary, m.body))
            })
            .map(|(memory, cos)| DuplicateOf {
                memory,
                exact: false,
                similarity: Some(cos),
            })
            .next())
    }

    /// Remembers with the novelty check: a repeat of an existing memory is refused
    /// ([`Novelty::Check`]), supersedes it ([`Novelty::Upsert`]), or is written anyway
    /// ([`Novelty::Force`]).
    pub fn remember_checked(
        &mut self,
        new: &NewMemory,
        ctx: &WriteContext,
        novelty: Novelty,
    ) -> Result<Remembered> {
        let duplicate = match novelty {
            Novelty::Force => None,
            _ => self.find_duplicate(new)?,
        };
        match (duplicate, novelty) {
            (Some(d), Novelty::Check) => Err(Error::Duplicate {
                namespace: d.memory.namespace.to_string(),
                id: d.memory.id.to_string(),
                how: match d.similarity {
                    Some(s) if !d.exact => format!("similarity {s:.2}: {:?}", d.memory.summary),
                    _ => format!("same text: {:?}", d.memory.summary),
                },
            }),
            (Some(d), Novelty::Upsert) => {
                let done = self.supersede(d.memory.id.as_str(), new, ctx)?;
                Ok(Remembered {
                    written: done.new,
                    superseded: Some(done.old),
                })
            }
            _ => Ok(Remembered {
                written: self.remember(new, ctx)?,
                superseded: None,
            }),
        }
    }

    /// Applies a patch to a memory (one commit). The patch is applied to the version at the tip,
    /// so concurrent updates of different fields all take effect.
    pub fn update(&mut self, query: &str, patch: &Patch, ctx: &WriteContext) -> Result<Written> {
        let (path, found) = self.resolve(query)?;
        if patch.is_empty() {
            return Err(Error::Invalid {
                what: "update",
                value: found.id.to_string(),
                reason: "nothing to change; give --summary, --body, --tag, --status, …".into(),
            });
        }
        let now = ctx.now();
        let policy = self.secret_policy()?;
        let ((memory, path, secrets), commit) = self.store.transact(|snap| {
            let mut m = read_memory_at(snap, &path, &found.id)?;
            apply_patch(&mut m, patch)?;
            m.updated = now.max(m.created);
            m.validate()?;
            let secrets = screen_memory(&mut m, policy)?;
            let message = Message {
                subject: format!("update {}: {}", display_name(&m), m.summary),
                body: None,
                trailers: ctx.trailers("update", &[&m.id]),
            };
            let content = record::render(&m)?.into_bytes();
            Ok((
                vec![Edit::Upsert {
                    path: path.clone(),
                    content,
                }],
                message,
                (m, path.clone(), secrets),
            ))
        })?;
        Ok(Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets,
        })
    }

    /// Replaces a memory by a new one: the old is marked superseded and linked both ways. A keyed
    /// memory's key passes to the new memory (the old one moves to its id path).
    pub fn supersede(
        &mut self,
        query: &str,
        new: &NewMemory,
        ctx: &WriteContext,
    ) -> Result<Superseded> {
        let (old_path, found) = self.resolve(query)?;
        let mut new = new.clone();
        if new.namespace.is_empty() {
            new.namespace = found.namespace.to_string();
        }
        if new.key.is_none() {
            new.key = found.key.as_ref().map(|k| k.to_string());
        }
        let mut fresh = self.prepare(&new, ctx)?;
        let secrets = self.screen(&mut fresh)?;
        fresh.supersedes = Some(found.id.clone());
        let now = fresh.created;
        let ((old, old_new_path, fresh, fresh_path), commit) = self.store.transact(|snap| {
            let mut old = read_memory_at(snap, &old_path, &found.id)?;
            if let Some(by) = &old.superseded_by {
                return Err(Error::Invalid {
                    what: "supersede",
                    value: old.id.to_string(),
                    reason: format!("it is already superseded by {by}"),
                });
            }
            check_namespace(snap, &fresh.namespace)?;
            old.status = Status::Superseded;
            old.superseded_by = Some(fresh.id.clone());
            old.updated = now.max(old.created);
            let mut edits = Vec::new();
            // A superseded memory releases its key path (see `path_of`).
            let old_target = path_of(&old);
            let key_passes =
                old.key.is_some() && old.key == fresh.key && old.namespace == fresh.namespace;
            if old_target != old_path && !key_passes {
                edits.push(Edit::Remove {
                    path: old_path.clone(),
                });
            }
            // When the key passes on, the new memory's upsert at the key path replaces the old
            // file there (a remove and an upsert of one path in one edit set is refused).
            edits.push(Edit::Upsert {
                path: old_target.clone(),
                content: record::render(&old)?.into_bytes(),
            });
            let mut fresh = fresh.clone();
            let fresh_path = if key_passes {
                path_of(&fresh)
            } else {
                free_path(snap, &mut fresh)?
            };
            edits.push(Edit::Upsert {
                path: fresh_path.clone(),
                content: record::render(&fresh)?.into_bytes(),
            });
            let message = Message {
                subject: format!(
                    "supersede {} by {}: {}",
                    display_name(&old),
                    fresh.id,
                    fresh.summary
                ),
                body: None,
                trailers: ctx.trailers("supersede", &[&old.id, &fresh.id]),
            };
            Ok((edits, message, (old, old_target, fresh, fresh_path)))
        })?;
        let commit = commit_text(commit);
        Ok(Superseded {
            old: Written {
                memory: old,
                path: old_new_path,
                commit: commit.clone(),
                secrets: None,
            },
            new: Written {
                memory: fresh,
                path: fresh_path,
                commit,
                secrets,
            },
        })
    }

    /// Deletes a memory (a deletion commit; its history stays in git).
    pub fn forget(&mut self, query: &str, ctx: &WriteContext) -> Result<Written> {
        let (path, found) = self.resolve(query)?;
        let (memory, commit) = self.store.transact(|snap| {
            let m = read_memory_at(snap, &path, &found.id)?;
            let message = Message {
                subject: format!("forget {}: {}", display_name(&m), m.summary),
                body: None,
                trailers: ctx.trailers("forget", &[&m.id]),
            };
            Ok((vec![Edit::Remove { path: path.clone() }], message, m))
        })?;
        Ok(Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets: None,
        })
    }

    /// Removes every version of a memory from lore's history (for a leaked secret), then
    /// rebuilds the index so no copy of its text remains there either. Returns the memory, what
    /// was rewritten, and how many distinct versions (blobs) were removed.
    pub fn purge(&mut self, query: &str) -> Result<(Memory, PurgeReport, usize)> {
        let (path, found) = match self.resolve(query) {
            Ok(found) => found,
            Err(Error::NotFound(q)) => self.find_forgotten(&q)?,
            Err(e) => return Err(e),
        };
        let mut blobs = HashSet::new();
        let mut paths: Vec<String> = Vec::new();
        let mut scrub: Vec<String> = Vec::new();
        for (v, m) in self.tracked_versions(&path, &found)? {
            if let (Some(blob), Some(m)) = (v.blob, m) {
                blobs.insert(blob);
                if !paths.contains(&v.path) {
                    paths.push(v.path.clone());
                }
                if !scrub.contains(&m.summary) {
                    scrub.push(m.summary.clone());
                }
            }
        }
        let report = self.store.purge(&paths, &blobs, &scrub)?;
        let index = match self.index.take() {
            Some(i) => i.reset()?,
            None => self.fresh_index()?.0.reset()?,
        };
        self.index = Some(index);
        self.index()?;
        Ok((found, report, blobs.len()))
    }

    fn candidate_paths(path: &str, m: &Memory) -> Vec<String> {
        let mut paths = vec![path.to_string(), id_path(&m.namespace, &m.id)];
        if let Some(k) = &m.key {
            paths.push(memory_path(&m.namespace, Some(k), &m.id));
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// The versions of a memory along the chain, newest first, with the parsed record.
    fn tracked_versions(
        &self,
        path: &str,
        m: &Memory,
    ) -> Result<Vec<(FileVersion, Option<Memory>)>> {
        let raw = self.store.history(&Self::candidate_paths(path, m))?;
        self.filter_versions(raw, &m.id)
    }

    fn filter_versions(
        &self,
        raw: Vec<FileVersion>,
        id: &MemoryId,
    ) -> Result<Vec<(FileVersion, Option<Memory>)>> {
        let mut parsed: Vec<(FileVersion, Option<Memory>)> = Vec::new();
        for v in raw {
            let m = match v.blob {
                Some(b) => {
                    let bytes = self.store.read_blob(b)?;
                    std::str::from_utf8(&bytes)
                        .ok()
                        .and_then(|t| record::parse(t, &v.path).ok())
                }
                None => None,
            };
            parsed.push((v, m));
        }
        // A deletion belongs to this memory if the next older version at that path is its own.
        let mut keep = Vec::new();
        for (i, (v, m)) in parsed.iter().enumerate() {
            let ours = match (v.blob, m) {
                (Some(_), Some(m)) => &m.id == id,
                (Some(_), None) => false,
                (None, _) => parsed[i + 1..]
                    .iter()
                    .find(|(older, _)| older.path == v.path)
                    .is_some_and(|(_, om)| om.as_ref().is_some_and(|om| &om.id == id)),
            };
            if ours {
                keep.push((v.clone(), m.clone()));
            }
        }
        Ok(keep)
    }

    fn versions(&self, path: &str, m: &Memory) -> Result<Vec<MemoryVersion>> {
        Ok(self
            .tracked_versions(path, m)?
            .into_iter()
            .map(|(v, memory)| MemoryVersion {
                commit: v.commit.to_string(),
                time: Timestamp::from_second(v.time).unwrap_or(Timestamp::UNIX_EPOCH),
                subject: v.subject,
                committer: v.committer,
                path: v.path,
                memory,
            })
            .collect())
    }

    /// The versions of a memory, newest first (including its deletion, if forgotten — give
    /// the id of a forgotten memory and its history is still found in git).
    pub fn history(&mut self, query: &str) -> Result<(Memory, Vec<MemoryVersion>)> {
        let (path, m) = match self.resolve(query) {
            Ok(found) => found,
            Err(Error::NotFound(q)) => self.find_forgotten(&q)?,
            Err(e) => return Err(e),
        };
        let versions = self.versions(&path, &m)?;
        Ok((m, versions))
    }

    /// Looks for a memory that is no longer at the tip, by exact id, through the chain.
    /// Audits stored memories for secrets: every memory at the tip, and with `history` every
    /// earlier version and forgotten memory still reachable in lore's history (each blob once).
    pub fn scan_secrets(&self, history: bool) -> Result<Vec<StoredSecret>> {
        let mut out = Vec::new();
        let Some(tip) = self.store.tip()? else {
            return Ok(out);
        };
        let mut seen = HashSet::new();
        let mut scan_blob = |path: &str, blob: Oid, commit: Option<Oid>, out: &mut Vec<_>| {
            if layout::classify(path) != layout::PathKind::Memory || !seen.insert(blob) {
                return Ok::<_, Error>(());
            }
            let bytes = self.store.read_blob(blob)?;
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Ok(());
            };
            let Ok(m) = record::parse(text, path) else {
                return Ok(());
            };
            let in_summary = secrets::scan_field(&m.summary, "summary");
            let mut findings = in_summary.clone();
            findings.extend(secrets::scan_field(&m.body, "body"));
            if !findings.is_empty() {
                out.push(StoredSecret {
                    id: m.id.to_string(),
                    path: path.to_string(),
                    summary: secrets::redact(&m.summary, &in_summary),
                    current: commit.is_none(),
                    commit: commit.map(|c| c.to_string()),
                    findings,
                });
            }
            Ok(())
        };
        for file in self.store.files(Some(tip))? {
            scan_blob(&file.path, file.blob, None, &mut out)?;
        }
        if history {
            let mut walk = self.store.repo().revwalk()?;
            walk.push(tip)?;
            for oid in walk {
                let oid = oid?;
                let commit = self.store.repo().find_commit(oid)?;
                let parent = commit.parent_ids().next();
                for change in self.store.diff(parent, Some(oid))? {
                    if let Some(blob) = change.new {
                        scan_blob(&change.path, blob, Some(oid), &mut out)?;
                    }
                }
            }
        }
        Ok(out)
    }

    fn find_forgotten(&self, query: &str) -> Result<(String, Memory)> {
        let id = MemoryId::parse(query).map_err(|_| Error::NotFound(query.to_string()))?;
        let Some(tip) = self.store.tip()? else {
            return Err(Error::NotFound(query.to_string()));
        };
        let mut walk = self.store.repo().revwalk()?;
        walk.push(tip)?;
        for oid in walk {
            let commit = self.store.repo().find_commit(oid?)?;
            let mentions = commit
                .message()
                .ok()
                .is_some_and(|msg| msg.contains(&format!("Lore-Memory: {id}")));
            if !mentions {
                continue;
            }
            for parent in commit.parents() {
                let snap = self.store.snapshot(Some(parent.id()))?;
                for change in self.store.diff(Some(parent.id()), Some(commit.id()))? {
                    if layout::classify(&change.path) == layout::PathKind::Memory
                        && let Some(bytes) = snap.read(&change.path)?
                        && let Ok(text) = std::str::from_utf8(&bytes)
                        && let Ok(m) = record::parse(text, &change.path)
                        && m.id == id
                    {
                        return Ok((change.path, m));
                    }
                }
            }
        }
        Err(Error::NotFound(query.to_string()))
    }

    /// Deletes and rebuilds the index from the refs.
    pub fn reindex(&mut self) -> Result<CatchUp> {
        self.reindex_with(&crate::progress::Silent)
    }

    /// [`Lore::reindex`], reporting progress to `progress`.
    pub fn reindex_with(&mut self, progress: &dyn crate::progress::Progress) -> Result<CatchUp> {
        self.open_index()?;
        let index = self.index.take().ok_or_else(missing_index)?.reset()?;
        let index = self.index.insert(index);
        index.catch_up_with(&self.store, progress)
    }

    /// Where the store is, what it holds, and the index's state.
    pub fn status(&mut self) -> Result<StoreStatus> {
        // Freshness as this call found it (a long-lived handle caught up long ago).
        self.last_catch_up = None;
        self.index()?;
        let caught = self.last_catch_up.clone().unwrap_or_default();
        let was_current = !caught.moved;
        let index = self.index.as_ref().ok_or_else(missing_index)?;
        let counts = index.counts()?;
        let registered = index.registered_namespaces()?;
        let mut namespaces: Vec<NamespaceCount> = Vec::new();
        for name in BUILTIN_NAMESPACES
            .iter()
            .map(|s| s.to_string())
            .chain(registered.iter().cloned())
            .chain(counts.iter().map(|(n, _, _)| n.clone()))
        {
            if namespaces.iter().any(|n| n.namespace == name) {
                continue;
            }
            let mut by_status = std::collections::BTreeMap::new();
            for (n, st, c) in &counts {
                if *n == name {
                    by_status.insert(st.clone(), *c);
                }
            }
            namespaces.push(NamespaceCount {
                builtin: BUILTIN_NAMESPACES.contains(&name.as_str()),
                total: by_status.values().sum(),
                namespace: name,
                by_status,
            });
        }
        let tip = self.store.tip()?;
        let project = match self.store.meta(tip)? {
            Some(meta) => meta.project,
            None if *self.store.kind() == StoreKind::Repository => {
                Some(self.store.project_identity())
            }
            None => None,
        };
        Ok(StoreStatus {
            kind: self.store.kind().clone(),
            git_dir: self.store.common_dir().display().to_string(),
            workdir: self.store.workdir().map(|w| w.display().to_string()),
            project,
            memory_ref: crate::store::MEMORY_REF.to_string(),
            tip: tip.map(|t| t.to_string()),
            total: namespaces.iter().map(|n| n.total).sum(),
            namespaces,
            invalid: index.invalid_files()?,
            index: IndexStatus {
                path: index.path().display().to_string(),
                was_current,
                caught_up_files: caught.upserted + caught.removed,
                embedder: self
                    .embedder
                    .as_ref()
                    .map(|e| e.id().to_string())
                    .unwrap_or_else(|| "none".into()),
            },
        })
    }

    /// Checks every memory's citations against the current files (the work tree, else `HEAD`):
    /// a memory whose cited lines no longer appear in the file, or whose cited file changed or
    /// is gone, is marked stale in the index (recall and context show it); one that matches
    /// again is cleared.
    pub fn verify(&mut self) -> Result<VerifyReport> {
        let all = self.list(&ListFilter::default())?;
        let mut report = VerifyReport::default();
        for m in all.iter().filter(|m| !m.citations.is_empty()) {
            report.checked += 1;
            let mut reasons = Vec::new();
            for c in &m.citations {
                let Some(pinned) = c.blob.as_deref().and_then(|b| git2::Oid::from_str(b).ok())
                else {
                    report.unpinned += 1;
                    continue;
                };
                let place = match &c.lines {
                    Some(l) => format!("{}:{l}", c.path),
                    None => c.path.clone(),
                };
                let Some(current) = self.current_file(&c.path)? else {
                    reasons.push(format!("{} no longer exists", c.path));
                    continue;
                };
                let now = git2::Oid::hash_object(git2::ObjectType::Blob, &current)?;
                if now == pinned {
                    continue;
                }
                match (&c.lines, self.store.repo().find_blob(pinned)) {
                    (Some(lines), Ok(old)) => {
                        let old = String::from_utf8_lossy(old.content()).into_owned();
                        let cited: Vec<&str> = old
                            .lines()
                            .skip(lines.start.saturating_sub(1) as usize)
                            .take((lines.end + 1 - lines.start) as usize)
                            .collect();
                        let new = String::from_utf8_lossy(&current).into_owned();
                        let new_lines: Vec<&str> = new.lines().collect();
                        let still_there = !cited.is_empty()
                            && new_lines
                                .windows(cited.len())
                                .any(|w| w == cited.as_slice());
                        if !still_there {
                            reasons.push(format!("{place} changed"));
                        }
                    }
                    _ => reasons.push(format!("{place} changed")),
                }
            }
            let index = self.index()?;
            if reasons.is_empty() {
                index.set_stale(m.id.as_str(), "", None)?;
            } else {
                index.set_stale(m.id.as_str(), "", Some(&reasons.join("; ")))?;
                report.stale.push(StaleMemory {
                    id: m.id.to_string(),
                    summary: m.summary.clone(),
                    reasons,
                });
            }
        }
        Ok(report)
    }

    /// A file's current content: from the work tree, else from `HEAD` (`None`: absent).
    fn current_file(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let repo = self.store.repo();
        if let Some(workdir) = repo.workdir() {
            return match std::fs::read(workdir.join(path)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io(format!("reading {path}"), e)),
            };
        }
        let Ok(head) = repo.head().and_then(|h| h.peel_to_tree()) else {
            return Ok(None);
        };
        match head.get_path(std::path::Path::new(path)) {
            Ok(entry) => Ok(repo
                .find_blob(entry.id())
                .ok()
                .map(|b| b.content().to_vec())),
            Err(_) => Ok(None),
        }
    }

    /// Makes a citation of a file in the work tree (path relative to the repository root),
    /// pinned to its current content's blob (written to the object store if it is new).
    pub fn cite(&self, path: &str, lines: Option<LineRange>) -> Result<Citation> {
        let path = check_relative_path(path)?;
        let repo = self.store.repo();
        let Some(workdir) = repo.workdir() else {
            return Err(Error::Invalid {
                what: "citation",
                value: path,
                reason: "this store has no work tree to cite files from".into(),
            });
        };
        let full = workdir.join(&path);
        let blob = match std::fs::read(&full) {
            Ok(bytes) => repo.blob(&bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Invalid {
                    what: "citation",
                    value: path,
                    reason: "no such file in the work tree".into(),
                });
            }
            Err(e) => return Err(Error::io(format!("reading {}", full.display()), e)),
        };
        Ok(Citation {
            path,
            lines,
            blob: Some(blob.to_string()),
        })
    }

    /// The `files` hydration level: cited files at their blobs, else the files the anchor
    /// commit changed, bounded in count and size.
    pub fn hydrate_files(&self, memory: &Memory, limits: FileLimits) -> Result<Vec<FileContent>> {
        let repo = self.store.repo();
        let mut out = Vec::new();
        if !memory.citations.is_empty() {
            for c in memory.citations.iter().take(limits.max_files) {
                let blob = c
                    .blob
                    .as_deref()
                    .and_then(|b| Oid::from_str(b).ok())
                    .and_then(|oid| repo.find_blob(oid).ok());
                let mut fc = FileContent {
                    path: c.path.clone(),
                    source: c
                        .blob
                        .as_ref()
                        .map(|b| format!("blob {b}"))
                        .unwrap_or_else(|| "no blob recorded".into()),
                    lines: c.lines,
                    content: None,
                    truncated: false,
                    note: None,
                };
                match blob {
                    Some(blob) => {
                        let text = String::from_utf8_lossy(blob.content());
                        let text = match c.lines {
                            Some(r) => text
                                .lines()
                                .skip(r.start as usize - 1)
                                .take((r.end - r.start + 1) as usize)
                                .collect::<Vec<_>>()
                                .join("\n"),
                            None => text.into_owned(),
                        };
                        let (text, cut) = bounded(text, limits.max_bytes);
                        fc.content = Some(text);
                        fc.truncated = cut;
                    }
                    None => {
                        fc.note = Some(
                            "the cited content is no longer in the object store (pruned?)".into(),
                        )
                    }
                }
                out.push(fc);
            }
            return Ok(out);
        }
        let Some(anchor) = memory.anchor.as_deref() else {
            return Ok(out);
        };
        let Ok(commit) = Oid::from_str(anchor).and_then(|oid| repo.find_commit(oid)) else {
            out.push(FileContent {
                path: String::new(),
                source: format!("anchor {anchor}"),
                lines: None,
                content: None,
                truncated: false,
                note: Some("the anchor commit is not in this repository".into()),
            });
            return Ok(out);
        };
        let tree = commit.tree()?;
        let parent_tree = commit.parent(0).ok().map(|p| p.tree()).transpose()?;
        let diff = repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)?;
        for delta in diff.deltas().take(limits.max_files) {
            let file = delta.new_file();
            let path = file
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (content, truncated, note) = if file.exists() {
                match repo.find_blob(file.id()) {
                    Ok(b) if !b.is_binary() => {
                        let (t, cut) = bounded(
                            String::from_utf8_lossy(b.content()).into_owned(),
                            limits.max_bytes,
                        );
                        (Some(t), cut, None)
                    }
                    Ok(_) => (None, false, Some("binary file".to_string())),
                    Err(_) => (None, false, Some("blob missing".to_string())),
                }
            } else {
                (
                    None,
                    false,
                    Some("deleted by the anchor commit".to_string()),
                )
            };
            out.push(FileContent {
                path,
                source: format!("anchor {anchor}"),
                lines: None,
                content,
                truncated,
                note,
            });
        }
        Ok(out)
    }
}

/// What a batch write did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BatchReport {
    /// New memories written.
    pub written: usize,
    /// Existing memories overwritten.
    pub replaced: usize,
    /// Memories already present with identical content.
    pub unchanged: usize,
    /// Memories skipped, with why.
    pub conflicts: Vec<String>,
    /// The commit, if anything was written.
    pub commit: Option<String>,
    /// The secret scanner's reports, by memory id.
    pub secrets: Vec<(String, SecretReport)>,
}

/// Screens a memory's summary and body under `policy`, redacting in place when it says so.
fn screen_memory(memory: &mut Memory, policy: SecretPolicy) -> Result<Option<SecretReport>> {
    let report = secrets::screen(
        &mut [("summary", &mut memory.summary), ("body", &mut memory.body)],
        policy,
    )?;
    if report.is_some() {
        // A redaction placeholder can lengthen the summary past its limit.
        if memory.summary.chars().count() > crate::model::MAX_SUMMARY_CHARS {
            memory.summary = memory
                .summary
                .chars()
                .take(crate::model::MAX_SUMMARY_CHARS - 1)
                .collect::<String>()
                + "…";
        }
        memory.validate()?;
    }
    Ok(report)
}

fn commit_text(commit: Option<Oid>) -> String {
    commit.map(|c| c.to_string()).unwrap_or_default()
}

fn missing_index() -> Error {
    Error::Parse {
        context: "opening the index".into(),
        message: "it could not be opened".into(),
    }
}

fn bounded(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (text[..cut].to_string(), true)
}

fn display_name(m: &Memory) -> String {
    match &m.key {
        Some(k) => format!("{}/{k}", m.namespace),
        None => format!("{}/{}", m.namespace, m.id),
    }
}

fn namespace_known(snap: &Snapshot<'_>, ns: &Namespace) -> Result<bool> {
    Ok(ns.is_builtin() || snap.blob_id(&namespace_marker_path(ns))?.is_some())
}

fn namespace_marker_edit(ns: &Namespace, description: &str) -> Result<Edit> {
    #[derive(Serialize)]
    struct Marker<'a> {
        name: &'a str,
        description: &'a str,
    }
    let text = serde_norway::to_string(&Marker {
        name: ns.as_str(),
        description,
    })
    .map_err(|e| Error::Parse {
        context: "writing a namespace marker".into(),
        message: e.to_string(),
    })?;
    Ok(Edit::Upsert {
        path: namespace_marker_path(ns),
        content: text.into_bytes(),
    })
}

fn check_namespace(snap: &Snapshot<'_>, ns: &Namespace) -> Result<()> {
    if namespace_known(snap, ns)? {
        return Ok(());
    }
    let suggestion = BUILTIN_NAMESPACES
        .iter()
        .map(|b| (edit_distance(b, ns.as_str()), *b))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, b)| b.to_string());
    Err(Error::UnknownNamespace {
        name: ns.to_string(),
        suggestion,
    })
}

/// Picks the memory's path on this tip: the key's path (which must be free), or its id path
/// (a fresh id is drawn in the astronomically rare case the id is taken).
fn free_path(snap: &Snapshot<'_>, memory: &mut Memory) -> Result<String> {
    if let Some(key) = &memory.key {
        let path = memory_path(&memory.namespace, Some(key), &memory.id);
        if let Some(bytes) = snap.read(&path)? {
            let holder = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| record::parse(t, &path).ok())
                .map(|m| m.id.to_string())
                .unwrap_or_else(|| "unreadable".into());
            return Err(Error::KeyExists {
                namespace: memory.namespace.to_string(),
                key: key.to_string(),
                id: holder,
            });
        }
        return Ok(path);
    }
    loop {
        let path = id_path(&memory.namespace, &memory.id);
        if snap.blob_id(&path)?.is_none() {
            return Ok(path);
        }
        memory.id = MemoryId::generate()?;
    }
}

fn read_memory_at(snap: &Snapshot<'_>, path: &str, id: &MemoryId) -> Result<Memory> {
    let changed = || Error::Changed { id: id.to_string() };
    let bytes = snap.read(path)?.ok_or_else(changed)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| changed())?;
    let m = record::parse(text, path)?;
    if &m.id != id {
        return Err(changed());
    }
    Ok(m)
}

fn apply_patch(m: &mut Memory, patch: &Patch) -> Result<()> {
    if let Some(s) = &patch.summary {
        check_summary(s)?;
        m.summary = s.clone();
    }
    if let Some(b) = &patch.body {
        m.body = b.clone();
    }
    let add = normalize_tags(&patch.add_tags)?;
    let remove = normalize_tags(&patch.remove_tags)?;
    m.tags.retain(|t| !remove.contains(t));
    for t in add {
        if !m.tags.contains(&t) {
            m.tags.push(t);
        }
    }
    if let Some(st) = patch.status {
        m.status = st;
    }
    if let Some(c) = patch.confidence {
        m.confidence = Some(c);
    }
    for c in &patch.add_citations {
        if !m.citations.contains(c) {
            m.citations.push(c.clone());
        }
    }
    for r in &patch.add_relates_to {
        let id = MemoryId::parse(r)?;
        if !m.relates_to.contains(&id) {
            m.relates_to.push(id);
        }
    }
    Ok(())
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
