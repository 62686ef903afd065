//! The `Lore` handle: one store, its lazily opened index, the embedder, and what the handle has
//! to tell its caller (index notices, warnings). Each operation on memories lives in the module of
//! its concern below.
//!
//! Writes go straight to git through [`Store::transact`] and never wait for the index; reads open
//! the index lazily and catch it up from the refs first, rebuilding it if it is damaged.

mod changes;
mod citations;
mod conflicts;
mod doctor;
mod edit;
mod history;
mod lifecycle;
mod lost_writes;
mod namespaces;
mod novelty;
mod resolve;
mod screening;
mod stack;
mod status;
mod upkeep;
mod write;

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use crate::embed::SharedEmbedder;
use crate::error::{Error, Result};
use crate::index::{self, CatchUp, Index, IndexNotice};
use crate::model::Memory;
use crate::secrets::{SecretPolicy, SecretReport};
use crate::store::Store;

pub use crate::store::WriteContext;
pub use citations::{FileContent, FileLimits, StaleMemory, VerifyReport};
pub use conflicts::{Conflict, ConflictVersion, Resolution, Resolved};
pub use doctor::{OtherHead, RefCheck, RefState, RestorePoint};
pub use edit::{Patch, Superseded};
pub use history::{MemoryVersion, MergeBrought};
pub use lifecycle::{GcReport, IndexPacked, LifecyclePolicy};
pub use novelty::{DuplicateOf, Novelty, Remembered};
pub use screening::{DEFAULT_MAX_BODY_BYTES, MAX_BODY_CONFIG, RefSecret, StoredSecret, WriteRules};
pub use stack::ScopeSources;
pub use status::{IndexStatus, NamespaceCount, StoreStatus};
pub use upkeep::DiskUse;
pub use write::{BatchReport, BatchWrite, Collisions, NewMemory, Written};

/// The contested memories (id → conflict name) at one tip of the memory chain.
type ContestedAt = (
    Option<git2::Oid>,
    std::collections::HashMap<crate::model::MemoryId, String>,
);

/// A store and its (lazily opened) index.
pub struct Lore {
    store: Store,
    embedder: Option<SharedEmbedder>,
    index: Option<Index>,
    notices: Vec<IndexNotice>,
    /// Things the caller should hear about that did not stop the operation (a version in the
    /// history that is not a readable memory, a superseded memory purged from history, …).
    warnings: RefCell<Vec<String>>,
    last_catch_up: Option<CatchUp>,
    /// Contested memories at a tip (see `conflicts.rs`), cached while the tip stays.
    contradictions: RefCell<Option<ContestedAt>>,
    /// The time zone days and weeks are read in ("yesterday", "last week"): UTC unless the
    /// front end sets the user's.
    time_zone: ZoneSource,
    /// The scope this store is (labels its hits).
    own_scope: crate::scope::Scope,
    /// The other scopes' stores a read may stack with this one.
    stack: stack::Stack,
    /// Upkeep a read finds due (the vector cache written again) is left for [`Lore::upkeep`]
    /// (see [`Lore::defer_upkeep`]).
    defer_upkeep: bool,
}

impl Lore {
    /// Wraps a store. The index is opened on first read.
    pub fn new(store: Store) -> Lore {
        let own_scope = stack::default_scope(&store);
        Lore {
            own_scope,
            stack: stack::Stack::default(),
            store,
            embedder: None,
            index: None,
            notices: Vec::new(),
            warnings: RefCell::new(Vec::new()),
            last_catch_up: None,
            contradictions: RefCell::new(None),
            time_zone: ZoneSource::fixed(jiff::tz::TimeZone::UTC),
            defer_upkeep: false,
        }
    }

    /// Sets the time zone in which queries' days and weeks are read.
    pub fn set_time_zone(&mut self, time_zone: jiff::tz::TimeZone) {
        self.time_zone = ZoneSource::fixed(time_zone);
    }

    /// Sets how to find the time zone queries' days and weeks are read in, asked at most once
    /// and only when a query is read for time (finding the system's zone reads the time zone
    /// database: a cost a command that reads no query, a write, should not pay), and by a query
    /// only when some expression in it reads as time on a date it could have in some zone (see
    /// [`crate::index::time_window::find_at`]).
    pub fn set_time_zone_with(
        &mut self,
        find: impl Fn() -> jiff::tz::TimeZone + Send + Sync + 'static,
    ) {
        self.time_zone = ZoneSource::lazy(find);
    }

    /// The window of time `text` names ("last week", "two days ago"), read at `now` (default:
    /// the clock) in this handle's time zone.
    pub fn time_window(
        &self,
        text: &str,
        now: Option<jiff::Timestamp>,
    ) -> Option<crate::index::time_window::TimeWindow> {
        let now = now.unwrap_or_else(jiff::Timestamp::now);
        crate::index::time_window::find_at(text, now, || self.time_zone.get())
    }

    /// Overrides the secret policy for this handle's writes (else `git config lore.secrets`,
    /// else redact).
    pub fn set_secret_policy(&mut self, policy: Option<SecretPolicy>) {
        self.store.set_secret_policy(policy);
    }

    /// The secret policy in force: the override, else the repository's `lore.secrets`, else
    /// [`SecretPolicy::Redact`] (see [`Store::secret_policy`]).
    pub fn secret_policy(&self) -> Result<SecretPolicy> {
        self.store.secret_policy()
    }

    /// Runs a memory's text (summary and body) through the secret scanner under the policy in
    /// force, redacting in place when the policy says so.
    pub fn screen(&self, memory: &mut Memory) -> Result<Option<SecretReport>> {
        screening::screen_memory(memory, self.write_rules()?)
    }

    /// What every write of this handle is checked against: the secret policy in force and the
    /// largest body (`git config lore.maxBodyBytes`, else 1 MiB).
    pub fn write_rules(&self) -> Result<screening::WriteRules> {
        Ok(screening::WriteRules {
            policy: self.secret_policy()?,
            max_body_bytes: screening::configured_max_body(&self.store)?,
        })
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

    /// Warnings gathered so far: problems that did not stop an operation but that the user
    /// should hear about (front ends show them, like notices).
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut all = std::mem::take(self.warnings.get_mut());
        all.extend(self.store.take_warnings());
        all
    }

    /// Records a warning for [`Lore::take_warnings`].
    pub fn warn(&self, warning: String) {
        self.warnings.borrow_mut().push(warning);
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
        let path = index::index_path(&self.store);
        let (mut index, notice) = match Index::open(&path) {
            Err(e) if index::is_out_of_space(&path, &e) => {
                self.warn(out_of_space_warning(&path, &e));
                (Index::open_in_memory(&path)?, None)
            }
            other => other?,
        };
        index.set_embedder(self.embedder.clone());
        Ok((index, notice))
    }

    fn open_index(&mut self) -> Result<()> {
        if self.index.is_none() {
            let (index, notice) = self.fresh_index()?;
            self.notices.extend(notice);
            self.index = Some(index);
        }
        if let (true, Some(index)) = (self.defer_upkeep, &self.index) {
            index.defer_compaction();
        }
        Ok(())
    }

    /// Opens the index if needed and catches it up with the refs.
    pub fn index(&mut self) -> Result<&Index> {
        // Every read (a long-lived handle too): catching up to a missing ref would empty the
        // index, and with it the last record of what the ref held.
        self.keep_a_lost_memory_ref()?;
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
            Err(e) if index::is_out_of_space(&index::index_path(&self.store), &e) => {
                self.read_in_memory(&e)?
            }
            Err(e) => return Err(e),
        }
        self.index.as_ref().ok_or_else(missing_index)
    }

    /// The disk is full: reads go on from a copy of the index in memory, caught up there, and
    /// the caller hears why.
    fn read_in_memory(&mut self, cause: &Error) -> Result<()> {
        let path = index::index_path(&self.store);
        let mut index = Index::open_in_memory(&path)?;
        index.set_embedder(self.embedder.clone());
        let index = self.index.insert(index);
        self.last_catch_up = Some(index.catch_up(&self.store)?);
        self.warn(out_of_space_warning(&path, cause));
        Ok(())
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
        if self.defer_upkeep {
            index.defer_compaction();
        }
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
        let result = match first {
            Err(e) if index::is_corruption(&e) => {
                self.rebuild_index(&e.to_string())?;
                f(self.index()?)
            }
            other => other,
        };
        if let Some(index) = &self.index {
            for warning in index.take_warnings() {
                self.warn(warning);
            }
        }
        result
    }
}

fn out_of_space_warning(index: &std::path::Path, cause: &Error) -> String {
    format!(
        "no space left for the index in {} ({cause}): it was read into memory for this \
         command; free space there (or raise the file-size limit) for writes and a lasting index",
        index.parent().unwrap_or(index).display()
    )
}

fn missing_index() -> Error {
    Error::Parse {
        context: "opening the index".into(),
        message: "it could not be opened".into(),
    }
}

/// A handle's time zone: given, or found on first need and then kept (shared by the handles a
/// stacked read opens, so it is found at most once).
#[derive(Clone)]
pub(crate) struct ZoneSource {
    zone: Arc<OnceLock<jiff::tz::TimeZone>>,
    find: Option<Arc<dyn Fn() -> jiff::tz::TimeZone + Send + Sync>>,
}

impl ZoneSource {
    fn fixed(zone: jiff::tz::TimeZone) -> ZoneSource {
        ZoneSource {
            zone: Arc::new(OnceLock::from(zone)),
            find: None,
        }
    }

    fn lazy(find: impl Fn() -> jiff::tz::TimeZone + Send + Sync + 'static) -> ZoneSource {
        ZoneSource {
            zone: Arc::new(OnceLock::new()),
            find: Some(Arc::new(find)),
        }
    }

    /// The zone (found now if it was not yet).
    fn get(&self) -> jiff::tz::TimeZone {
        self.zone
            .get_or_init(|| match &self.find {
                Some(find) => find(),
                None => jiff::tz::TimeZone::UTC,
            })
            .clone()
    }
}
