//! The memory record and its validated parts: ids, namespaces, keys, tags, status, citations.
//!
//! Every value that can reach a path in git (namespace, key, id) is validated here, once, so that
//! nothing taken from input can escape lore's tree or produce an unreadable path.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The longest summary a memory may have, in characters.
pub const MAX_SUMMARY_CHARS: usize = 100;
/// The longest key, namespace or tag, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The namespaces every store has without registering them (the paper's ten).
pub const BUILTIN_NAMESPACES: [&str; 10] = [
    "decisions",
    "learnings",
    "blockers",
    "progress",
    "patterns",
    "research",
    "reviews",
    "retrospective",
    "inception",
    "elicitation",
];

/// The characters a generated id is made of (Crockford's base32, lower case: no i, l, o, u).
pub const ID_ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// The length of a generated id.
pub const ID_LEN: usize = 12;

fn invalid(what: &'static str, value: &str, reason: impl Into<String>) -> Error {
    Error::Invalid {
        what,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// `TryFrom<String>` (validating with `parse`), `From<T> for String` and `Display` for a
/// validated string newtype.
macro_rules! string_newtype {
    ($t:ident) => {
        impl TryFrom<String> for $t {
            type Error = Error;
            fn try_from(value: String) -> Result<Self> {
                Self::parse(&value)
            }
        }

        impl From<$t> for String {
            fn from(value: $t) -> String {
                value.0
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// A memory id: twelve characters of lower-case base32, random, so that fan-out paths stay even.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct MemoryId(String);

impl MemoryId {
    /// A fresh random id.
    pub fn generate() -> Result<Self> {
        let mut bytes = [0u8; ID_LEN];
        getrandom::fill(&mut bytes).map_err(|e| Error::Io {
            context: "reading the system's random source".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let id = bytes
            .iter()
            .map(|b| ID_ALPHABET[usize::from(b & 31)] as char)
            .collect();
        Ok(Self(id))
    }

    /// Wraps text already made of [`ID_LEN`] characters of [`ID_ALPHABET`].
    pub(crate) fn from_valid(id: String) -> Self {
        debug_assert!(Self::parse(&id).is_ok());
        Self(id)
    }

    /// Validates an id given by a user or read from a record.
    pub fn parse(value: &str) -> Result<Self> {
        if value.len() != ID_LEN {
            return Err(invalid(
                "memory id",
                value,
                format!("an id has {ID_LEN} characters"),
            ));
        }
        if !value.bytes().all(|b| ID_ALPHABET.contains(&b)) {
            return Err(invalid(
                "memory id",
                value,
                "an id uses only 0-9 and lower-case letters other than i, l, o, u",
            ));
        }
        Ok(Self(value.to_string()))
    }

    /// Whether a string could be the start of an id (used to resolve short ids).
    pub fn is_prefix_like(value: &str) -> bool {
        !value.is_empty()
            && value.len() <= ID_LEN
            && value.bytes().all(|b| ID_ALPHABET.contains(&b))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(MemoryId);

/// Checks a slug: lower-case ASCII letters and digits, with `-`, `_` or `.` inside.
fn check_slug(what: &'static str, value: &str, allow_dot: bool) -> Result<()> {
    if value.is_empty() {
        return Err(invalid(what, value, "it is empty"));
    }
    if value.chars().count() > MAX_NAME_CHARS {
        return Err(invalid(
            what,
            value,
            format!("it is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(invalid(
            what,
            value,
            format!("it contains the control character U+{:04X}", u32::from(c)),
        ));
    }
    if value.contains('/') || value.contains('\\') {
        return Err(invalid(what, value, "it may not contain a path separator"));
    }
    if value.contains("..") {
        return Err(invalid(what, value, "it may not contain '..'"));
    }
    let first = value.as_bytes()[0];
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return Err(invalid(
            what,
            value,
            "it must start with a lower-case letter or a digit",
        ));
    }
    let ok = |b: u8| {
        b.is_ascii_lowercase()
            || b.is_ascii_digit()
            || b == b'-'
            || b == b'_'
            || (allow_dot && b == b'.')
    };
    if let Some(bad) = value.bytes().find(|b| !ok(*b)) {
        let allowed = if allow_dot {
            "lower-case letters, digits, '-', '_' and '.'"
        } else {
            "lower-case letters, digits, '-' and '_'"
        };
        return Err(invalid(
            what,
            value,
            format!("'{}' is not allowed; use {allowed}", bad as char),
        ));
    }
    Ok(())
}

/// A namespace: a directory of the memory tree (`decisions`, `learnings`, … or a registered one).
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct Namespace(String);

impl Namespace {
    /// Validates the form of a namespace name (not whether the store knows it).
    pub fn parse(value: &str) -> Result<Self> {
        check_slug("namespace", value, false)?;
        if value.len() == 1 {
            return Err(invalid(
                "namespace",
                value,
                "it needs at least two characters",
            ));
        }
        Ok(Self(value.to_string()))
    }

    /// Whether this is one of the ten built-in namespaces.
    pub fn is_builtin(&self) -> bool {
        BUILTIN_NAMESPACES.contains(&self.0.as_str())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(Namespace);

/// A topic slug. A keyed memory lives at `<namespace>/<key>.md`, so two writers of the same key
/// meet as a merge conflict instead of coexisting silently.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct Key(String);

impl Key {
    /// Validates a key.
    pub fn parse(value: &str) -> Result<Self> {
        check_slug("key", value, true)?;
        if value.ends_with('.') {
            return Err(invalid("key", value, "it may not end with '.'"));
        }
        if value.len() == 1 {
            // Single characters are the fan-out directories of unkeyed memories.
            return Err(invalid("key", value, "it needs at least two characters"));
        }
        Ok(Self(value.to_string()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(Key);

/// Normalises and validates a tag: lower case, no white space, commas or control characters.
pub fn normalize_tag(value: &str) -> Result<String> {
    let tag = value.trim().to_lowercase();
    if tag.is_empty() {
        return Err(invalid("tag", value, "it is empty"));
    }
    if tag.chars().count() > MAX_NAME_CHARS {
        return Err(invalid(
            "tag",
            value,
            format!("it is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if tag
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == ',' || c == '"')
    {
        return Err(invalid(
            "tag",
            value,
            "it may not contain white space, commas, quotes or control characters",
        ));
    }
    Ok(tag)
}

/// Normalises a list of tags: each validated, duplicates dropped, first occurrence kept.
pub fn normalize_tags<S: AsRef<str>>(tags: &[S]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    let mut seen = std::collections::HashSet::with_capacity(tags.len());
    for tag in tags {
        let tag = normalize_tag(tag.as_ref())?;
        if seen.insert(tag.clone()) {
            out.push(tag);
        }
    }
    Ok(out)
}

/// Validates a summary: required, one line, at most [`MAX_SUMMARY_CHARS`] characters.
pub fn check_summary(summary: &str) -> Result<()> {
    if summary.trim().is_empty() {
        return Err(invalid("summary", summary, "a summary is required"));
    }
    let chars = summary.chars().count();
    if chars > MAX_SUMMARY_CHARS {
        return Err(invalid(
            "summary",
            summary,
            format!(
                "it has {chars} characters; the limit is {MAX_SUMMARY_CHARS} (put the rest in the body)"
            ),
        ));
    }
    if summary.chars().any(|c| c.is_control()) {
        return Err(invalid(
            "summary",
            summary,
            "it must be one line without control characters",
        ));
    }
    if summary != summary.trim() {
        return Err(invalid(
            "summary",
            summary,
            "it may not start or end with white space",
        ));
    }
    Ok(())
}

/// Where a memory stands in its life.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// In force.
    Active,
    /// Done with (a blocker cleared, a question answered).
    Resolved,
    /// Replaced by a newer memory (see `superseded_by`).
    Superseded,
    /// Kept for the record, no longer relevant.
    Archived,
}

impl Status {
    /// All statuses, in their natural order.
    pub const ALL: [Status; 4] = [
        Status::Active,
        Status::Resolved,
        Status::Superseded,
        Status::Archived,
    ];

    /// The status as text.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Resolved => "resolved",
            Status::Superseded => "superseded",
            Status::Archived => "archived",
        }
    }
}

impl FromStr for Status {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                invalid(
                    "status",
                    s,
                    "use one of active, resolved, superseded, archived",
                )
            })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An inclusive range of 1-based line numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
pub struct LineRange {
    /// First line (1-based).
    pub start: u32,
    /// Last line (inclusive).
    pub end: u32,
}

impl LineRange {
    /// Parses `N` or `N-M`.
    pub fn parse(value: &str) -> Result<Self> {
        let bad = || invalid("line range", value, "write N or N-M with 1 ≤ N ≤ M");
        let (a, b) = match value.split_once('-') {
            Some((a, b)) => (a, b),
            None => (value, value),
        };
        let start: u32 = a.trim().parse().map_err(|_| bad())?;
        let end: u32 = b.trim().parse().map_err(|_| bad())?;
        if start == 0 || end < start {
            return Err(bad());
        }
        Ok(Self { start, end })
    }
}

impl TryFrom<String> for LineRange {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        Self::parse(&value)
    }
}

impl From<LineRange> for String {
    fn from(r: LineRange) -> String {
        r.to_string()
    }
}

impl fmt::Display for LineRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// A file (and optionally lines of it) that a memory is about, pinned to the blob it had.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Citation {
    /// Path relative to the work tree's root, with `/` separators.
    pub path: String,
    /// The cited lines, if not the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<LineRange>,
    /// The git blob id of the file's content when it was cited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// Validates a repository-relative path: no absolute paths, no `..`, no `.git`, no control chars.
pub fn check_relative_path(path: &str) -> Result<String> {
    let normalized = path.replace('\\', "/");
    let trimmed = normalized.trim_start_matches("./");
    if trimmed.is_empty() {
        return Err(invalid("path", path, "it is empty"));
    }
    if trimmed.starts_with('/') || trimmed.as_bytes().get(1) == Some(&b':') {
        return Err(invalid(
            "path",
            path,
            "it must be relative to the repository's root",
        ));
    }
    if trimmed.chars().any(|c| c.is_control()) {
        return Err(invalid("path", path, "it contains control characters"));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(invalid(
                    "path",
                    path,
                    "it may not leave the repository ('..')",
                ));
            }
            ".git" => return Err(invalid("path", path, "it may not point into .git")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(invalid("path", path, "it names no file"));
    }
    Ok(parts.join("/"))
}

/// One memory: what an agent decided, learned or tried, with where and when it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Memory {
    /// Stable id.
    pub id: MemoryId,
    /// The namespace (directory) it lives in.
    pub namespace: Namespace,
    /// Topic slug, for a stable path.
    pub key: Option<Key>,
    /// One line, at most 100 characters.
    pub summary: String,
    /// Markdown body. In JSON it is absent when empty or not asked for (recall without
    /// bodies, `show` at summary level), never an empty string that reads as an empty memory.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// Normalised tags.
    pub tags: Vec<String>,
    /// Life-cycle status.
    pub status: Status,
    /// When the memory was first written.
    pub created: Timestamp,
    /// When this version was written.
    pub updated: Timestamp,
    /// Who wrote it (`Name <email>` of the git identity).
    pub author: Option<String>,
    /// Which agent wrote it (e.g. `claude-code`).
    pub agent: Option<String>,
    /// The agent session it came from.
    pub session: Option<String>,
    /// How sure the writer was, 0..=1.
    pub confidence: Option<f64>,
    /// The code commit (HEAD) when it was captured.
    pub anchor: Option<String>,
    /// Files it is about.
    pub citations: Vec<Citation>,
    /// Related memories.
    pub relates_to: Vec<MemoryId>,
    /// The memory this one replaced.
    pub supersedes: Option<MemoryId>,
    /// The memory that replaced this one.
    pub superseded_by: Option<MemoryId>,
}

impl Memory {
    /// A memory with only what tests of ranking and indexing set; the rest empty.
    #[cfg(test)]
    pub(crate) fn bare(
        id: MemoryId,
        namespace: &str,
        summary: &str,
        status: Status,
        updated: Timestamp,
    ) -> Memory {
        Memory {
            id,
            namespace: Namespace::parse(namespace).expect("a test's namespace is valid"),
            key: None,
            summary: summary.into(),
            body: String::new(),
            tags: Vec::new(),
            status,
            created: updated,
            updated,
            author: None,
            agent: None,
            session: None,
            confidence: None,
            anchor: None,
            citations: Vec::new(),
            relates_to: Vec::new(),
            supersedes: None,
            superseded_by: None,
        }
    }

    /// A memory with every field a record holds set (but the supersession links), for tests.
    #[cfg(test)]
    pub(crate) fn sample() -> Memory {
        Memory {
            id: MemoryId::parse("abc123def456").unwrap(),
            namespace: Namespace::parse("decisions").unwrap(),
            key: Some(Key::parse("index-engine").unwrap()),
            summary: "Use SQLite: it is embedded, and FTS5 gives BM25".into(),
            body: "## Why\n\n---\nNot a front matter line.\n".into(),
            tags: vec!["db".into(), "yes".into(), "123".into()],
            status: Status::Active,
            created: "2026-11-21T10:00:00.123Z".parse().unwrap(),
            updated: "2026-11-21T10:00:00Z".parse().unwrap(),
            author: Some("Ada <ada@example.com>".into()),
            agent: Some("claude-code".into()),
            session: Some("s-1".into()),
            confidence: Some(0.95),
            anchor: Some("0123456789abcdef0123456789abcdef01234567".into()),
            citations: vec![Citation {
                path: "src/index.rs".into(),
                lines: Some(LineRange { start: 3, end: 9 }),
                blob: Some("89abcdef".into()),
            }],
            relates_to: vec![MemoryId::parse("zzzz00001111").unwrap()],
            supersedes: None,
            superseded_by: None,
        }
    }

    /// Checks every field's invariants (used before any write).
    pub fn validate(&self) -> Result<()> {
        check_summary(&self.summary)?;
        if let Some(c) = self.confidence
            && !(0.0..=1.0).contains(&c)
        {
            return Err(invalid(
                "confidence",
                &c.to_string(),
                "it must be between 0 and 1",
            ));
        }
        for tag in &self.tags {
            if normalize_tag(tag)? != *tag {
                return Err(invalid("tag", tag, "tags are lower case"));
            }
        }
        for c in &self.citations {
            if check_relative_path(&c.path)? != c.path {
                return Err(invalid("citation path", &c.path, "it is not normalised"));
            }
        }
        for (what, value) in [
            ("author", &self.author),
            ("agent", &self.agent),
            ("session", &self.session),
        ] {
            if let Some(v) = value
                && (v.is_empty() || v.chars().any(|c| c.is_control()) || v.len() > 256)
            {
                return Err(invalid(what, v, "it must be one line of at most 256 bytes"));
            }
        }
        if let Some(a) = &self.anchor
            && (a.len() < 4 || !a.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(invalid("anchor", a, "it must be a commit id"));
        }
        Ok(())
    }
}

/// Truncates a timestamp to whole milliseconds, the precision lore stores.
pub fn to_millis(t: Timestamp) -> Timestamp {
    Timestamp::from_millisecond(t.as_millisecond()).unwrap_or(t)
}

/// Reads one of a few words, or says which are accepted.
pub(crate) fn one_of<T: Copy>(what: &'static str, value: &str, choices: &[(&str, T)]) -> Result<T> {
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| Error::Invalid {
            what,
            value: value.to_string(),
            reason: format!(
                "expected {}",
                choices
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_valid_and_distinct() {
        let a = MemoryId::generate().unwrap();
        let b = MemoryId::generate().unwrap();
        assert_ne!(a, b);
        assert!(MemoryId::parse(a.as_str()).is_ok());
    }

    #[test]
    fn names_that_could_escape_the_tree_are_refused() {
        for bad in [
            "../x", "/etc", "a/b", "..", ".hidden", "x\u{7}y", "UPPER", "", "a b", "x\\y", "a..b",
        ] {
            assert!(Namespace::parse(bad).is_err(), "namespace {bad:?}");
            assert!(Key::parse(bad).is_err(), "key {bad:?}");
        }
        assert!(Key::parse("db-engine.v2").is_ok());
        assert!(Key::parse("x").is_err());
        assert!(Namespace::parse("my-notes").is_ok());
    }

    #[test]
    fn summaries_are_bounded() {
        assert!(check_summary(&"x".repeat(100)).is_ok());
        assert!(check_summary(&"x".repeat(101)).is_err());
        assert!(check_summary(&"é".repeat(100)).is_ok());
        assert!(check_summary("two\nlines").is_err());
        assert!(check_summary("  ").is_err());
    }

    #[test]
    fn relative_paths_are_normalised_and_confined() {
        assert_eq!(check_relative_path("./src//a.rs").unwrap(), "src/a.rs");
        for bad in ["/abs", "../up", "a/../../b", ".git/config", "C:/x", ""] {
            assert!(check_relative_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn line_ranges_parse() {
        assert_eq!(LineRange::parse("3").unwrap().to_string(), "3");
        assert_eq!(LineRange::parse("3-9").unwrap().to_string(), "3-9");
        assert!(LineRange::parse("9-3").is_err());
        assert!(LineRange::parse("0").is_err());
    }
}
