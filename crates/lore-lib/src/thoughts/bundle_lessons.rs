//! The lessons a bundle carries: on export, each finished session's lesson (the memory file
//! `done.json` names, as it stands) goes into the bundle as a commit under
//! `refs/lore/lessons/<session>` (a bundle-only ref, never created on import); on import, each
//! lands through the ordinary memory write path, so novelty, the secret policy and keyed
//! contradictions apply.
//!
//! Landing rule, per lesson `lessons/<topic>`:
//! * no lesson on that topic here: written as the keyed memory `lessons/<topic>`;
//! * the same summary and body here: nothing written (`unchanged`);
//! * a different lesson here: the local one stays in force at the key, the bundle's is written
//!   beside it as an unkeyed lesson that relates to it (`beside`), so both are recalled and
//!   neither is lost;
//! * a write the write path refuses (a near-duplicate of another memory, a secret the policy
//!   blocks): nothing written, the reason reported (`refused`); the session's refs still land.

use std::collections::BTreeMap;

use git2::{FileMode, Oid};
use schemars::JsonSchema;
use serde::Serialize;

use super::write::{DONE_FILE, Finished};
use super::{LESSONS_NAMESPACE, session_ref};
use crate::error::{Error, Result};
use crate::memory::{Lore, NewMemory, WriteContext};
use crate::store::{Store, ref_target};

/// The bundle-only prefix of lesson refs.
pub const LESSON_REF_PREFIX: &str = "refs/lore/lessons/";

/// What became of one lesson a bundle carried.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LessonLanded {
    /// The session it was learned in.
    pub session: String,
    /// Its memory path in the bundle (`lessons/<topic>.md`).
    pub path: String,
    /// `written`, `unchanged`, `beside` or `refused`.
    pub action: String,
    /// The memory written (or the one already there, when unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Why it was refused, or which lesson it stands beside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The lesson commits to put in a bundle: one per named session that is finished with a lesson
/// still present on `refs/lore/memory`.
pub fn export(store: &Store, sessions: &[String]) -> Result<BTreeMap<String, Oid>> {
    let repo = store.repo();
    let memory = store.snapshot(store.tip()?)?;
    let mut out = BTreeMap::new();
    for session in sessions {
        let Some(tip) = ref_target(repo, &session_ref(session))? else {
            continue;
        };
        let done: Option<Finished> = store
            .snapshot(Some(tip))?
            .read(DONE_FILE)?
            .and_then(|b| serde_json::from_slice(&b).ok());
        let Some(path) = done.and_then(|d| d.lesson) else {
            continue;
        };
        let Some(blob) = memory.blob_id(&path)? else {
            continue;
        };
        let (dir, file) = path.split_once('/').unwrap_or((LESSONS_NAMESPACE, &path));
        let mut inner = repo.treebuilder(None)?;
        inner.insert(file, blob, FileMode::Blob.into())?;
        let mut outer = repo.treebuilder(None)?;
        outer.insert(dir, inner.write()?, FileMode::Tree.into())?;
        let tree = repo.find_tree(outer.write()?)?;
        let (name, email) = store.identity();
        let sig = git2::Signature::now(name, email)?;
        let message = format!("lesson of reasoning session {session}\n");
        let commit = repo.commit(None, &sig, &sig, &message, &tree, &[])?;
        out.insert(format!("{LESSON_REF_PREFIX}{session}"), commit);
    }
    Ok(out)
}

/// Lands the lessons of an imported bundle (its refs under [`LESSON_REF_PREFIX`]).
pub fn land(
    lore: &mut Lore,
    refs: &BTreeMap<String, Oid>,
    ctx: &WriteContext,
) -> Result<Vec<LessonLanded>> {
    let mut out = Vec::new();
    for (name, commit) in refs {
        let Some(session) = name.strip_prefix(LESSON_REF_PREFIX) else {
            continue;
        };
        for file in lore.store().files(Some(*commit))? {
            let text = String::from_utf8(lore.store().read_blob(file.blob)?).map_err(|_| {
                Error::Parse {
                    context: file.path.clone(),
                    message: "the lesson is not text".into(),
                }
            })?;
            let memory = crate::record::parse(&text, &file.path)?;
            out.push(land_one(lore, session, &file.path, memory, ctx)?);
        }
    }
    Ok(out)
}

fn land_one(
    lore: &mut Lore,
    session: &str,
    path: &str,
    theirs: crate::model::Memory,
    ctx: &WriteContext,
) -> Result<LessonLanded> {
    let mut landed = LessonLanded {
        session: session.to_string(),
        path: path.to_string(),
        action: "written".into(),
        memory: None,
        detail: None,
    };
    let Some(topic) = theirs.key.as_ref().map(|k| k.to_string()) else {
        landed.action = "refused".into();
        landed.detail = Some("the bundle's lesson has no topic".into());
        return Ok(landed);
    };
    lore.add_namespace(
        LESSONS_NAMESPACE,
        "answer-free lessons from reasoning sessions, one per topic",
        ctx,
    )?;
    let mut new = NewMemory {
        namespace: LESSONS_NAMESPACE.into(),
        key: Some(topic.clone()),
        summary: theirs.summary.clone(),
        body: theirs.body.clone(),
        tags: theirs.tags.clone(),
        ..Default::default()
    };
    match lore.resolve(&format!("{LESSONS_NAMESPACE}/{topic}")) {
        Ok((_, ours)) if ours.summary == theirs.summary && ours.body == theirs.body => {
            landed.action = "unchanged".into();
            landed.memory = Some(ours.id.to_string());
            return Ok(landed);
        }
        Ok((_, ours)) => {
            landed.action = "beside".into();
            landed.detail = Some(format!(
                "differs from {LESSONS_NAMESPACE}/{topic} ({}), which stays in force",
                ours.id
            ));
            new.key = None;
            new.relates_to = vec![ours.id.to_string()];
        }
        Err(Error::NotFound(_)) => {}
        Err(e) => return Err(e),
    }
    match lore.remember(&new, ctx) {
        Ok(written) => landed.memory = Some(written.memory.id.to_string()),
        Err(e @ (Error::Duplicate { .. } | Error::SecretBlocked(_))) => {
            landed.action = "refused".into();
            landed.detail = Some(e.to_string());
        }
        Err(e) => return Err(e),
    }
    Ok(landed)
}
