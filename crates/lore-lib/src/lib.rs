//! lore: git-native memory and context for LLM agents.
//!
//! Memories are markdown files with YAML front matter in a commit chain under `refs/lore/memory`
//! (see [`store::layout`]); git is the source of truth and a SQLite index ([`index`]) is derived
//! from it. [`Lore`] is the entry point: it wraps a [`Store`] and opens the index lazily.
//!
//! The library never prints, never reads environment variables and never looks at `$HOME`: front
//! ends decide where the store is and how results are shown.

#![warn(missing_docs)]
// What the first paragraph promises, checked: no printing here (env and `$HOME` are refused by
// `clippy.toml` beside this crate).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent_text;
pub mod capture;
pub mod context;
pub mod embed;
pub mod error;
pub mod hash;
pub mod hooks;
pub mod index;
pub mod interop;
pub mod localstate;
pub(crate) mod memory;
pub mod merge;
pub mod model;
pub mod ops;
pub mod progress;
pub mod record;
pub mod retry;
pub mod scope;
pub mod secrets;
pub mod setup;
pub mod specifics;
mod sqlite_plans;
pub mod steps;
pub mod store;
pub mod sync;
pub mod thoughts;
pub mod tokens;
pub mod trajectory;
pub mod workspace;

/// The specifics guard of the novelty check (numbers, names, identifiers).
pub use specifics as novelty;

pub use error::{Error, ErrorClass, Result};
pub use index::{Hit, IndexNotice, ListFilter, SortBy};
/// The JSON-lines files of local state, at their former path.
pub use localstate::linefile;
/// A line of memory writes `doctor` found beside the one it restores.
pub use memory::OtherHead;
pub use memory::{
    BatchReport, BatchWrite, Collisions, Conflict, ConflictVersion, DuplicateOf, FileContent,
    FileLimits, GcReport, IndexPacked, IndexStatus, LifecyclePolicy, Lore, MemoryVersion,
    MergeBrought, NamespaceCount, NewMemory, Novelty, Patch, RefCheck, RefState, Remembered,
    Resolution, Resolved, RestorePoint, ScopeSources, StaleMemory, StoreStatus, StoredSecret,
    Superseded, VerifyReport, WriteContext, Written,
};
/// The bounds every memory write is checked against.
pub use memory::{DEFAULT_MAX_BODY_BYTES, MAX_BODY_CONFIG, WriteRules};
pub use model::{Citation, Key, LineRange, Memory, MemoryId, Namespace, Status};
pub use store::purge::PurgeReport;
pub use store::{GitEnv, Store, StoreKind};
