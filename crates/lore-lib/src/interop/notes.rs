//! The git-notes-memory layout: `refs/notes/mem/<namespace>`, each note (on the commit a memory
//! was captured at) holding one or more YAML-front-matter documents (`type`, `timestamp`,
//! `summary`, `spec`, `phase`, `tags`, `status`, `relates_to`, then a markdown body).

use std::collections::BTreeMap;

use git2::{FileMode, Oid, Repository};
use jiff::Timestamp;
use serde::Serialize;

use super::{Converted, ImportRecord, convert_all, stable_id};
use crate::error::{Error, Result};
use crate::model::Memory;
use crate::store::Store;

/// The prefix of git-notes-memory's refs.
pub const NOTES_PREFIX: &str = "refs/notes/mem/";

/// Splits a note into documents: a document starts at a `---` line whose block up to the next
/// `---` line is a YAML mapping with a `summary` or `type`; anything else is body text.
pub fn split_documents(note: &str) -> Vec<(serde_norway::Mapping, String)> {
    let lines: Vec<&str> = note.split_inclusive('\n').collect();
    let is_rule = |l: &str| l.trim_end_matches(['\n', '\r']) == "---";
    let header_at = |i: usize| -> Option<(serde_norway::Mapping, usize)> {
        if !is_rule(lines[i]) {
            return None;
        }
        let close = (i + 1..lines.len()).find(|&j| is_rule(lines[j]))?;
        let yaml: String = lines[i + 1..close].concat();
        match serde_norway::from_str::<serde_norway::Value>(&yaml) {
            Ok(serde_norway::Value::Mapping(m))
                if m.contains_key(serde_norway::Value::String("summary".into()))
                    || m.contains_key(serde_norway::Value::String("type".into())) =>
            {
                Some((m, close))
            }
            _ => None,
        }
    };
    let mut docs: Vec<(serde_norway::Mapping, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some((fields, close)) = header_at(i) {
            docs.push((fields, String::new()));
            i = close + 1;
            continue;
        }
        if let Some((_, body)) = docs.last_mut() {
            body.push_str(lines[i]);
        }
        i += 1;
    }
    for (_, body) in &mut docs {
        // git-notes-memory writes a blank line between the front matter and the body; it is
        // not part of the body.
        if body.starts_with('\n') {
            body.remove(0);
        } else if body.starts_with("\r\n") {
            body.drain(..2);
        }
        // Documents are separated by a blank line; it is not part of the body.
        while body.ends_with("\n\n") {
            body.pop();
        }
        if body.trim().is_empty() {
            body.clear();
        }
    }
    docs
}

/// Reads every note under `refs/notes/mem/*`.
pub fn import(store: &Store, now: Timestamp) -> Result<Converted> {
    let repo = store.repo();
    let mut records = Vec::new();
    let mut refs = Vec::new();
    for r in repo.references_glob(&format!("{NOTES_PREFIX}*"))? {
        if let Ok(name) = r?.name() {
            refs.push(name.to_string());
        }
    }
    refs.sort();
    for refname in refs {
        let namespace = refname.trim_start_matches(NOTES_PREFIX).replace('/', "-");
        for note in repo.notes(Some(&refname))? {
            let (blob, annotated) = note?;
            let bytes = repo.find_blob(blob)?.content().to_vec();
            let text = String::from_utf8_lossy(&bytes);
            for (n, (fields, body)) in split_documents(&text).into_iter().enumerate() {
                let origin = format!("{refname} note on {annotated} #{}", n + 1);
                records.push(ImportRecord {
                    fallback_id: Some(stable_id(&format!("notes:{refname}:{annotated}:{n}"))),
                    origin,
                    fields,
                    body,
                    fallback_namespace: Some(namespace.clone()),
                    fallback_anchor: Some(annotated.to_string()),
                });
            }
        }
    }
    Ok(convert_all(&records, now))
}

/// A note's front matter: git-notes-memory's fields, then the fields of lore's own that it
/// does not have (each only when it says something; readers ignore keys they do not know), so
/// a memory read back from its note is the memory written.
#[derive(Serialize)]
struct NoteHeader<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    timestamp: String,
    summary: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    spec: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<&'a str>,
    status: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    relates_to: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    /// Written when it is not the commit the note is on (`null`: the memory has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    anchor: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    citations: &'a [crate::model::Citation],
    #[serde(skip_serializing_if = "Option::is_none")]
    supersedes: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    superseded_by: Option<&'a str>,
}

/// The tags as a note carries them: git-notes-memory's `spec` and `phase` apart from the
/// others when reading them back gives the same list (the first `spec:` and `phase:` tags at
/// its end, in that order), else every tag in the list (the two fields repeat theirs).
fn note_tags(m: &Memory) -> (Option<&str>, Option<&str>, Vec<&str>) {
    let tag_value = |prefix: &str| m.tags.iter().find_map(|t| t.strip_prefix(prefix));
    let (spec, phase) = (tag_value("spec:"), tag_value("phase:"));
    let apart: Vec<&str> = m
        .tags
        .iter()
        .filter(|t| !t.starts_with("spec:") && !t.starts_with("phase:"))
        .map(String::as_str)
        .collect();
    let read_back: Vec<String> = apart
        .iter()
        .map(|t| t.to_string())
        .chain(spec.map(|s| format!("spec:{s}")))
        .chain(phase.map(|p| format!("phase:{p}")))
        .collect();
    if read_back == m.tags {
        (spec, phase, apart)
    } else {
        (spec, phase, m.tags.iter().map(String::as_str).collect())
    }
}

/// One memory as a note's document, for the note on commit `on`.
fn render_document(m: &Memory, on: Option<Oid>) -> Result<String> {
    let (spec, phase, tags) = note_tags(m);
    let on = on.map(|c| c.to_string());
    let anchor = m.anchor.as_deref();
    let header = NoteHeader {
        kind: m.namespace.as_str(),
        id: m.id.as_str(),
        key: m.key.as_ref().map(|k| k.as_str()),
        timestamp: m.created.to_string(),
        summary: &m.summary,
        spec,
        phase,
        tags,
        status: m.status.as_str(),
        relates_to: m.relates_to.iter().map(|r| r.as_str()).collect(),
        updated: (m.updated != m.created).then(|| m.updated.to_string()),
        author: m.author.as_deref(),
        agent: m.agent.as_deref(),
        session: m.session.as_deref(),
        confidence: m.confidence,
        anchor: (anchor != on.as_deref()).then_some(anchor),
        citations: &m.citations,
        supersedes: m.supersedes.as_ref().map(|s| s.as_str()),
        superseded_by: m.superseded_by.as_ref().map(|s| s.as_str()),
    };
    let yaml = serde_norway::to_string(&header).map_err(|e| Error::Parse {
        context: format!("writing memory {} as a note", m.id),
        message: e.to_string(),
    })?;
    // As git-notes-memory writes a note: a blank line between the front matter and a body.
    let gap = if m.body.trim().is_empty() { "" } else { "\n" };
    let mut out = format!("---\n{yaml}---\n{gap}{}", m.body);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// A memory as reading back its note gives it: what the note format carries of it (bodies
/// are framed as git-notes-memory frames them, so trailing blank lines and a missing final
/// newline are not carried). A note read back as this is the same memory.
pub fn as_read_back(m: &Memory) -> Result<Memory> {
    let on = m.anchor.as_deref().and_then(|a| Oid::from_str(a).ok());
    let text = render_document(m, on)?;
    let Some((fields, body)) = split_documents(&text).into_iter().next() else {
        return Ok(m.clone());
    };
    let record = ImportRecord {
        origin: format!("memory {}", m.id),
        fields,
        body,
        fallback_namespace: Some(m.namespace.to_string()),
        fallback_id: Some(m.id.clone()),
        fallback_anchor: on.map(|c| c.to_string()),
    };
    super::convert(&record, m.created, &mut Vec::new())
}

/// What an export to notes did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NotesExport {
    /// Memories written.
    pub exported: usize,
    /// Notes refs written.
    pub refs: Vec<String>,
    /// Memories left out (no commit to attach them to).
    pub skipped: Vec<String>,
}

/// Writes memories as notes under `refs/notes/mem/<namespace>`, on their anchor commit (or
/// HEAD). A commit's note is replaced by the lore memories anchored there; other notes stay.
pub fn export(store: &Store, memories: &[Memory]) -> Result<NotesExport> {
    let repo = store.repo();
    let head = store.head_commit();
    let mut report = NotesExport::default();
    let mut by_ns: BTreeMap<String, BTreeMap<Oid, Vec<&Memory>>> = BTreeMap::new();
    for m in memories {
        let anchor = m
            .anchor
            .as_deref()
            .and_then(|a| Oid::from_str(a).ok())
            .filter(|oid| repo.find_commit(*oid).is_ok())
            .or(head);
        match anchor {
            Some(oid) => by_ns
                .entry(m.namespace.to_string())
                .or_default()
                .entry(oid)
                .or_default()
                .push(m),
            None => report.skipped.push(format!(
                "{}: no commit in this repository to attach it to",
                m.id
            )),
        }
    }
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("lore", "lore@localhost"))?;
    for (ns, notes) in by_ns {
        let refname = format!("{NOTES_PREFIX}{ns}");
        let parent = crate::store::ref_target(repo, &refname)?;
        let mut builder = repo.treebuilder(None)?;
        if parent.is_some() {
            for existing in repo.notes(Some(&refname))? {
                let (blob, annotated) = existing?;
                if !notes.contains_key(&annotated) {
                    builder.insert(annotated.to_string(), blob, FileMode::Blob.into())?;
                }
            }
        }
        for (commit, ms) in &notes {
            let mut text = String::new();
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    text.push('\n');
                }
                text.push_str(&render_document(m, Some(*commit))?);
            }
            // Copies of stored memories: a secret they hold (kept under `warn`) is carried.
            let mut stored = || -> Result<Vec<Vec<u8>>> {
                ms.iter()
                    .map(|m| crate::record::render(m).map(String::into_bytes))
                    .collect()
            };
            let blob = store.write_blob_carried(
                &format!("the note of {commit}"),
                text.as_bytes(),
                &mut stored,
            )?;
            builder.insert(commit.to_string(), blob, FileMode::Blob.into())?;
            report.exported += ms.len();
        }
        let tree = repo.find_tree(builder.write()?)?;
        let parent_commit = parent.map(|p| repo.find_commit(p)).transpose()?;
        let parents: Vec<&git2::Commit<'_>> = parent_commit.iter().collect();
        let message = format!(
            "lore export: {} memories\n",
            notes.values().map(Vec::len).sum::<usize>()
        );
        let commit = repo.commit(None, &sig, &sig, &message, &tree, &parents)?;
        write_ref(repo, &refname, parent, commit)?;
        report.refs.push(refname);
    }
    Ok(report)
}

fn write_ref(repo: &Repository, name: &str, old: Option<Oid>, new: Oid) -> Result<()> {
    // Compare-and-swap under the ref's lock (zero id: the ref must not exist yet).
    let result = repo.reference_matching(
        name,
        new,
        true,
        old.unwrap_or(Oid::ZERO_SHA1),
        "lore export",
    );
    result.map(|_| ()).map_err(|e| match e.code() {
        git2::ErrorCode::Modified | git2::ErrorCode::Exists | git2::ErrorCode::Locked => {
            Error::Changed {
                id: format!("{name} (moved during the export; run it again)"),
            }
        }
        _ => e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::split_documents;

    #[test]
    fn a_note_with_several_documents_splits_at_headers_only() {
        let note = "---\ntype: decisions\nsummary: First\ntags: [a]\n---\n## Context\n\n---\nnot a header\n\n---\ntype: decisions\nsummary: Second\n---\nBody two\n";
        // As git-notes-memory's serialize_note writes: `---\n{yaml}\n---\n\n{body}`, bodies
        // kept byte for byte (a leading blank line of the body itself included).
        let written = "---\ntype: decisions\nsummary: Exact\n---\n\n## Body\n\nkept\n";
        assert_eq!(split_documents(written)[0].1, "## Body\n\nkept\n");
        let own_blank = "---\ntype: decisions\nsummary: Exact\n---\n\n\nafter a blank\n";
        assert_eq!(split_documents(own_blank)[0].1, "\nafter a blank\n");
        let docs = split_documents(note);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].1, "## Context\n\n---\nnot a header\n");
        assert_eq!(docs[1].1, "Body two\n");
    }
}
