//! Secrets and memories: screening a memory's text before it is written, and auditing what the
//! store already holds (at the tip, and with `history` every version still reachable).

use std::collections::HashSet;

use git2::Oid;
use serde::Serialize;

use super::Lore;
use crate::error::{Error, Result};
use crate::model::{MAX_SUMMARY_CHARS, Memory};
use crate::record;
use crate::secrets::{self, Finding, SecretPolicy, SecretReport};
use crate::store::layout::{self, PathKind};

/// A stored memory version that holds secrets (from [`Lore::scan_secrets`]).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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
    pub findings: Vec<Finding>,
}

impl Lore {
    /// Audits stored memories for secrets: every memory at the tip, and with `history` every
    /// earlier version and forgotten memory still reachable in lore's history (each blob once).
    /// A memory file that does not parse is scanned as a whole.
    pub fn scan_secrets(&self, history: bool) -> Result<Vec<StoredSecret>> {
        let mut out = Vec::new();
        let Some(tip) = self.store.tip()? else {
            return Ok(out);
        };
        let mut seen = HashSet::new();
        let mut scan_blob = |path: &str, blob: Oid, commit: Option<Oid>, out: &mut Vec<_>| {
            if layout::classify(path) != PathKind::Memory || !seen.insert(blob) {
                return Ok(());
            }
            if let Some(found) = scan_stored(path, &self.store.read_blob(blob)?, commit) {
                out.push(found);
            }
            Ok::<_, crate::Error>(())
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
}

/// A secret in one of lore's other refs (context branches, reasoning sessions, score notes):
/// in a file of a commit, or in a commit's message.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RefSecret {
    /// The ref (`refs/lore/thoughts/s1`).
    pub refname: String,
    /// The commit that holds it.
    pub commit: String,
    /// The file in that commit's tree, or `(commit message)`.
    pub path: String,
    /// What the scanner found.
    pub findings: Vec<Finding>,
}

impl Lore {
    /// Audits lore's refs other than the memory chain (`refs/lore/ctx/*`,
    /// `refs/lore/thoughts/*`, `refs/lore/outcomes/*`, `refs/notes/lore/*`): every commit
    /// reachable from them, its message and the files it added or changed, each blob once.
    pub fn scan_other_refs(&self) -> Result<Vec<RefSecret>> {
        let repo = self.store.repo();
        let mut names = Vec::new();
        for glob in ["refs/lore/*", "refs/notes/lore/*"] {
            for r in repo.references_glob(glob)? {
                let r = r?;
                if let (Ok(name), Some(target)) = (r.name(), r.target())
                    && name != crate::store::MEMORY_REF
                {
                    names.push((name.to_string(), target));
                }
            }
        }
        let (mut seen_blobs, mut seen_commits) = (HashSet::new(), HashSet::new());
        let mut out = Vec::new();
        for (refname, tip) in names {
            let mut walk = repo.revwalk()?;
            walk.push(tip)?;
            for oid in walk {
                let oid = oid?;
                if !seen_commits.insert(oid) {
                    continue;
                }
                let commit = repo.find_commit(oid)?;
                let found = |path: String, text: &str| {
                    let findings = secrets::scan_field(text, &path);
                    (!findings.is_empty()).then(|| RefSecret {
                        refname: refname.clone(),
                        commit: oid.to_string(),
                        path,
                        findings,
                    })
                };
                let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
                out.extend(found("(commit message)".into(), &message));
                for change in self.store.diff(commit.parent_ids().next(), Some(oid))? {
                    if let Some(blob) = change.new
                        && seen_blobs.insert(blob)
                    {
                        let bytes = self.store.read_blob(blob)?;
                        out.extend(found(change.path, &String::from_utf8_lossy(&bytes)));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// What the scanner finds in one stored memory file: in its summary and body, or — for a file
/// that is not a readable memory — anywhere in it.
fn scan_stored(path: &str, bytes: &[u8], commit: Option<Oid>) -> Option<StoredSecret> {
    let text = String::from_utf8_lossy(bytes);
    let (id, summary, findings) = match record::parse(&text, path) {
        Ok(m) => {
            let in_summary = secrets::scan_field(&m.summary, "summary");
            let mut findings = in_summary.clone();
            findings.extend(secrets::scan_field(&m.body, "body"));
            let summary = secrets::redact(&m.summary, &in_summary);
            (m.id.to_string(), summary, findings)
        }
        Err(_) => (
            layout::name_from_path(path).to_string(),
            "(not a readable memory file)".to_string(),
            secrets::scan_field(&text, "file"),
        ),
    };
    (!findings.is_empty()).then(|| StoredSecret {
        id,
        path: path.to_string(),
        summary,
        current: commit.is_none(),
        commit: commit.map(|c| c.to_string()),
        findings,
    })
}

/// The git configuration key holding the largest body a write accepts, in bytes.
pub const MAX_BODY_CONFIG: &str = "lore.maxBodyBytes";

/// The largest body a write accepts unless configured otherwise: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;

/// What every write is checked against before it is stored: the secret policy and the largest
/// body.
#[derive(Clone, Copy, Debug)]
pub struct WriteRules {
    /// The secret policy.
    pub policy: SecretPolicy,
    /// The largest body, in bytes.
    pub max_body_bytes: usize,
}

/// The largest body configured for a store: `git config lore.maxBodyBytes`, else
/// [`DEFAULT_MAX_BODY_BYTES`]. A value that is not a positive number is an error, so a typo
/// never silently lifts the bound.
pub fn configured_max_body(store: &crate::store::Store) -> Result<usize> {
    match store.config_string(MAX_BODY_CONFIG) {
        None => Ok(DEFAULT_MAX_BODY_BYTES),
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or(Error::Invalid {
                what: "git config lore.maxBodyBytes",
                value: v,
                reason: "expected a positive number of bytes".into(),
            }),
    }
}

/// Checks a memory against the write rules: a body over the bound or holding a NUL byte is
/// refused (before anything else looks at it), and its text — summary, body, tags, agent and session — is screened for
/// secrets under the policy, redacted in place when the policy says so.
pub(super) fn screen_memory(
    memory: &mut Memory,
    rules: WriteRules,
) -> Result<Option<SecretReport>> {
    if memory.body.len() > rules.max_body_bytes {
        return Err(Error::Invalid {
            what: "body",
            value: format!("{} bytes", memory.body.len()),
            reason: format!(
                "it is larger than {} bytes (git config {MAX_BODY_CONFIG})",
                rules.max_body_bytes
            ),
        });
    }
    if memory.body.contains('\0') {
        // git would store the file as binary; lore stores text.
        return Err(Error::Invalid {
            what: "body",
            value: format!("{} bytes", memory.body.len()),
            reason: "it holds a NUL byte: lore stores text, not binary data".into(),
        });
    }
    let tag_names: Vec<String> = (0..memory.tags.len())
        .map(|i| format!("tag {}", i + 1))
        .collect();
    let mut agent = memory.agent.take().unwrap_or_default();
    let mut session = memory.session.take().unwrap_or_default();
    let mut author = memory.author.take().unwrap_or_default();
    let report = {
        let mut fields: Vec<(&str, &mut String)> = vec![
            ("summary", &mut memory.summary),
            ("body", &mut memory.body),
            ("agent", &mut agent),
            ("session", &mut session),
            ("author", &mut author),
        ];
        fields.extend(
            tag_names
                .iter()
                .map(String::as_str)
                .zip(memory.tags.iter_mut()),
        );
        secrets::screen(&mut fields, rules.policy)?
    };
    memory.agent = Some(agent).filter(|a| !a.is_empty());
    memory.session = Some(session).filter(|s| !s.is_empty());
    memory.author = Some(author).filter(|a| !a.is_empty());
    if report.is_some() {
        // A redaction placeholder can lengthen the summary past its limit.
        if memory.summary.chars().count() > MAX_SUMMARY_CHARS {
            memory.summary = memory
                .summary
                .chars()
                .take(MAX_SUMMARY_CHARS - 1)
                .collect::<String>()
                + "…";
        }
        for tag in &mut memory.tags {
            *tag = tag.to_lowercase();
        }
        memory.validate()?;
    }
    Ok(report)
}
