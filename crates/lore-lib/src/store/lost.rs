//! Memory commits that no ref reaches any more, found by one pass over the object database (as
//! `git fsck --lost-found` finds dangling commits), for `lore doctor` to put a lost
//! `refs/lore/memory` back at the newest of them.
//!
//! The pass reads each object's header once and parses only commits; a commit is a memory
//! commit when its message carries a `Lore-Action` trailer and its tree holds `lore.yaml` (a
//! context or reasoning commit has the trailer, never the file). Which of them descend from the
//! commits already known (the index's tip, a kept ref) is worked out once per memory commit,
//! so the cost is linear in the object database and the memory held is one entry per memory
//! commit.

use std::collections::{HashMap, HashSet};

use git2::{ObjectType, Oid, Repository};

use super::{Store, layout};
use crate::error::Result;

/// The trailer every memory commit carries.
const ACTION_TRAILER: &[u8] = b"\nLore-Action: ";

/// A memory commit that descends from a known one and that no other memory commit here
/// descends from: the end of a line of writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainHead {
    /// The commit.
    pub commit: Oid,
    /// The known commit it descends from.
    pub base: Oid,
    /// Its commit time, in seconds.
    pub time: i64,
}

/// What the pass keeps of one memory commit.
struct Node {
    parents: Vec<Oid>,
    time: i64,
}

impl Store {
    /// The memory commits in the object database that descend from one of `known` and that no
    /// other one descends from, except the commits of `known` and `listed` themselves (found
    /// already). Objects that cannot be read are passed over.
    pub fn chain_heads(&self, known: &[Oid], listed: &[Oid]) -> Result<Vec<ChainHead>> {
        if known.is_empty() {
            return Ok(Vec::new());
        }
        let nodes = memory_commits(&self.repo)?;
        let known: HashSet<Oid> = known.iter().copied().collect();
        let from = descent(&nodes, &known);
        let mut inner: HashSet<Oid> = HashSet::new();
        for (oid, node) in &nodes {
            if from.get(oid).is_some_and(Option::is_some) {
                inner.extend(node.parents.iter().copied());
            }
        }
        let mut heads: Vec<ChainHead> = from
            .iter()
            .filter_map(|(oid, base)| Some((*oid, (*base)?)))
            .filter(|(oid, _)| {
                !inner.contains(oid) && !known.contains(oid) && !listed.contains(oid)
            })
            .map(|(commit, base)| ChainHead {
                commit,
                base,
                time: nodes.get(&commit).map_or(0, |n| n.time),
            })
            .collect();
        heads.sort_by(|a, b| b.time.cmp(&a.time).then(a.commit.cmp(&b.commit)));
        Ok(heads)
    }
}

/// Every memory commit in the object database, loose or packed, each once.
fn memory_commits(repo: &Repository) -> Result<HashMap<Oid, Node>> {
    let odb = repo.odb()?;
    let mut nodes: HashMap<Oid, Node> = HashMap::new();
    odb.foreach(|oid| {
        let is_commit = matches!(odb.read_header(*oid), Ok((_, ObjectType::Commit)));
        if is_commit
            && !nodes.contains_key(oid)
            && let Some(node) = memory_commit(repo, *oid)
        {
            nodes.insert(*oid, node);
        }
        true
    })?;
    Ok(nodes)
}

/// The commit, if it is a memory commit that can be read.
fn memory_commit(repo: &Repository, oid: Oid) -> Option<Node> {
    let commit = repo.find_commit(oid).ok()?;
    let message = commit.message_raw_bytes();
    if !message
        .windows(ACTION_TRAILER.len())
        .any(|w| w == ACTION_TRAILER)
    {
        return None;
    }
    let tree = commit.tree().ok()?;
    let store_file = tree.get_name(layout::STORE_FILE)?;
    if store_file.kind() != Some(ObjectType::Blob) {
        return None;
    }
    Some(Node {
        parents: commit.parent_ids().collect(),
        time: commit.time().seconds(),
    })
}

/// For each memory commit, the known commit it descends from (itself when known; none when it
/// descends from none). Each commit is settled once, by an explicit stack (a chain can be
/// longer than the thread's stack could recurse).
fn descent(nodes: &HashMap<Oid, Node>, known: &HashSet<Oid>) -> HashMap<Oid, Option<Oid>> {
    let mut from: HashMap<Oid, Option<Oid>> = HashMap::with_capacity(nodes.len());
    for &start in nodes.keys() {
        let mut stack: Vec<(Oid, usize)> = vec![(start, 0)];
        while let Some(&(oid, next)) = stack.last() {
            if from.contains_key(&oid) {
                stack.pop();
                continue;
            }
            if known.contains(&oid) {
                from.insert(oid, Some(oid));
                stack.pop();
                continue;
            }
            let parents = nodes.get(&oid).map_or(&[][..], |n| &n.parents[..]);
            let Some(&parent) = parents.get(next) else {
                from.insert(oid, None);
                stack.pop();
                continue;
            };
            match from.get(&parent) {
                Some(Some(base)) => {
                    from.insert(oid, Some(*base));
                    stack.pop();
                }
                Some(None) => bump(&mut stack),
                None if nodes.contains_key(&parent) || known.contains(&parent) => {
                    stack.push((parent, 0));
                }
                None => bump(&mut stack),
            }
        }
    }
    from
}

/// Moves the top of the stack on to its next parent.
fn bump(stack: &mut [(Oid, usize)]) {
    if let Some(top) = stack.last_mut() {
        top.1 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_bytes(&[n; 20]).unwrap()
    }

    fn node(parents: &[u8]) -> Node {
        Node {
            parents: parents.iter().map(|p| oid(*p)).collect(),
            time: 0,
        }
    }

    #[test]
    fn descent_is_settled_through_merges_and_past_commits_of_other_lines() {
        // 1 ← 2 ← 3 ← 5 (merge of 3 and 4), 4 ← 9 unknown; 6 ← 7 a line of its own.
        let nodes: HashMap<Oid, Node> = [
            (1, node(&[])),
            (2, node(&[1])),
            (3, node(&[2])),
            (4, node(&[9])),
            (5, node(&[4, 3])),
            (6, node(&[])),
            (7, node(&[6])),
        ]
        .into_iter()
        .map(|(k, v)| (oid(k), v))
        .collect();
        let known: HashSet<Oid> = [oid(2)].into_iter().collect();
        let from = descent(&nodes, &known);
        assert_eq!(from[&oid(1)], None);
        assert_eq!(from[&oid(2)], Some(oid(2)));
        assert_eq!(from[&oid(3)], Some(oid(2)));
        assert_eq!(from[&oid(4)], None);
        assert_eq!(from[&oid(5)], Some(oid(2)));
        assert_eq!(from[&oid(7)], None);
    }
}
