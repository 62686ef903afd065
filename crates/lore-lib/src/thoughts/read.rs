//! Reading reasoning trees from git: one thought, the path from the root to it (replay), that
//! path written out to a directory, and the line-by-line difference of two thoughts.

use std::path::Path;

use git2::{ObjectType, Oid, Repository};
use schemars::JsonSchema;
use serde::Serialize;

use super::{Scores, ThoughtMeta, ThoughtNode, json_error, short};
use crate::error::{Error, Result};
use crate::store::Store;

fn not_a_thought(id: Oid) -> Error {
    Error::ThoughtNotFound(format!("no thought {}", short(&id.to_string())))
}

fn file(repo: &Repository, commit: &git2::Commit<'_>, name: &str) -> Result<Option<Vec<u8>>> {
    let tree = commit.tree()?;
    match tree.get_name(name) {
        Some(entry) if entry.kind() == Some(ObjectType::Blob) => {
            Ok(Some(repo.find_blob(entry.id())?.content().to_vec()))
        }
        _ => Ok(None),
    }
}

fn thought_commit(repo: &Repository, id: Oid) -> Result<git2::Commit<'_>> {
    repo.find_commit(id).map_err(|_| not_a_thought(id))
}

/// A thought's `metadata.json`; a commit that is not a thought is "not found".
pub fn metadata(store: &Store, id: Oid) -> Result<ThoughtMeta> {
    let repo = store.repo();
    let commit = thought_commit(repo, id)?;
    let bytes = file(repo, &commit, "metadata.json")?.ok_or_else(|| not_a_thought(id))?;
    serde_json::from_slice(&bytes).map_err(|_| not_a_thought(id))
}

/// The current scores of a thought: its newest scored version ([`super::scores`]), else
/// `scores.json`.
pub fn current_scores(store: &Store, session: &str, id: Oid) -> Result<Scores> {
    let repo = store.repo();
    if let Some(scores) = super::scores::current(store, session, id)? {
        return Ok(scores);
    }
    let commit = thought_commit(repo, id)?;
    let bytes = file(repo, &commit, "scores.json")?.ok_or_else(|| not_a_thought(id))?;
    serde_json::from_slice(&bytes).map_err(|e| json_error("scores.json", e))
}

/// What a thought commit holds, without its current scores and trace: what the index keeps.
pub struct Stored {
    /// `metadata.json`.
    pub metadata: ThoughtMeta,
    /// The parent thought.
    pub parent: Option<Oid>,
    /// `thought.md`.
    pub text: String,
    /// `scores.json` (the scores it was written with).
    pub scores: Scores,
}

/// Reads a thought commit's metadata, parent, text and first scores.
pub fn stored(store: &Store, id: Oid) -> Result<Stored> {
    let repo = store.repo();
    let commit = thought_commit(repo, id)?;
    let metadata = metadata(store, id)?;
    let text = file(repo, &commit, "thought.md")?.unwrap_or_default();
    let scores_bytes = file(repo, &commit, "scores.json")?.ok_or_else(|| not_a_thought(id))?;
    Ok(Stored {
        metadata,
        parent: commit.parent_id(0).ok(),
        text: String::from_utf8_lossy(&text).into_owned(),
        scores: serde_json::from_slice(&scores_bytes).map_err(|e| json_error("scores.json", e))?,
    })
}

/// One thought, whole.
pub fn node(store: &Store, id: Oid) -> Result<ThoughtNode> {
    let repo = store.repo();
    let commit = thought_commit(repo, id)?;
    let stored = stored(store, id)?;
    let trace_bytes = file(repo, &commit, "trace.jsonl")?.unwrap_or_default();
    let trace = String::from_utf8_lossy(&trace_bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| json_error("trace.jsonl", e)))
        .collect::<Result<Vec<serde_json::Value>>>()?;
    Ok(ThoughtNode {
        id: id.to_string(),
        parent: stored.parent.map(|p| p.to_string()),
        text: stored.text,
        scores: current_scores(store, &stored.metadata.session, id)?,
        trace,
        metadata: stored.metadata,
    })
}

/// The path from the root thought to `id`, root first: the full state at that node.
pub fn path(store: &Store, id: Oid) -> Result<Vec<ThoughtNode>> {
    let mut out = vec![node(store, id)?];
    while let Some(parent) = out.last().and_then(|n| n.parent.clone()) {
        out.push(node(store, super::parse_oid(&parent)?)?);
    }
    out.reverse();
    Ok(out)
}

/// Writes a replayed path into `dir`: one directory per node (`NN-<id>`, root first) holding
/// the node's four files, and `replay.json` with the whole path. `dir` must be empty or absent.
pub fn materialise(nodes: &[ThoughtNode], dir: &Path) -> Result<Vec<String>> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(|e| Error::io(format!("reading {}", dir.display()), e))?
            .next()
            .is_some()
    {
        return Err(Error::Invalid {
            what: "directory",
            value: dir.display().to_string(),
            reason: "replay writes into an empty or new directory".into(),
        });
    }
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| Error::io(format!("writing {}", path.display()), e))
    };
    let mut written = Vec::new();
    for node in nodes {
        let sub = dir.join(format!("{:02}-{}", node.metadata.depth, short(&node.id)));
        std::fs::create_dir_all(&sub)
            .map_err(|e| Error::io(format!("creating {}", sub.display()), e))?;
        write(&sub.join("thought.md"), node.text.as_bytes())?;
        write(&sub.join("scores.json"), pretty(&node.scores)?.as_bytes())?;
        write(
            &sub.join("metadata.json"),
            pretty(&node.metadata)?.as_bytes(),
        )?;
        let mut trace = String::new();
        for event in &node.trace {
            trace.push_str(&event.to_string());
            trace.push('\n');
        }
        write(&sub.join("trace.jsonl"), trace.as_bytes())?;
        written.push(sub.display().to_string());
    }
    let all = serde_json::to_string_pretty(nodes).map_err(|e| json_error("replay.json", e))?;
    write(&dir.join("replay.json"), all.as_bytes())?;
    Ok(written)
}

fn pretty<T: Serialize>(value: &T) -> Result<String> {
    let mut s = serde_json::to_string_pretty(value).map_err(|e| json_error("replay", e))?;
    s.push('\n');
    Ok(s)
}

/// One line of a difference between two thoughts' texts.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DiffLine {
    /// `+` added, `-` removed, ` ` context, `@` a hunk header.
    pub origin: char,
    /// The line, without its end.
    pub text: String,
}

/// The line-by-line difference of two thoughts' `thought.md`.
pub fn text_diff(store: &Store, old: Oid, new: Oid) -> Result<Vec<DiffLine>> {
    let repo = store.repo();
    let blob_of = |id: Oid| -> Result<git2::Blob<'_>> {
        let commit = thought_commit(repo, id)?;
        let entry = commit
            .tree()?
            .get_name("thought.md")
            .map(|e| e.id())
            .ok_or_else(|| not_a_thought(id))?;
        Ok(repo.find_blob(entry)?)
    };
    let (a, b) = (blob_of(old)?, blob_of(new)?);
    line_diff(a.content(), b.content(), "thought.md")
}

/// The line-by-line difference of two texts (three lines of context around each hunk).
pub fn line_diff(old: &[u8], new: &[u8], name: &str) -> Result<Vec<DiffLine>> {
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(3);
    let patch = git2::Patch::from_buffers(
        old,
        Some(Path::new(name)),
        new,
        Some(Path::new(name)),
        Some(&mut opts),
    )?;
    let mut lines = Vec::new();
    for h in 0..patch.num_hunks() {
        let (hunk, count) = patch.hunk(h)?;
        lines.push(DiffLine {
            origin: '@',
            text: String::from_utf8_lossy(hunk.header())
                .trim_end()
                .to_string(),
        });
        for l in 0..count {
            let line = patch.line_in_hunk(h, l)?;
            let origin = match line.origin() {
                '+' | '>' => '+',
                '-' | '<' => '-',
                _ => ' ',
            };
            lines.push(DiffLine {
                origin,
                text: String::from_utf8_lossy(line.content())
                    .trim_end_matches(['\n', '\r'])
                    .to_string(),
            });
        }
    }
    Ok(lines)
}
