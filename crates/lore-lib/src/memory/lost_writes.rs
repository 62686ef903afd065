//! Memory commits written after this clone's own restore points and still in the object
//! database (a write does not wait for the index, so the index's tip can be behind the lost
//! ref): which line of them `doctor` restores, and the other lines it names.

use git2::{ErrorCode, Oid};

use super::Lore;
use super::doctor::{FOUND_SOURCE, OtherHead, RefCheck, RestorePoint, own, when};
use crate::error::Result;
use crate::store::ChainHead;
use crate::store::layout::{self, PathKind};

/// One line of writes: its last commit and the memories in its tree.
struct Line {
    head: ChainHead,
    memories: usize,
}

impl Lore {
    /// Searches the object database for memory commits that descend from the check's own
    /// restore points and that nothing descends from. The line holding the most memories
    /// (then the newest) becomes the first restore point, unless every write of it is held
    /// alike by another line (a write that lost a race and was made again on the winner's
    /// commit); the other lines are named with what of theirs the chosen one lacks.
    pub(super) fn find_lost_writes(&self, check: &mut RefCheck) -> Result<()> {
        let mut known: Vec<(Oid, usize)> = Vec::new();
        let mut listed: Vec<Oid> = Vec::new();
        for p in &check.restore_points {
            let oid = Oid::from_str(&p.commit)?;
            listed.push(oid);
            if own(p) {
                known.push((oid, p.memories));
            }
        }
        let bases: Vec<Oid> = known.iter().map(|(o, _)| *o).collect();
        let heads = self.store.chain_heads(&bases, &listed)?;
        if heads.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::with_capacity(heads.len());
        for head in heads {
            let base_memories = known
                .iter()
                .find(|(o, _)| *o == head.base)
                .map_or(0, |(_, n)| *n);
            let memories = self.memories_since(head.base, base_memories, head.commit)?;
            lines.push(Line { head, memories });
        }
        lines.sort_by(|a, b| {
            (b.memories, b.head.time, a.head.commit).cmp(&(a.memories, a.head.time, b.head.commit))
        });
        let chosen = self.line_to_restore(&lines)?;
        let line = lines.swap_remove(chosen);
        let mut others = Vec::with_capacity(lines.len());
        for other in &lines {
            others.push(OtherHead {
                commit: other.head.commit.to_string(),
                when: when(other.head.time),
                memories: other.memories,
                not_in_restore_point: self
                    .writes_missing_from(other.head.commit, line.head.commit)?,
            });
        }
        others.sort_by(|a, b| {
            (b.not_in_restore_point, b.when).cmp(&(a.not_in_restore_point, a.when))
        });
        check.restore_points.insert(
            0,
            RestorePoint {
                commit: line.head.commit.to_string(),
                source: FOUND_SOURCE.into(),
                descends_from: Some(line.head.base.to_string()),
                when: when(line.head.time),
                memories: line.memories,
            },
        );
        check.other_heads = others;
        Ok(())
    }

    /// Which of the sorted lines to restore: the first whose writes no other line holds alike
    /// (the first of all when every one is so held). The line of the last write is rarely
    /// held by another, so this is usually one check per line; each is a merge base and a
    /// tree diff of the two lines' own commits.
    fn line_to_restore(&self, lines: &[Line]) -> Result<usize> {
        for (i, line) in lines.iter().enumerate() {
            let mut held = false;
            for (j, other) in lines.iter().enumerate() {
                if i != j && self.writes_missing_from(line.head.commit, other.head.commit)? == 0 {
                    held = true;
                    break;
                }
            }
            if !held {
                return Ok(i);
            }
        }
        Ok(0)
    }

    /// The memories at `head`: those at `base` (`at_base` of them), plus the memory files
    /// added since, less those removed (a tree diff: the cost of what changed).
    fn memories_since(&self, base: Oid, at_base: usize, head: Oid) -> Result<usize> {
        let mut count = at_base as i64;
        for change in self.store.diff(Some(base), Some(head))? {
            if layout::classify(&change.path) == PathKind::Memory {
                match (change.old, change.new) {
                    (None, Some(_)) => count += 1,
                    (Some(_), None) => count -= 1,
                    _ => {}
                }
            }
        }
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// How many files `line` wrote or removed since the commit it shares with `other` that
    /// `other` does not hold alike.
    fn writes_missing_from(&self, line: Oid, other: Oid) -> Result<usize> {
        let repo = self.store.repo();
        let base = match repo.merge_base(line, other) {
            Ok(b) => Some(b),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        let theirs = self.store.snapshot(Some(other))?;
        let mut missing = 0;
        for change in self.store.diff(base, Some(line))? {
            if theirs.blob_id(&change.path)? != change.new {
                missing += 1;
            }
        }
        Ok(missing)
    }
}
