//! Operations on the store as a whole: init, status, verify, reindex, the secret scan and
//! namespaces.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::Result;
use crate::memory::{RefCheck, RefSecret, RefState, StoreStatus, StoredSecret, VerifyReport};

/// Create lore's store in this repository.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Init {}

/// What init found or made.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Initialized {
    /// Whether this call created the store (false: it was there).
    pub created: bool,
    /// The git directory holding lore's refs.
    pub git_dir: String,
    /// The memory ref.
    pub memory_ref: String,
    /// The project identity recorded in the store.
    pub project: Option<String>,
}

impl Operation for Init {
    const NAME: &'static str = "init";
    const TITLE: &'static str = "Create the store";
    const DESCRIPTION: &'static str = "Create lore's store in this repository: refs/lore/memory \
        with lore.yaml (format, project identity). The first write does the same, so this is \
        never required.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Initialized;

    fn run(self, env: &mut Env<'_>) -> Result<Initialized> {
        let store = env.lore.store();
        let created = store.init()?;
        let tip = store.tip()?;
        Ok(Initialized {
            created,
            git_dir: store.common_dir().display().to_string(),
            memory_ref: crate::store::MEMORY_REF.to_string(),
            project: store.meta(tip)?.and_then(|m| m.project),
        })
    }
}

/// Where memory is stored and what it holds.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Status {}

impl Operation for Status {
    const NAME: &'static str = "status";
    const TITLE: &'static str = "Store status";
    const DESCRIPTION: &'static str = "Where memory is stored (repository or personal store), \
        counts per namespace and status, unreadable memory files, the index's freshness and \
        embedder, and the scopes recall and context read.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = StoreStatus;

    fn run(self, env: &mut Env<'_>) -> Result<StoreStatus> {
        let mut status = env.lore.status()?;
        status.scopes = env
            .lore
            .scopes_read(None)?
            .iter()
            .map(crate::context::scope_name)
            .collect();
        Ok(status)
    }
}

/// Check citations against the current files.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verify {}

impl Operation for Verify {
    const NAME: &'static str = "verify";
    const TITLE: &'static str = "Verify citations";
    const DESCRIPTION: &'static str = "Check every memory's citations against the current \
        files (work tree, else HEAD); a memory whose cited lines are gone or changed is stale, \
        and recall and context say so.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = VerifyReport;

    fn run(self, env: &mut Env<'_>) -> Result<VerifyReport> {
        env.lore.verify()
    }
}

/// Rebuild the index.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reindex {}

/// What a reindex did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Reindexed {
    /// Memory files indexed.
    pub files: usize,
    /// How long it took.
    pub seconds: f64,
    /// The index file.
    pub index: String,
}

impl Operation for Reindex {
    const NAME: &'static str = "reindex";
    const TITLE: &'static str = "Rebuild the index";
    const DESCRIPTION: &'static str = "Rebuild the index from refs/lore/memory (derived data: \
        safe to delete at any time).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Reindexed;

    fn run(self, env: &mut Env<'_>) -> Result<Reindexed> {
        let started = Instant::now();
        let done = env.lore.reindex_with(env.progress.as_ref())?;
        Ok(Reindexed {
            files: done.upserted,
            seconds: started.elapsed().as_secs_f64(),
            index: crate::index::index_path(env.lore.store())
                .display()
                .to_string(),
        })
    }
}

/// The upkeep reads leave to run apart (see [`crate::Lore::defer_upkeep`]).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Upkeep {}

/// What an upkeep did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Upkept {
    /// The vector cache had grown too many segments and was written again as one.
    pub vectors_compacted: bool,
    /// How long it took.
    pub seconds: f64,
}

impl Operation for Upkeep {
    const NAME: &'static str = "upkeep";
    const TITLE: &'static str = "Upkeep of the index";
    const DESCRIPTION: &'static str = "Catch the index up, then write its vector cache again \
        as one segment if catch-ups have appended too many (commands leave this to a \
        background `lore upkeep` rather than waiting for it).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Upkept;

    fn run(self, env: &mut Env<'_>) -> Result<Upkept> {
        let started = Instant::now();
        let vectors_compacted = env.lore.upkeep()?;
        Ok(Upkept {
            vectors_compacted,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// Check the memory ref, and put it back when it is lost or damaged.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Doctor {
    /// Put the memory ref back at the first restore point (the newest memory commit this clone
    /// still holds, else the newest remote copy), only when it is lost or damaged.
    #[serde(default)]
    pub restore: bool,
}

/// What the doctor found, and did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Diagnosis {
    /// The memory ref as found.
    #[serde(flatten)]
    pub check: RefCheck,
    /// The commit the ref was put back to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored: Option<String>,
}

impl Operation for Doctor {
    const NAME: &'static str = "doctor";
    const TITLE: &'static str = "Check and restore the memory ref";
    const DESCRIPTION: &'static str = "Check refs/lore/memory without the index's help; when it is \
        missing or damaged, list what still knows the memories (memory commits written after \
        the index's tip and found in the object database, the ref's reflog, the commit the \
        index was last caught up to, each remote's copy as last fetched) and other lines of \
        writes found, and with restore=true put it back at the first of them (this clone's \
        newest, else the newest copy).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Diagnosis;

    fn run(self, env: &mut Env<'_>) -> Result<Diagnosis> {
        let check = env.lore.diagnose_memory_ref()?;
        let first = check.restore_points.first().map(|p| p.commit.clone());
        let restored = match (self.restore, &check.state, first) {
            (true, RefState::Missing | RefState::Damaged, Some(commit)) => {
                Some(env.lore.restore_memory_ref(&check, &commit)?.to_string())
            }
            _ => None,
        };
        Ok(Diagnosis { check, restored })
    }
}

/// Audit stored memories for secrets.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scan {
    /// Also scan earlier versions and forgotten memories in lore's history.
    #[serde(default)]
    pub history: bool,
}

/// What the scan found.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Scanned {
    /// Nothing found.
    pub clean: bool,
    /// Whether earlier versions were scanned too.
    pub history: bool,
    /// The memory versions holding secrets.
    pub memories: Vec<StoredSecret>,
    /// Secrets in lore's other refs (context branches, reasoning sessions, score notes), in
    /// every commit they reach.
    pub refs: Vec<RefSecret>,
    /// What to do about them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
}

impl Operation for Scan {
    const NAME: &'static str = "scan";
    const TITLE: &'static str = "Scan for secrets";
    const DESCRIPTION: &'static str = "Audit stored memories for secrets (keys, tokens, \
        private keys, passwords, <private> spans): every memory as it is now, and with \
        history=true every earlier version and forgotten memory in lore's history; and every \
        commit of the context branches, reasoning sessions and score notes.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = Scanned;

    fn run(self, env: &mut Env<'_>) -> Result<Scanned> {
        let memories = env.lore.scan_secrets(self.history)?;
        let refs = env.lore.scan_other_refs()?;
        let mut next = Vec::new();
        if !memories.is_empty() {
            next.push(
                "rotate each secret, then forget each memory listed with purge (forget --purge ID)",
            );
        }
        if !refs.is_empty() {
            next.push("rotate each secret found in a context branch or reasoning session; their history keeps it until the ref is deleted or rewritten");
        }
        Ok(Scanned {
            clean: memories.is_empty() && refs.is_empty(),
            history: self.history,
            next_step: (!next.is_empty()).then(|| next.join("; ")),
            memories,
            refs,
        })
    }
}

/// List namespaces.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Namespaces {}

/// One namespace.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NamespaceEntry {
    /// Its name.
    pub name: String,
    /// Built in (true) or registered.
    pub builtin: bool,
}

/// The namespaces.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NamespaceList {
    /// Built-in ones first, then registered ones.
    pub namespaces: Vec<NamespaceEntry>,
}

impl Operation for Namespaces {
    const NAME: &'static str = "namespaces";
    const TITLE: &'static str = "Namespaces";
    const DESCRIPTION: &'static str = "The namespaces memories can go in: built-in ones and \
        those registered in this store.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = NamespaceList;

    fn run(self, env: &mut Env<'_>) -> Result<NamespaceList> {
        Ok(NamespaceList {
            namespaces: env
                .lore
                .namespaces()?
                .into_iter()
                .map(|(name, builtin)| NamespaceEntry { name, builtin })
                .collect(),
        })
    }
}

/// Register a namespace.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamespaceAdd {
    /// The name (lower-case letters, digits, '-' and '_').
    pub name: String,
    /// What belongs in it.
    #[serde(default)]
    pub description: String,
}

/// Whether a namespace was registered.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NamespaceAdded {
    /// The name.
    pub name: String,
    /// False when it existed already.
    pub added: bool,
}

impl Operation for NamespaceAdd {
    const NAME: &'static str = "namespace_add";
    const TITLE: &'static str = "Register a namespace";
    const DESCRIPTION: &'static str = "Register a namespace of this store's own (one commit); \
        registering one that exists changes nothing.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = NamespaceAdded;

    fn run(self, env: &mut Env<'_>) -> Result<NamespaceAdded> {
        let added = env
            .lore
            .add_namespace(&self.name, &self.description, &env.write.clone())?;
        Ok(NamespaceAdded {
            name: self.name,
            added,
        })
    }
}
