//! The library's error type: each variant says what went wrong and carries what a front end
//! needs to say what to do next. [`Error::class`] groups them for exit codes.

use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The broad class of an error, which front ends map to exit codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The input was not acceptable (a bad name, an over-long summary, malformed data).
    InvalidInput,
    /// What was asked for does not exist.
    NotFound,
    /// The write would contradict the store (a key taken, an ambiguous id, a lost race).
    Conflict,
    /// Something underneath failed (git, SQLite, the file system).
    Internal,
}

/// Everything that can go wrong in lore.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value from input failed validation.
    #[error("invalid {what} {value:?}: {reason}")]
    Invalid {
        /// What kind of value (namespace, key, summary, …).
        what: &'static str,
        /// The offending value.
        value: String,
        /// Why it was refused, and how to fix it.
        reason: String,
    },
    /// A namespace that is neither built in nor registered.
    #[error(
        "unknown namespace {name:?}{hint}: it is neither built in nor registered",
        hint = suggestion.as_ref().map(|s| format!(" (did you mean {s:?}?)")).unwrap_or_default()
    )]
    UnknownNamespace {
        /// The name given.
        name: String,
        /// The closest known namespace, if any is close.
        suggestion: Option<String>,
    },
    /// No memory matched an id, id prefix or key.
    #[error("no memory matches {0:?}")]
    NotFound(String),
    /// A short id or key matched more than one memory.
    #[error("{query:?} matches several memories ({}); give more of the id", candidates.join(", "))]
    Ambiguous {
        /// What was looked up.
        query: String,
        /// The ids it matched.
        candidates: Vec<String>,
    },
    /// A keyed memory already exists.
    #[error(
        "{namespace}/{key} already exists (memory {id}); update or supersede that memory instead"
    )]
    KeyExists {
        /// Namespace of the key.
        namespace: String,
        /// The key.
        key: String,
        /// The memory holding it.
        id: String,
    },
    /// The memory changed under a write that expected a particular version.
    #[error("memory {id} was changed or removed by another writer; read it again and retry")]
    Changed {
        /// The memory's id.
        id: String,
    },
    /// A write would bring back a memory purged from lore's history.
    #[error(
        "memory {id} is refused: it is (or repeats the text of) memory {purged_id}, which was purged \
         from lore's history; write it without the purged text"
    )]
    Purged {
        /// The memory being written.
        id: String,
        /// The purged memory it matches.
        purged_id: String,
    },
    /// A compare-and-swap ref update kept losing (only under extreme contention).
    #[error("could not update {refname} after {attempts} attempts: other writers kept winning")]
    Contention {
        /// The ref.
        refname: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// A memory file in the store could not be read as a memory.
    #[error("memory file {path} is not a valid memory: {message}")]
    Record {
        /// The file's path in the memory tree.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// Input data (an import file, a front matter block) could not be parsed.
    #[error("{context}: {message}")]
    Parse {
        /// Where (file and line, or what was being parsed).
        context: String,
        /// What is wrong.
        message: String,
    },
    /// An embedder could not be loaded or run.
    #[error("embedder: {message}")]
    Embedder {
        /// What went wrong, and how to fix it.
        message: String,
    },
    /// A new memory repeats one that exists (novelty check at write time).
    #[error("{namespace} already has this as memory {id} ({how})")]
    Duplicate {
        /// Namespace of both memories.
        namespace: String,
        /// The existing memory.
        id: String,
        /// Exact content, or the similarity found.
        how: String,
    },
    /// The secret scanner refused a write (policy `block`); says what it found.
    #[error("{0}; remove the secret, or mark it <private>…</private>")]
    SecretBlocked(String),
    /// A context branch, commit, version or segment that does not exist.
    #[error("{0}")]
    ContextNotFound(String),
    /// `refs/lore/memory` is gone or unreadable while something still knows the memories.
    #[error("{0}")]
    MemoryRefLost(String),
    /// The repository has no context workspace yet (nothing to read or branch from).
    #[error("no context workspace here yet{0}")]
    NoContextWorkspace(String),
    /// A context operation that conflicts with what exists.
    #[error("{0}")]
    ContextConflict(String),
    /// A context merge whose roadmap or metadata edits conflict.
    #[error(
        "merging {from} into {into} conflicts:\n{}",
        conflicts.join("\n")
    )]
    MergeConflict {
        /// The branch merged into.
        into: String,
        /// The branch being merged.
        from: String,
        /// Each conflict, readable.
        conflicts: Vec<String>,
    },
    /// No remote to sync with.
    #[error("{0}")]
    NoRemote(String),
    /// A remote could not be reached, or git failed talking to it.
    #[error("remote {remote}: {message}")]
    Remote {
        /// The remote's name.
        remote: String,
        /// What git said.
        message: String,
    },
    /// No open contradiction matches.
    #[error("no open contradiction matches {0:?}")]
    NoConflict(String),
    /// A thought (by id, prefix or sequential number) that no reasoning session holds.
    #[error("{0}")]
    ThoughtNotFound(String),
    /// A thought that would be its own ancestor (a branch or revision pointing at itself or at
    /// a later thought).
    #[error("{0}")]
    ThoughtCycle(String),
    /// A bundle of reasoning sessions made in another project's repository.
    #[error("{0}")]
    ForeignBundle(String),
    /// The path is not inside a git repository.
    #[error("{0} is not inside a git repository")]
    NotARepository(PathBuf),
    /// A git operation failed.
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    /// An index operation failed.
    #[error("index: {0}")]
    Index(#[from] rusqlite::Error),
    /// A file-system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The class of this error, for exit codes.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Invalid { .. }
            | Error::UnknownNamespace { .. }
            | Error::Parse { .. }
            | Error::NotARepository(_)
            | Error::Embedder { .. }
            | Error::SecretBlocked(_)
            | Error::Purged { .. }
            | Error::ThoughtCycle(_)
            | Error::ForeignBundle(_) => ErrorClass::InvalidInput,
            Error::NotFound(_)
            | Error::MemoryRefLost(_)
            | Error::ContextNotFound(_)
            | Error::NoContextWorkspace(_)
            | Error::NoRemote(_)
            | Error::NoConflict(_)
            | Error::ThoughtNotFound(_) => ErrorClass::NotFound,
            Error::Ambiguous { .. }
            | Error::KeyExists { .. }
            | Error::Changed { .. }
            | Error::Duplicate { .. }
            | Error::ContextConflict(_)
            | Error::MergeConflict { .. }
            | Error::Contention { .. } => ErrorClass::Conflict,
            Error::Record { .. }
            | Error::Remote { .. }
            | Error::Git(_)
            | Error::Index(_)
            | Error::Io { .. } => ErrorClass::Internal,
        }
    }

    /// A stable name for what went wrong (`duplicate`, `key_exists`, `not_found`…), for
    /// programs and for front ends that add their own advice.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid { .. } => "invalid",
            Error::UnknownNamespace { .. } => "unknown_namespace",
            Error::NotFound(_) => "not_found",
            Error::Ambiguous { .. } => "ambiguous",
            Error::KeyExists { .. } => "key_exists",
            Error::Changed { .. } => "changed",
            Error::Contention { .. } => "contention",
            Error::Record { .. } => "invalid_record",
            Error::Parse { .. } => "parse",
            Error::Embedder { .. } => "embedder",
            Error::Duplicate { .. } => "duplicate",
            Error::SecretBlocked(_) => "secret_blocked",
            Error::Purged { .. } => "purged",
            Error::ContextNotFound(_) => "context_not_found",
            Error::MemoryRefLost(_) => "memory_ref_lost",
            Error::NoContextWorkspace(_) => "no_context_workspace",
            Error::ContextConflict(_) => "context_conflict",
            Error::MergeConflict { .. } => "merge_conflict",
            Error::ThoughtNotFound(_) => "thought_not_found",
            Error::ThoughtCycle(_) => "thought_cycle",
            Error::ForeignBundle(_) => "foreign_bundle",
            Error::NotARepository(_) => "not_a_repository",
            Error::NoRemote(_) => "no_remote",
            Error::Remote { .. } => "remote_unreachable",
            Error::NoConflict(_) => "no_conflict",
            Error::Git(_) => "git",
            Error::Index(_) => "index",
            Error::Io { .. } => "io",
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
