//! Keeping shared memory useful as it grows: stale `progress` memories decay to archived, and
//! archived memories past a retention leave the live tree (with a tombstone, so the removal
//! travels through sync; their history stays in git). `gc` does both in one commit, then packs
//! lore's refs and loose objects.

use jiff::{SignedDuration, Timestamp};
use schemars::JsonSchema;
use serde::Serialize;

use super::Lore;
use super::write::commit_text;
use crate::error::{Error, Result};
use crate::index::ListFilter;
use crate::merge::markers::Tombstone;
use crate::model::{MemoryId, Status};
use crate::record;
use crate::store::WriteContext;
use crate::store::layout::{path_of, tombstone_path};
use crate::store::{Edit, Message};

/// Days after which an untouched active `progress` memory is archived (`lore.decay.progress`).
pub const DEFAULT_PROGRESS_DECAY_DAYS: i64 = 30;
/// Days an archived memory stays in the live tree (`lore.gc.archiveRetention`).
pub const DEFAULT_ARCHIVE_RETENTION_DAYS: i64 = 180;

/// The lifecycle rules in force.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct LifecyclePolicy {
    /// Archive active progress memories not updated for this many days (none: never).
    pub progress_decay_days: Option<i64>,
    /// Remove archived memories not updated for this many days from the live tree (none: never).
    pub archive_retention_days: Option<i64>,
}

/// What `gc` did (or, in a dry run, would do).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GcReport {
    /// The rules applied.
    pub policy: LifecyclePolicy,
    /// Progress memories archived as stale.
    pub archived: Vec<MemoryId>,
    /// Archived memories expired from the live tree.
    pub expired: Vec<MemoryId>,
    /// The commit recording it (none when nothing changed or in a dry run).
    pub commit: Option<String>,
    /// Whether lore's refs and loose objects were packed.
    pub packed: bool,
    /// The index's file packed: its size before and after (none in a dry run, or when another
    /// process kept it busy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_packed: Option<IndexPacked>,
}

/// The index's file before and after `gc` packed it.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct IndexPacked {
    /// Its size before, in bytes.
    pub before_bytes: u64,
    /// Its size after, in bytes.
    pub after_bytes: u64,
}

impl Lore {
    /// The lifecycle rules from git config (`lore.decay.progress`, `lore.gc.archiveRetention`:
    /// a number of days, or `never`).
    pub fn lifecycle_policy(&self) -> Result<LifecyclePolicy> {
        let days = |name: &str, default: i64| -> Result<Option<i64>> {
            match self.store.config_string(name).as_deref().map(str::trim) {
                None => Ok(Some(default)),
                Some("never" | "off") => Ok(None),
                Some(v) => v
                    .trim_end_matches('d')
                    .parse::<i64>()
                    .ok()
                    .filter(|d| (0..=36_500).contains(d))
                    .map(Some)
                    .ok_or_else(|| Error::Invalid {
                        what: "lifecycle setting",
                        value: format!("{name}={v}"),
                        reason: "give a number of days (0 to 36500) or never".into(),
                    }),
            }
        };
        Ok(LifecyclePolicy {
            progress_decay_days: days("lore.decay.progress", DEFAULT_PROGRESS_DECAY_DAYS)?,
            archive_retention_days: days(
                "lore.gc.archiveRetention",
                DEFAULT_ARCHIVE_RETENTION_DAYS,
            )?,
        })
    }

    /// Applies the lifecycle rules in one commit, then packs lore's refs and loose objects and
    /// the index's file (not in a dry run).
    pub fn gc(&mut self, dry_run: bool, ctx: &WriteContext) -> Result<GcReport> {
        let policy = self.lifecycle_policy()?;
        let now = ctx.now();
        let before = |days: Option<i64>| -> Option<Timestamp> {
            days.and_then(|d| now.checked_sub(SignedDuration::from_hours(d * 24)).ok())
        };
        let stale = match before(policy.progress_decay_days) {
            Some(cut) => self.updated_before(Status::Active, Some("progress"), cut)?,
            None => Vec::new(),
        };
        let old = match before(policy.archive_retention_days) {
            Some(cut) => self.updated_before(Status::Archived, None, cut)?,
            None => Vec::new(),
        };
        let mut report = GcReport {
            policy,
            archived: stale,
            expired: old,
            commit: None,
            packed: false,
            index_packed: None,
        };
        if dry_run {
            return Ok(report);
        }
        if !report.archived.is_empty() || !report.expired.is_empty() {
            let mut ids: Vec<(String, MemoryId, bool)> = Vec::new();
            for id in report.archived.iter().chain(&report.expired) {
                let (path, _) = self.resolve(id.as_str())?;
                ids.push((path, id.clone(), report.expired.contains(id)));
            }
            let by = (self.author(ctx), ctx.agent.clone(), ctx.session.clone());
            let ((archived, expired), commit) = self.store.transact(|snap| {
                let mut edits = Vec::new();
                let (mut archived, mut expired) = (Vec::new(), Vec::new());
                for (path, id, expire) in &ids {
                    // Re-read on the tip this commit lands on: skip what changed meanwhile.
                    let Some(m) = read_unchanged(snap, path, id, *expire)? else {
                        continue;
                    };
                    if *expire {
                        let tomb = Tombstone::of(&m, path, now, (&by.0, &by.1, &by.2));
                        edits.push(Edit::Remove { path: path.clone() });
                        edits.push(Edit::Upsert {
                            path: tombstone_path(id),
                            content: tomb.render()?,
                        });
                        expired.push(id.clone());
                    } else {
                        let mut m = m;
                        m.status = Status::Archived;
                        m.updated = now;
                        edits.push(Edit::Upsert {
                            path: path_of(&m),
                            content: record::render(&m)?.into_bytes(),
                        });
                        archived.push(id.clone());
                    }
                }
                let message = Message {
                    subject: format!(
                        "gc: archive {} stale progress memories, expire {} archived",
                        archived.len(),
                        expired.len()
                    ),
                    body: None,
                    trailers: ctx.trailers("gc", &[]),
                };
                Ok((edits, message, (archived, expired)))
            })?;
            report.archived = archived;
            report.expired = expired;
            report.commit = commit
                .filter(|_| !report.archived.is_empty() || !report.expired.is_empty())
                .map(|c| commit_text(Some(c)));
        }
        report.packed = self.store().pack()?;
        report.index_packed = self.pack_index()?;
        Ok(report)
    }

    /// Packs the index's file (caught up first), as `gc` ends.
    fn pack_index(&mut self) -> Result<Option<IndexPacked>> {
        let packed = self.index()?.pack()?;
        Ok(packed.map(|(before_bytes, after_bytes)| IndexPacked {
            before_bytes,
            after_bytes,
        }))
    }
}

impl Lore {
    /// The ids of memories of `status` (in `namespace`, if given) last updated before `cut`.
    fn updated_before(
        &mut self,
        status: Status,
        namespace: Option<&str>,
        cut: Timestamp,
    ) -> Result<Vec<MemoryId>> {
        let filter = ListFilter {
            namespace: namespace.map(str::to_string),
            statuses: vec![status],
            ..ListFilter::default()
        };
        Ok(self
            .list(&filter)?
            .into_iter()
            .filter(|m| m.updated < cut)
            .map(|m| m.id)
            .collect())
    }
}

/// The memory at `path` on the tip a gc commit lands on, when it is still the one gc chose
/// and in the status gc acts on (archived to expire, active to archive); `None` when it
/// changed meanwhile (gone, another memory, another status, or no longer readable).
fn read_unchanged(
    snap: &crate::store::Snapshot<'_>,
    path: &str,
    id: &MemoryId,
    expire: bool,
) -> Result<Option<crate::model::Memory>> {
    let Some(bytes) = snap.read(path)? else {
        return Ok(None);
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    let Ok(m) = record::parse(text, path) else {
        return Ok(None);
    };
    let wanted = if expire {
        Status::Archived
    } else {
        Status::Active
    };
    Ok((&m.id == id && m.status == wanted).then_some(m))
}
