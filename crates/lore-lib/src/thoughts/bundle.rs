//! Moving reasoning sessions between clones as git bundles (`git bundle` v2 files: a header
//! listing the refs, then one pack). Import keeps every object as it is, so thought ids are
//! bit-identical; a bundle made in another project's repository is refused before any ref moves.
//! A ref that diverged from the local one merges by the rules of [`super::merge`]; the lessons
//! a bundle carries land as memories ([`super::bundle_lessons`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use git2::Oid;
use schemars::JsonSchema;
use serde::Serialize;

use super::bundle_lessons::{self, LESSON_REF_PREFIX, LessonLanded};
use super::write::{SESSION_FILE, project_of};
use super::{
    OUTCOME_REF_PREFIX, SCORES_NOTES_PREFIX, SCORES_REF_PREFIX, SESSION_REF_PREFIX, SessionInfo,
    check_session, merge, scores_ref, session_ref,
};
use crate::error::{Error, Result};
use crate::memory::{Lore, WriteContext};
use crate::store::{Store, ref_target};

const HEADER: &str = "# v2 git bundle\n";

/// What an export or import moved.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BundleReport {
    /// The bundle file.
    pub path: String,
    /// The sessions in it.
    pub sessions: Vec<String>,
    /// Each ref and the commit it points at.
    pub refs: BTreeMap<String, String>,
    /// Refs an import created, moved forward or merged (empty for an export).
    pub updated: Vec<String>,
    /// What became of the lessons it carried (an import), or which it carries (an export).
    pub lessons: Vec<LessonLanded>,
    /// The bundle's size in bytes.
    pub bytes: u64,
}

/// Every session's name.
pub fn sessions(store: &Store) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for r in store
        .repo()
        .references_glob(&format!("{SESSION_REF_PREFIX}*"))?
    {
        if let Ok(name) = r?.name() {
            out.push(name[SESSION_REF_PREFIX.len()..].to_string());
        }
    }
    Ok(out)
}

fn session_refs(store: &Store, session: &str) -> Result<BTreeMap<String, Oid>> {
    let mut refs = BTreeMap::new();
    let ledger = session_ref(session);
    let tip = ref_target(store.repo(), &ledger)?
        .ok_or_else(|| Error::ThoughtNotFound(format!("no reasoning session {session:?}")))?;
    refs.insert(ledger, tip);
    for scores in [scores_ref(session), format!("{SCORES_REF_PREFIX}{session}")] {
        if let Some(t) = ref_target(store.repo(), &scores)? {
            refs.insert(scores, t);
        }
    }
    for r in store
        .repo()
        .references_glob(&format!("{OUTCOME_REF_PREFIX}{session}/*"))?
    {
        let r = r?;
        if let (Ok(name), Some(target)) = (r.name(), r.target()) {
            refs.insert(name.to_string(), target);
        }
    }
    Ok(refs)
}

/// Writes the sessions (all of them when none are named) with their scores, outcome refs and
/// lessons into a bundle file.
pub fn export(store: &Store, names: &[String], path: &Path) -> Result<BundleReport> {
    let names = if names.is_empty() {
        sessions(store)?
    } else {
        names.to_vec()
    };
    if names.is_empty() {
        return Err(Error::ThoughtNotFound(
            "no reasoning sessions to bundle".into(),
        ));
    }
    let mut refs = BTreeMap::new();
    for name in &names {
        check_session(name)?;
        refs.extend(session_refs(store, name)?);
    }
    let lessons = bundle_lessons::export(store, &names)?;
    let carried = lessons
        .keys()
        .map(|name| LessonLanded {
            session: name[LESSON_REF_PREFIX.len()..].to_string(),
            path: String::new(),
            action: "carried".into(),
            memory: None,
            detail: None,
        })
        .collect();
    refs.extend(lessons);
    let repo = store.repo();
    let mut walk = repo.revwalk()?;
    for target in refs.values() {
        walk.push(*target)?;
    }
    let mut builder = repo.packbuilder()?;
    builder.insert_walk(&mut walk)?;
    let mut pack = git2::Buf::new();
    builder.write_buf(&mut pack)?;
    let mut bytes = HEADER.as_bytes().to_vec();
    for (name, target) in &refs {
        bytes.extend_from_slice(format!("{target} {name}\n").as_bytes());
    }
    bytes.push(b'\n');
    bytes.extend_from_slice(&pack);
    std::fs::write(path, &bytes)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(BundleReport {
        path: path.display().to_string(),
        sessions: names,
        refs: refs
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        updated: Vec::new(),
        lessons: carried,
        bytes: bytes.len() as u64,
    })
}

/// The reasoning sessions a bundle's refs hold, each checked to be a session of this project.
fn sessions_of(store: &Store, path: &Path, refs: &BTreeMap<String, Oid>) -> Result<Vec<String>> {
    let repo = store.repo();
    let here = project_of(store)?;
    let mut sessions_in = Vec::new();
    for (name, target) in refs {
        let Some(session) = name.strip_prefix(SESSION_REF_PREFIX) else {
            continue;
        };
        check_session(session)?;
        let tree = repo.find_commit(*target)?.tree()?;
        let info: SessionInfo = tree
            .get_name(SESSION_FILE)
            .and_then(|e| repo.find_blob(e.id()).ok())
            .and_then(|b| serde_json::from_slice(b.content()).ok())
            .ok_or_else(|| bad_bundle(path, format!("{name} is not a reasoning session")))?;
        if info.project != here {
            return Err(Error::ForeignBundle(format!(
                "session {session:?} in {} was made in project {}, not {here}",
                path.display(),
                info.project
            )));
        }
        sessions_in.push(session.to_string());
    }
    Ok(sessions_in)
}

/// Moves each of a bundle's refs (its objects already written here): created, fast-forwarded
/// by compare-and-swap, or merged where it diverged; a local ref ahead stays. The refs moved.
fn move_refs(store: &Store, path: &Path, refs: &BTreeMap<String, Oid>) -> Result<Vec<String>> {
    let repo = store.repo();
    let mut updated = Vec::new();
    for (name, target) in refs {
        if name.starts_with(LESSON_REF_PREFIX) {
            continue;
        }
        let local = ref_target(repo, name)?;
        match local {
            Some(l) if l == *target || repo.graph_descendant_of(l, *target)? => {}
            Some(l) if repo.graph_descendant_of(*target, l)? => {
                store.compare_and_swap(name, local, *target, "import reasoning bundle")?;
                updated.push(name.clone());
            }
            Some(_) => {
                if merge::merge_ref(store, name, *target, &path.display().to_string())? {
                    updated.push(name.clone());
                }
            }
            None => {
                store.compare_and_swap(name, None, *target, "import reasoning bundle")?;
                updated.push(name.clone());
            }
        }
    }
    Ok(updated)
}

fn bad_bundle(path: &Path, message: impl Into<String>) -> Error {
    Error::Parse {
        context: path.display().to_string(),
        message: message.into(),
    }
}

/// Reads a bundle's header: its prerequisites and refs, and where the pack starts.
fn header(path: &Path, bytes: &[u8]) -> Result<(Vec<Oid>, BTreeMap<String, Oid>, usize)> {
    if !bytes.starts_with(HEADER.as_bytes()) {
        return Err(bad_bundle(path, "not a git bundle (v2)"));
    }
    let mut at = HEADER.len();
    let mut prerequisites = Vec::new();
    let mut refs = BTreeMap::new();
    loop {
        let end = bytes[at..]
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| bad_bundle(path, "the header does not end"))?;
        let line = std::str::from_utf8(&bytes[at..at + end])
            .map_err(|_| bad_bundle(path, "the header is not text"))?;
        at += end + 1;
        if line.is_empty() {
            break;
        }
        let oid_of =
            |s: &str| Oid::from_str(s).map_err(|_| bad_bundle(path, format!("bad line {line:?}")));
        if let Some(rest) = line.strip_prefix('-') {
            prerequisites.push(oid_of(rest.split(' ').next().unwrap_or(""))?);
        } else {
            let (oid, name) = line
                .split_once(' ')
                .ok_or_else(|| bad_bundle(path, format!("bad line {line:?}")))?;
            refs.insert(name.to_string(), oid_of(oid)?);
        }
    }
    Ok((prerequisites, refs, at))
}

fn is_lore_ref(name: &str) -> bool {
    [
        SESSION_REF_PREFIX,
        OUTCOME_REF_PREFIX,
        SCORES_REF_PREFIX,
        SCORES_NOTES_PREFIX,
        LESSON_REF_PREFIX,
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Reads a bundle into this repository: its objects as they are, then its refs, each created or
/// moved forward by compare-and-swap or, where it diverged from the local one, merged; then its
/// lessons land as memories. A bundle from another project, one whose history this repository
/// lacks, or refs outside lore's move nothing; a scores notes ref (the older layout) that
/// diverged is left as it is here.
pub fn import(lore: &mut Lore, path: &Path, ctx: &WriteContext) -> Result<BundleReport> {
    let store = lore.store();
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let (prerequisites, refs, pack_at) = header(path, &bytes)?;
    let repo = store.repo();
    if let Some(missing) = prerequisites
        .iter()
        .find(|p| repo.find_commit(**p).is_err())
    {
        return Err(Error::ForeignBundle(format!(
            "{} builds on commit {missing}, which this repository does not have",
            path.display()
        )));
    }
    if let Some(other) = refs.keys().find(|n| !is_lore_ref(n)) {
        return Err(Error::Invalid {
            what: "bundle",
            value: path.display().to_string(),
            reason: format!("it holds {other}, which is not a ref of reasoning sessions"),
        });
    }
    {
        let odb = repo.odb()?;
        let mut writer = odb.packwriter()?;
        writer
            .write_all(&bytes[pack_at..])
            .map_err(|e| Error::io(format!("reading the pack of {}", path.display()), e))?;
        writer.commit()?;
    }
    let sessions_in = sessions_of(store, path, &refs)?;
    let updated = move_refs(store, path, &refs)?;
    let lessons = bundle_lessons::land(lore, &refs, ctx)?;
    Ok(BundleReport {
        path: path.display().to_string(),
        sessions: sessions_in,
        refs: refs
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        updated,
        lessons,
        bytes: bytes.len() as u64,
    })
}
