//! Writing memories: one new memory and a batch (import); the path and commit-message rules
//! every write shares.

use std::collections::HashSet;

use git2::Oid;
use serde::Serialize;

use super::Lore;
use super::changes::IdPaths;
use super::namespaces::{check_namespace, namespace_known, namespace_marker_edit};
use super::screening::screen_memory;
use crate::error::{Error, Result};
use crate::model::{Citation, Key, Memory, MemoryId, Namespace, Status, normalize_tags};
use crate::record;

use crate::secrets::SecretReport;
use crate::store::layout::{id_path, memory_path, path_of};
use crate::store::{Edit, Message, Snapshot, WriteContext};

/// Memories from which a batch write lands its objects as one pack rather than a loose file
/// each (see [`crate::store::Store::transact_packed`]); smaller writes stay loose, for git's
/// automatic packing, rather than leave many small packs.
const PACKED_FROM: usize = 1_000;

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

/// How [`Lore::write_batch`] records a batch and treats ids that hold other content.
#[derive(Clone, Copy, Debug)]
pub struct BatchWrite<'a> {
    /// The commit's subject (the count of memories written is added to it).
    pub subject: &'a str,
    /// The commit's `Lore-Action` trailer: what wrote the batch (`import`, `move`, …).
    pub action: &'a str,
    /// What a memory whose id or path holds other content gets.
    pub collisions: Collisions,
}

impl<'a> BatchWrite<'a> {
    /// An import under this subject that skips (and reports) collisions.
    pub fn import(subject: &'a str) -> BatchWrite<'a> {
        BatchWrite {
            subject,
            action: "import",
            collisions: Collisions::Report,
        }
    }
}

/// What a batch does with a memory whose id or path already holds other content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collisions {
    /// Skip it and report it.
    Report,
    /// Overwrite it (an id living at another path moves).
    Replace,
}

/// The result of a write.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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

/// What a batch write did.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
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

impl BatchReport {
    /// Adds what another batch of the same import did (its commit is the latest).
    pub fn absorb(&mut self, other: BatchReport) {
        self.written += other.written;
        self.replaced += other.replaced;
        self.unchanged += other.unchanged;
        self.conflicts.extend(other.conflicts);
        self.commit = other.commit.or(self.commit.take());
        self.secrets.extend(other.secrets);
    }
}

/// What a guard found on the tip a write is about to land on: write, or give back this value
/// instead of writing.
pub(super) type Guarded<T> = std::result::Result<Written, T>;

impl Lore {
    pub(super) fn author(&self, ctx: &WriteContext) -> Option<String> {
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
        let unguarded =
            self.remember_guarded(new, ctx, |_| Ok(None::<std::convert::Infallible>))?;
        match unguarded {
            Ok(written) => Ok(written),
            Err(never) => match never {},
        }
    }

    /// Writes a new memory unless `guard`, run on the tip the commit would land on (again on
    /// every retry), gives a reason not to: then nothing is written and the reason comes back.
    pub(super) fn remember_guarded<T>(
        &self,
        new: &NewMemory,
        ctx: &WriteContext,
        mut guard: impl FnMut(&Snapshot<'_>) -> Result<Option<T>>,
    ) -> Result<Guarded<T>> {
        let mut memory = self.prepare(new, ctx)?;
        let secrets = self.screen(&mut memory)?;
        let (landed, commit) = self.store.transact(|snap| {
            if let Some(reason) = guard(snap)? {
                return Ok((Vec::new(), Message::default(), Err(reason)));
            }
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
                Ok(path),
            ))
        })?;
        Ok(landed.map(|path| Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets,
        }))
    }

    /// Writes many complete memories in one commit (import, move, benchmarks' fills). Memories
    /// whose id already exists with the same content are skipped; ones that collide with
    /// different content are reported and skipped (or overwritten, as `how` says). Where each
    /// id already lives is worked out for the tip the commit lands on, again on every retry.
    pub fn write_batch(
        &mut self,
        memories: &[Memory],
        how: &BatchWrite,
        ctx: &WriteContext,
    ) -> Result<BatchReport> {
        let (subject, replace) = (how.subject, how.collisions == Collisions::Replace);
        // The policy is read from the repository's configuration once for the whole batch.
        let policy = self.write_rules()?;
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
        // Where each id lives on the tip the index reflects (a memory may come back with
        // another key or namespace); each attempt brings this forward to its own tip.
        let ids: Vec<&str> = memories.iter().map(|m| m.id.as_str()).collect();
        let indexed = if self.store.tip()?.is_some() {
            self.read(|i| IdPaths::read(i, &ids))?
        } else {
            IdPaths::empty(&ids)
        };
        let write = |snap: &crate::store::Snapshot<'_>| {
            let existing = indexed.on(&self.store, snap)?;
            let mut report = BatchReport::default();
            let mut edits = Vec::new();
            let mut seen_paths = HashSet::new();
            let mut known_ns = HashSet::new();
            for m in memories {
                if known_ns.insert(m.namespace.clone()) && !namespace_known(snap, &m.namespace)? {
                    edits.push(namespace_marker_edit(
                        &m.namespace,
                        &format!("registered by {}", how.action),
                    )?);
                }
                if !seen_paths.insert(path_of(m)) {
                    report
                        .conflicts
                        .push(format!("{}: given twice in this import", path_of(m)));
                    continue;
                }
                let elsewhere = existing.get(m.id.as_str()).map(String::as_str);
                edits.extend(batch_edits(snap, m, elsewhere, replace, &mut report)?);
            }
            let written = report.written + report.replaced;
            let message = Message {
                subject: format!("{subject} ({written} memories)"),
                body: None,
                trailers: ctx.trailers(how.action, &[]),
            };
            Ok((edits, message, report))
        };
        let (report, commit) = match memories.len() >= PACKED_FROM {
            true => self.store.transact_packed(write)?,
            false => self.store.transact(write)?,
        };
        Ok(BatchReport {
            commit: commit.map(|c| c.to_string()),
            secrets: secret_reports,
            ..report
        })
    }

    /// Checks memories as [`Lore::write_batch`] does before it writes (each valid, within the
    /// size limit, allowed by the secret policy) and writes nothing: an import of several
    /// batches checks all of them before it writes the first.
    pub fn check_batch(&self, memories: &[Memory]) -> Result<()> {
        let policy = self.write_rules()?;
        for m in memories {
            m.validate()?;
            screen_memory(&mut m.clone(), policy)?;
        }
        Ok(())
    }
}

/// The commit id as text (empty when nothing was written).
pub(super) fn commit_text(commit: Option<Oid>) -> String {
    commit.map(|c| c.to_string()).unwrap_or_default()
}

/// `namespace/key`, or `namespace/id` for an unkeyed memory: how commit subjects name it.
pub(super) fn display_name(m: &Memory) -> String {
    match &m.key {
        Some(k) => format!("{}/{k}", m.namespace),
        None => format!("{}/{}", m.namespace, m.id),
    }
}

/// Picks the memory's path on this tip: the key's path (which must be free), or its id path
/// (a fresh id is drawn in the astronomically rare case the id is taken).
pub(super) fn free_path(snap: &Snapshot<'_>, memory: &mut Memory) -> Result<String> {
    if let Some(key) = &memory.key {
        let path = memory_path(&memory.namespace, Some(key), &memory.id);
        if let Some(bytes) = snap.read(&path)? {
            // The holder's id only words the error; a file that is not a memory says so.
            let holder = match std::str::from_utf8(&bytes).map(|t| record::parse(t, &path)) {
                Ok(Ok(m)) => m.id.to_string(),
                Ok(Err(_)) | Err(_) => "unreadable".into(),
            };
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

/// The edits that write one memory of a batch (none when it is there already, or collides
/// without `replace`), counting it in `report`: a memory whose id lives at another path moves
/// (with `replace`), one whose path holds other content is overwritten (with `replace`).
fn batch_edits(
    snap: &crate::store::Snapshot<'_>,
    m: &Memory,
    elsewhere: Option<&str>,
    replace: bool,
    report: &mut BatchReport,
) -> Result<Vec<Edit>> {
    let path = path_of(m);
    let mut edits = Vec::new();
    if let Some(elsewhere) = elsewhere
        && elsewhere != path
        && snap.blob_id(elsewhere)?.is_some()
    {
        if !replace {
            report.conflicts.push(format!(
                "{path}: memory {} exists at {elsewhere} (use --replace to move it)",
                m.id
            ));
            return Ok(Vec::new());
        }
        edits.push(Edit::Remove {
            path: elsewhere.to_string(),
        });
    }
    let content = record::render(m)?;
    match snap.read(&path)? {
        Some(existing) if existing == content.as_bytes() => {
            // Unchanged here; a copy at another path (moved with `replace`) still goes.
            report.unchanged += 1;
            return Ok(edits);
        }
        Some(_) if !replace => {
            report
                .conflicts
                .push(format!("{path}: exists with other content (use --replace)"));
            return Ok(Vec::new());
        }
        Some(_) => report.replaced += 1,
        None => report.written += 1,
    }
    edits.push(Edit::Upsert {
        path,
        content: content.into_bytes(),
    });
    Ok(edits)
}
