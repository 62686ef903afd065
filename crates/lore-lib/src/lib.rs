//! lore: git-native memory and context for LLM agents.
//!
//! Memories are markdown files with YAML front matter in a commit chain under `refs/lore/memory`
//! (see [`store::layout`]); git is the source of truth and a SQLite index ([`index`]) is derived
//! from it. [`Lore`] is the entry point: it wraps a [`Store`] and opens the index lazily.
//!
//! The library never prints, never reads environment variables and never looks at `$HOME`: front
//! ends decide where the store is and how results are shown.

#![warn(missing_docs)]

pub mod capture;
pub mod context;
pub mod ctx;
pub mod embed;
pub mod error;
pub(crate) mod handle;
pub(crate) mod hash;
pub mod hooks;
pub mod index;
pub mod interop;
pub mod linefile;
pub mod model;
pub mod novelty;
pub mod ops;
pub mod progress;
pub mod record;
pub mod secrets;
pub mod setup;
pub mod store;
pub mod trajectory;

pub use error::{Error, ErrorClass, Result};
pub use handle::{
    BatchReport, DuplicateOf, FileContent, FileLimits, IndexStatus, Lore, MemoryVersion,
    NamespaceCount, NewMemory, Novelty, Patch, Remembered, StoreStatus, StoredSecret, Superseded,
    WriteContext, Written,
};
pub use index::{Hit, IndexNotice, ListFilter, SortBy};
pub use model::{Citation, Key, LineRange, Memory, MemoryId, Namespace, Status};
pub use store::purge::PurgeReport;
pub use store::{Store, StoreKind};
