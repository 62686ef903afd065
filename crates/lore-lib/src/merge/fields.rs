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
    let result = git2::merge_file(&b, &o, &t, Some(&mut options)).ok()?;
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
    }

    #[test]
    fn line_merge_takes_both_sides_edits_or_refuses_overlap() {
        let base = "one\ntwo\nthree\n";
        let merged = merge_lines(Some(base), "ONE\ntwo\nthree\n", "one\ntwo\nTHREE\n");
        assert_eq!(merged.as_deref(), Some("ONE\ntwo\nTHREE\n"));
        assert!(merge_lines(Some(base), "uno\ntwo\nthree\n", "eins\ntwo\nthree\n").is_none());
    }
}
