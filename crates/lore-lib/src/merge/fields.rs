//! Merging two versions of one memory field by field, against the version they share.
//!
//! The rules (documented in ARCHITECTURE.md): a field only one side changed takes that side's
//! value; tags are merged as sets (a tag either side added is kept, a tag one side removed is
//! dropped); `relates_to` is a union; `created` the earlier and `updated` the later time; the
//! provenance fields (author, agent, session, confidence, anchor, citations) come from the newer
//! version; a status both sides changed takes the one further along the life cycle (active <
//! resolved < archived < superseded). The content (summary and body) is where contradictions
//! live: a keyed memory whose content both sides changed differently is a contradiction; an
//! unkeyed one merges its body three-way by lines and is a contradiction only if that conflicts.

use git2::{MergeFileInput, MergeFileOptions};

use crate::model::{Memory, Status};

/// The outcome of merging two versions of one memory.
pub(super) enum FieldMerge {
    /// The merged version.
    Merged(Box<Memory>),
    /// The two versions say different things; a person (or agent) must decide.
    Contradiction,
}

/// Merges `ours` and `theirs`, two versions of one memory, against `base`.
pub(super) fn merge_memory(base: Option<&Memory>, ours: &Memory, theirs: &Memory) -> FieldMerge {
    let keyed = ours.key.is_some() || theirs.key.is_some();
    let summary = pick(base.map(|b| &b.summary), &ours.summary, &theirs.summary);
    let body = pick(base.map(|b| &b.body), &ours.body, &theirs.body);
    let newer = if theirs.updated > ours.updated {
        theirs
    } else {
        ours
    };
    let (summary, body) = match (summary, body) {
        (Some(s), Some(b)) => (s, b),
        _ if keyed => return FieldMerge::Contradiction,
        (summary, body) => {
            let body = match body {
                Some(b) => b,
                None => {
                    match merge_lines(base.map(|b| b.body.as_str()), &ours.body, &theirs.body) {
                        Some(b) => b,
                        None => return FieldMerge::Contradiction,
                    }
                }
            };
            (summary.unwrap_or_else(|| newer.summary.clone()), body)
        }
    };
    let mut merged = newer.clone();
    merged.summary = summary;
    merged.body = body;
    merged.key = ours.key.clone().or_else(|| theirs.key.clone());
    merged.created = ours.created.min(theirs.created);
    merged.updated = ours.updated.max(theirs.updated);
    merged.status = merge_status(base.map(|b| b.status), ours.status, theirs.status);
    merged.tags = merge_set(base.map(|b| &b.tags[..]), &ours.tags, &theirs.tags);
    merged.relates_to = union(&ours.relates_to, &theirs.relates_to);
    merged.supersedes = ours
        .supersedes
        .clone()
        .or_else(|| theirs.supersedes.clone());
    merged.superseded_by = ours
        .superseded_by
        .clone()
        .or_else(|| theirs.superseded_by.clone());
    FieldMerge::Merged(Box::new(merged))
}

/// Three-way choice of one value: none when both sides changed it differently.
fn pick<T: PartialEq + Clone>(base: Option<&T>, ours: &T, theirs: &T) -> Option<T> {
    if ours == theirs || base == Some(theirs) {
        Some(ours.clone())
    } else if base == Some(ours) {
        Some(theirs.clone())
    } else {
        None
    }
}

/// A status both sides changed takes the one further along the life cycle.
fn merge_status(base: Option<Status>, ours: Status, theirs: Status) -> Status {
    pick(base.as_ref(), &ours, &theirs).unwrap_or_else(|| {
        let rank = |s: Status| match s {
            Status::Active => 0,
            Status::Resolved => 1,
            Status::Archived => 2,
            Status::Superseded => 3,
        };
        if rank(theirs) > rank(ours) {
            theirs
        } else {
            ours
        }
    })
}

/// Three-way set merge: what either side added stays, what one side removed goes.
fn merge_set<T: PartialEq + Clone>(base: Option<&[T]>, ours: &[T], theirs: &[T]) -> Vec<T> {
    let base = base.unwrap_or(&[]);
    let mut out: Vec<T> = Vec::new();
    for item in ours.iter().chain(theirs) {
        if out.contains(item) {
            continue;
        }
        let in_ours = ours.contains(item);
        let in_theirs = theirs.contains(item);
        let removed = base.contains(item) && !(in_ours && in_theirs);
        if !removed {
            out.push(item.clone());
        }
    }
    out
}

fn union<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = a.to_vec();
    for item in b {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

/// A three-way line merge of two texts (git's own merge); none when the edits overlap.
pub(crate) fn merge_lines(base: Option<&str>, ours: &str, theirs: &str) -> Option<String> {
    let mut b = MergeFileInput::new();
    b.content(base.unwrap_or("").as_bytes());
    let mut o = MergeFileInput::new();
    o.content(ours.as_bytes());
    let mut t = MergeFileInput::new();
    t.content(theirs.as_bytes());
    let mut options = MergeFileOptions::new();
    let result = crate::store::merge_file(&b, &o, &t, &mut options).ok()?;
    if !result.is_automergeable() {
        return None;
    }
    String::from_utf8(result.content().to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_merge_keeps_additions_and_honours_removals() {
        let base = vec!["a", "b"];
        let ours = vec!["a", "c"]; // removed b, added c
        let theirs = vec!["a", "b", "d"]; // added d
        assert_eq!(merge_set(Some(&base), &ours, &theirs), vec!["a", "c", "d"]);
        assert_eq!(merge_set(None, &["x"], &["y"]), vec!["x", "y"]);
    }

    #[test]
    fn status_rule_is_the_further_along() {
        use Status::*;
        assert_eq!(merge_status(Some(Active), Active, Resolved), Resolved);
        assert_eq!(merge_status(Some(Active), Archived, Resolved), Archived);
        assert_eq!(merge_status(Some(Resolved), Resolved, Active), Active);
        assert_eq!(merge_status(Some(Active), Resolved, Archived), Archived);
        assert_eq!(merge_status(Some(Active), Superseded, Archived), Superseded);
    }

    use crate::model::{Key, MemoryId};
    use jiff::Timestamp;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    /// The version both sides started from: keyed or not, at time 0.
    fn base(keyed: bool) -> Memory {
        let mut m = Memory::bare(
            MemoryId::generate().unwrap(),
            "decisions",
            "Use SQLite",
            Status::Active,
            at(0),
        );
        m.body = "one\ntwo\nthree\n".into();
        m.key = keyed.then(|| Key::parse("db-engine").unwrap());
        m
    }

    fn merged(base: &Memory, ours: &Memory, theirs: &Memory) -> Memory {
        match merge_memory(Some(base), ours, theirs) {
            FieldMerge::Merged(m) => *m,
            FieldMerge::Contradiction => panic!("a contradiction"),
        }
    }

    #[test]
    fn provenance_comes_from_the_version_updated_last_whichever_side_it_is() {
        let b = base(false);
        let (mut ours, mut theirs) = (b.clone(), b.clone());
        ours.agent = Some("ours".into());
        theirs.agent = Some("theirs".into());
        ours.updated = at(10);
        theirs.updated = at(20);
        let m = merged(&b, &ours, &theirs);
        assert_eq!(m.agent.as_deref(), Some("theirs"));
        assert_eq!((m.created, m.updated), (at(0), at(20)));
        ours.updated = at(30);
        assert_eq!(merged(&b, &ours, &theirs).agent.as_deref(), Some("ours"));
    }

    #[test]
    fn a_keyed_memory_merges_its_other_fields_but_not_two_content_edits() {
        let b = base(true);
        let (mut ours, mut theirs) = (b.clone(), b.clone());
        ours.tags = vec!["db".into()];
        theirs.relates_to = vec![MemoryId::generate().unwrap()];
        ours.relates_to = vec![MemoryId::generate().unwrap()];
        let m = merged(&b, &ours, &theirs);
        assert_eq!(m.tags, ["db"]);
        assert_eq!(
            m.relates_to,
            [ours.relates_to[0].clone(), theirs.relates_to[0].clone()]
        );
        // Edits of different lines of the body: merged for an unkeyed memory, a contradiction
        // for a keyed one (its content is one statement).
        ours.body = "ONE\ntwo\nthree\n".into();
        theirs.body = "one\ntwo\nTHREE\n".into();
        assert!(matches!(
            merge_memory(Some(&b), &ours, &theirs),
            FieldMerge::Contradiction
        ));
        let unkeyed = |mut m: Memory| {
            m.key = None;
            m
        };
        let m = merged(&unkeyed(b), &unkeyed(ours), &unkeyed(theirs));
        assert_eq!(m.body, "ONE\ntwo\nTHREE\n");
    }

    #[test]
    fn relations_are_the_union_of_both_sides() {
        let [x, y, z] = [(); 3].map(|_| MemoryId::generate().unwrap());
        assert_eq!(
            union(&[x.clone(), y.clone()], &[y.clone(), z.clone()]),
            [x, y, z]
        );
    }

    #[test]
    fn line_merge_takes_both_sides_edits_or_refuses_overlap() {
        let base = "one\ntwo\nthree\n";
        let merged = merge_lines(Some(base), "ONE\ntwo\nthree\n", "one\ntwo\nTHREE\n");
        assert_eq!(merged.as_deref(), Some("ONE\ntwo\nTHREE\n"));
        assert!(merge_lines(Some(base), "uno\ntwo\nthree\n", "eins\ntwo\nthree\n").is_none());
    }
}
