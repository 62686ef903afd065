//! Open contradictions (what a merge could not decide) and their resolution: listing them with
//! every side, flagging the live version wherever memories are shown, and recording a decision
//! as one commit (`resolve`).

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Lore;
use super::write::commit_text;
use crate::error::{Error, Result};
use crate::index::Hit;
use crate::merge::markers::{ConflictKind, ConflictRecord, ConflictSide, Tombstone};
use crate::merge::open_conflicts;
use crate::model::{Memory, MemoryId, Status, check_summary};
use crate::record;
use crate::store::WriteContext;
use crate::store::layout::{self, path_of};
use crate::store::{Edit, Message};
use jiff::Timestamp;

/// One version in a contradiction, as shown to a person or an agent.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ConflictVersion {
    /// The memory's id.
    pub id: MemoryId,
    /// Its summary (none for a version that forgot the memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Its body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Who wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Which agent wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When this version was written (or forgotten).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The commit that wrote this version (none for the base, and for a version in force
    /// recorded before lore kept it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// This version forgot the memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forgotten: bool,
}

impl ConflictVersion {
    fn of(m: &Memory, commit: Option<String>) -> ConflictVersion {
        ConflictVersion {
            id: m.id.clone(),
            summary: Some(m.summary.clone()),
            body: Some(m.body.clone()),
            author: m.author.clone(),
            agent: m.agent.clone(),
            session: m.session.clone(),
            date: Some(m.updated.to_string()),
            commit,
            forgotten: false,
        }
    }

    fn forgotten(t: &Tombstone, commit: String) -> ConflictVersion {
        ConflictVersion {
            id: t.id.clone(),
            summary: Some(t.summary.clone()),
            body: None,
            author: t.author.clone(),
            agent: t.agent.clone(),
            session: t.session.clone(),
            date: Some(t.forgotten.to_string()),
            commit: Some(commit),
            forgotten: true,
        }
    }
}

/// An open contradiction.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Conflict {
    /// Its name: the contested memory path without `.md` (`decisions/db-engine`).
    pub name: String,
    /// What kind of contradiction.
    pub kind: ConflictKind,
    /// The kind, in words.
    pub description: String,
    /// When a merge found it.
    pub detected: String,
    /// The version in force (none if it is no longer in the tree).
    pub live: Option<ConflictVersion>,
    /// The other versions.
    pub others: Vec<ConflictVersion>,
    /// The version both started from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<ConflictVersion>,
}

/// How to settle a contradiction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Keep the version in force; the others are recorded as superseded by it.
    Ours,
    /// Take another version (the only one, or the one with this id); the version in force is
    /// superseded by it (or forgotten, when the other side forgot the memory).
    Theirs {
        /// Which other version, when there are several.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Keep both: another memory is kept beside the one in force, without the key; a second
    /// version of the same memory has its body appended.
    Both,
    /// Replace the version in force with new text; the others are superseded by it.
    Edit {
        /// The new summary (default: the current one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The new body (default: the current one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
}

impl Resolution {
    fn name(&self) -> &'static str {
        match self {
            Resolution::Ours => "ours",
            Resolution::Theirs { .. } => "theirs",
            Resolution::Both => "both",
            Resolution::Edit { .. } => "edit",
        }
    }
}

/// What `resolve` did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Resolved {
    /// The contradiction settled.
    pub name: String,
    /// How.
    pub resolution: String,
    /// The memory in force now (none if the decision forgot it).
    pub memory: Option<Memory>,
    /// The commit that recorded the decision.
    pub commit: String,
}

impl Lore {
    /// Every open contradiction, sorted by name.
    pub fn conflicts(&self) -> Result<Vec<Conflict>> {
        let snap = self.store.snapshot(self.store.tip()?)?;
        let mut out = Vec::new();
        for record in open_conflicts(&snap)? {
            let live = match snap.read(&record.path)? {
                Some(bytes) => std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|t| record::parse(t, &record.path).ok()),
                None => None,
            };
            let author_of = |commit: &str| -> Option<String> {
                let oid = git2::Oid::from_str(commit).ok()?;
                let c = self.store.repo().find_commit(oid).ok()?;
                let a = c.author();
                Some(format!("{} <{}>", a.name().ok()?, a.email().ok()?))
            };
            out.push(view(&record, live.as_ref(), &author_of));
        }
        Ok(out)
    }

    /// The conflict name of every memory that is contested (keyed by the live version's id).
    pub fn contradictions(&self) -> Result<HashMap<MemoryId, String>> {
        let tip = self.store.tip()?;
        if let Some((cached_tip, map)) = &*self.contradictions.borrow()
            && *cached_tip == tip
        {
            return Ok(map.clone());
        }
        let snap = self.store.snapshot(tip)?;
        let map: HashMap<MemoryId, String> = open_conflicts(&snap)?
            .into_iter()
            .filter_map(|r| Some((r.live.clone()?, conflict_name(&r.path))))
            .collect();
        *self.contradictions.borrow_mut() = Some((tip, map.clone()));
        Ok(map)
    }

    /// Sets `contradicted` on hits whose memory is contested.
    pub fn mark_contradicted(&self, hits: &mut [Hit]) -> Result<()> {
        let map = self.contradictions()?;
        if map.is_empty() {
            return Ok(());
        }
        for h in hits {
            h.contradicted = map.get(&h.memory.id).cloned();
        }
        Ok(())
    }

    /// Settles one contradiction (by its name, its memory path, or the id of any of its
    /// versions) in one commit.
    pub fn resolve_conflict(
        &mut self,
        query: &str,
        resolution: &Resolution,
        ctx: &WriteContext,
    ) -> Result<Resolved> {
        let author = self.author(ctx);
        let rules = self.write_rules()?;
        let ((name, memory), commit) = self.store.transact(|snap| {
            let records = open_conflicts(snap)?;
            let record = find(&records, query)?;
            let name = conflict_name(&record.path);
            let live = match snap.read(&record.path)? {
                Some(bytes) => Some(record::parse(
                    std::str::from_utf8(&bytes).map_err(|_| Error::Changed { id: name.clone() })?,
                    &record.path,
                )?),
                None => None,
            };
            let mut settling = Settling {
                record,
                name: name.clone(),
                others: record
                    .sides
                    .iter()
                    .filter_map(|s| s.memory())
                    .filter(|m| Some(&m.id) != live.as_ref().map(|l| &l.id))
                    .collect(),
                live,
                now: ctx.now(),
                author: &author,
                ctx,
                edits: vec![Edit::Remove {
                    path: layout::conflict_path(&record.path),
                }],
            };
            let result = match resolution {
                Resolution::Ours => settling.ours()?,
                Resolution::Theirs { id } => settling.theirs(id.as_deref())?,
                Resolution::Both => settling.both()?,
                Resolution::Edit { summary, body } => {
                    settling.edit(summary.as_deref(), body.as_deref(), rules)?
                }
            };
            let ids: Vec<&MemoryId> = result.iter().map(|m| &m.id).collect();
            let mut trailers = ctx.trailers("resolve", &ids);
            trailers.push(("Lore-Resolution".into(), resolution.name().into()));
            let message = Message {
                subject: format!("resolve {name}: {}", resolution.name()),
                body: None,
                trailers,
            };
            Ok((settling.edits, message, (name, result)))
        })?;
        self.contradictions.borrow_mut().take();
        Ok(Resolved {
            name,
            resolution: resolution.name().to_string(),
            memory,
            commit: commit_text(commit),
        })
    }
}

/// One contradiction being settled: its record, the memory in force at its path, the other
/// sides' memories, and the edits of the resolving commit so far. Each resolution returns the
/// memory left in force (none when the memory ends forgotten).
struct Settling<'a> {
    record: &'a ConflictRecord,
    name: String,
    live: Option<Memory>,
    others: Vec<Memory>,
    now: Timestamp,
    author: &'a Option<String>,
    ctx: &'a WriteContext,
    edits: Vec<Edit>,
}

impl Settling<'_> {
    /// Marks every other side's memory (but `skip`) superseded by `winner`.
    fn supersede_others(&mut self, winner: &Memory, skip: Option<&MemoryId>) -> Result<()> {
        for m in self.others.iter().filter(|m| Some(&m.id) != skip) {
            let mut loser = m.clone();
            loser.status = Status::Superseded;
            loser.superseded_by = Some(winner.id.clone());
            loser.updated = self.now;
            self.edits.push(upsert(&loser)?);
        }
        Ok(())
    }

    /// Keeps the version in force; the other sides are superseded by it.
    fn ours(&mut self) -> Result<Option<Memory>> {
        let live = self.live.clone();
        if let Some(live) = &live {
            self.supersede_others(live, None)?;
        }
        Ok(live)
    }

    /// Takes one other side (by id when there are several): its text, or its forget.
    fn theirs(&mut self, id: Option<&str>) -> Result<Option<Memory>> {
        let record = self.record;
        let side = pick_side(record, id)?;
        let live = self.live.clone();
        match (side.memory(), live) {
            (None, Some(live)) => {
                // The other side forgot it: forget it here too.
                self.edits.push(Edit::Remove {
                    path: record.path.clone(),
                });
                let by = (self.author, &self.ctx.agent, &self.ctx.session);
                let tomb = Tombstone::of(&live, &record.path, self.now, by);
                self.edits.push(Edit::Upsert {
                    path: layout::tombstone_path(&live.id),
                    content: tomb.render()?,
                });
                Ok(None)
            }
            (None, None) => Ok(None),
            (Some(mut chosen), live) => {
                chosen.updated = self.now;
                if let Some(live) = live.filter(|l| l.id != chosen.id) {
                    let mut old = live.clone();
                    old.status = Status::Superseded;
                    old.superseded_by = Some(chosen.id.clone());
                    old.updated = self.now;
                    self.edits.push(Edit::Remove {
                        path: record.path.clone(),
                    });
                    self.edits.push(upsert(&old)?);
                    chosen.supersedes = Some(live.id);
                }
                self.supersede_others(&chosen, Some(&chosen.id))?;
                self.edits.push(upsert(&chosen)?);
                Ok(Some(chosen))
            }
        }
    }

    /// Keeps every side: the same memory's text and tags are joined into the one in force;
    /// other memories stay active, keyless, related to it.
    fn both(&mut self) -> Result<Option<Memory>> {
        let Some(mut live) = self.live.clone() else {
            return Err(nothing_live(&self.name));
        };
        for side in self.record.sides.iter().filter_map(|s| s.memory()) {
            if side.id == live.id {
                if !live.body.contains(side.body.trim()) {
                    live.body = format!("{}\n\n{}", live.body.trim_end(), side.body);
                }
                for t in side.tags {
                    if !live.tags.contains(&t) {
                        live.tags.push(t);
                    }
                }
            } else {
                let mut kept = side;
                kept.key = None;
                kept.status = Status::Active;
                if !kept.relates_to.contains(&live.id) {
                    kept.relates_to.push(live.id.clone());
                }
                kept.updated = self.now;
                self.edits.push(upsert(&kept)?);
            }
        }
        live.updated = self.now;
        self.edits.push(upsert(&live)?);
        Ok(Some(live))
    }

    /// Replaces the text in force (screened again); the other sides are superseded by it.
    fn edit(
        &mut self,
        summary: Option<&str>,
        body: Option<&str>,
        rules: super::screening::WriteRules,
    ) -> Result<Option<Memory>> {
        let Some(mut live) = self.live.clone() else {
            return Err(nothing_live(&self.name));
        };
        if let Some(s) = summary {
            check_summary(s)?;
            live.summary = s.trim().to_string();
        }
        if let Some(b) = body {
            live.body = b.to_string();
        }
        super::screening::screen_memory(&mut live, rules)?;
        live.updated = self.now;
        live.author = self.author.clone();
        live.agent = self.ctx.agent.clone().or(live.agent);
        live.session = self.ctx.session.clone().or(live.session);
        self.supersede_others(&live, None)?;
        self.edits.push(upsert(&live)?);
        Ok(Some(live))
    }
}

fn upsert(m: &Memory) -> Result<Edit> {
    Ok(Edit::Upsert {
        path: path_of(m),
        content: record::render(m)?.into_bytes(),
    })
}

fn nothing_live(name: &str) -> Error {
    Error::Invalid {
        what: "resolution",
        value: name.to_string(),
        reason: "no version is in force; take another version instead".into(),
    }
}

/// The name of a contradiction: its memory path without `.md`.
pub(crate) fn conflict_name(path: &str) -> String {
    path.strip_suffix(layout::MEMORY_EXT)
        .unwrap_or(path)
        .to_string()
}

fn find<'a>(records: &'a [ConflictRecord], query: &str) -> Result<&'a ConflictRecord> {
    let q = query.trim().trim_end_matches(layout::MEMORY_EXT);
    let matches: Vec<&ConflictRecord> = records
        .iter()
        .filter(|r| {
            let name = conflict_name(&r.path);
            name == q
                || name.rsplit('/').next() == Some(q)
                || r.live
                    .as_ref()
                    .is_some_and(|id| id.as_str().starts_with(q) && q.len() >= 4)
                || r.sides
                    .iter()
                    .any(|s| s.id.as_str().starts_with(q) && q.len() >= 4)
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::NoConflict(query.to_string())),
        many => Err(Error::Ambiguous {
            query: query.to_string(),
            candidates: many.iter().map(|r| conflict_name(&r.path)).collect(),
        }),
    }
}

fn pick_side<'a>(record: &'a ConflictRecord, id: Option<&str>) -> Result<&'a ConflictSide> {
    let candidates: Vec<&ConflictSide> = record
        .sides
        .iter()
        .filter(|s| id.is_none_or(|q| s.id.as_str().starts_with(q)))
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::NoConflict(format!(
            "{} (no other version {})",
            conflict_name(&record.path),
            id.unwrap_or_default()
        ))),
        _ => {
            // Several versions of the same memory: the newest.
            let newest = candidates
                .iter()
                .max_by_key(|s| s.memory().map(|m| m.updated))
                .copied();
            match (id, newest) {
                (None, Some(_)) if candidates.iter().any(|s| s.id != candidates[0].id) => {
                    Err(Error::Ambiguous {
                        query: conflict_name(&record.path),
                        candidates: candidates.iter().map(|s| s.id.to_string()).collect(),
                    })
                }
                (_, Some(n)) => Ok(n),
                (_, None) => Err(Error::NoConflict(conflict_name(&record.path))),
            }
        }
    }
}

/// A record as the user reads it. Each version is credited to the author of the commit that
/// wrote it (the memory's own `author` names who first wrote the memory, not who made this
/// version); a record written before lore kept that commit falls back to the memory's field.
fn view(
    record: &ConflictRecord,
    live: Option<&Memory>,
    author_of: &dyn Fn(&str) -> Option<String>,
) -> Conflict {
    let credited = |mut v: ConflictVersion, commit: Option<&String>| {
        if let Some(author) = commit.and_then(|c| author_of(c)) {
            v.author = Some(author);
        }
        v
    };
    let others = record
        .sides
        .iter()
        .map(|s| match (&s.forgotten, s.memory()) {
            (Some(t), _) => credited(
                ConflictVersion::forgotten(t, s.commit.clone()),
                Some(&s.commit),
            ),
            (None, Some(m)) => credited(
                ConflictVersion::of(&m, Some(s.commit.clone())),
                Some(&s.commit),
            ),
            (None, None) => ConflictVersion {
                id: s.id.clone(),
                summary: None,
                body: s.text.clone(),
                author: None,
                agent: None,
                session: None,
                date: None,
                commit: Some(s.commit.clone()),
                forgotten: false,
            },
        })
        .collect();
    let base = record
        .base
        .as_deref()
        .and_then(|t| record::parse(t, &record.path).ok())
        .map(|m| ConflictVersion::of(&m, None));
    Conflict {
        name: conflict_name(&record.path),
        kind: record.kind,
        description: record.kind.describe().to_string(),
        detected: record.detected.to_string(),
        live: live.map(|m| {
            credited(
                ConflictVersion::of(m, record.live_commit.clone()),
                record.live_commit.as_ref(),
            )
        }),
        others,
        base,
    }
}
