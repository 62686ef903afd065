//! The memory merge through real syncs: what a merge counts; one memory changed on both clones
//! merges field by field; overlapping edits of one memory's body, an edit against a forget and
//! two memories under one key are contradictions (the version in force kept live); a damaged
//! tombstone stops the merge rather than letting a forget silently not travel.

use std::path::{Path, PathBuf};

use lore::sync::sync;
use lore::{Lore, NewMemory, Patch, Status, Store, WriteContext};

fn git(dir: &Path, home: &Path, args: &[&str]) {
    lore_testutils::git_in(dir, home, args);
}

/// Two clones of one bare repository, each with a handle.
fn two_clones(dir: &Path) -> (Lore, Lore) {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    git(
        dir,
        &home,
        &["init", "-q", "--bare", "-b", "main", "central.git"],
    );
    (another_clone(dir, "a"), another_clone(dir, "b"))
}

/// A clone, named `name`, of the repository [`two_clones`] made in `dir`.
fn another_clone(dir: &Path, name: &str) -> Lore {
    let home = dir.join("home");
    git(dir, &home, &["clone", "-q", "central.git", name]);
    let path: PathBuf = dir.join(name);
    git(&path, &home, &["config", "user.name", name]);
    git(&path, &home, &["config", "user.email", "t@example.com"]);
    Lore::new(Store::discover(&path).unwrap())
}

/// `a` and `b` set memory `id`'s body differently, `a` at `minute`, `b` a minute later.
fn edit_both(a: &mut Lore, b: &mut Lore, id: &str, bodies: [&str; 2], minute: i64) {
    a.update(id, &body(bodies[0]), &at(minute)).unwrap();
    b.update(id, &body(bodies[1]), &at(minute + 1)).unwrap();
}

/// The bodies of the other versions of `lore`'s one open contradiction.
/// Asserts that `lore` has exactly one open conflict record and that `body` is among its other
/// versions.
fn assert_open_with(lore: &mut Lore, body: &str) {
    let conflicts = lore.conflicts().unwrap();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    let bodies: Vec<String> = conflicts[0]
        .others
        .iter()
        .filter_map(|o| o.body.clone())
        .collect();
    assert!(bodies.iter().any(|b| b == body), "{bodies:?}");
}

fn sync_now(lore: &Lore) -> lore::sync::SyncReport {
    try_sync(lore).unwrap()
}

fn try_sync(lore: &Lore) -> lore::Result<lore::sync::SyncReport> {
    sync(lore.store(), &lore::sync::SyncOptions::default())
}

fn shared(a: &mut Lore, b: &mut Lore, body: &str) -> String {
    share(
        a,
        b,
        NewMemory {
            namespace: "learnings".into(),
            summary: "How the release works".into(),
            body: body.into(),
            tags: vec!["release".into(), "old".into()],
            ..NewMemory::default()
        },
    )
}

/// `new` written on `a`, then both clones synced; its id.
fn share(a: &mut Lore, b: &mut Lore, new: NewMemory) -> String {
    let id = a
        .remember(&new, &WriteContext::default())
        .unwrap()
        .memory
        .id
        .to_string();
    sync_now(a);
    sync_now(b);
    id
}

fn note(summary: &str) -> NewMemory {
    NewMemory {
        namespace: "learnings".into(),
        summary: summary.into(),
        body: format!("{summary}, in detail.\n"),
        ..NewMemory::default()
    }
}

/// A write context stamped `minutes` from now (so which of two edits is later is certain).
fn at(minutes: i64) -> WriteContext {
    WriteContext {
        now: Some(jiff::Timestamp::now() + jiff::SignedDuration::from_mins(minutes)),
        ..WriteContext::default()
    }
}

/// A patch that sets the body.
fn body(text: &str) -> Patch {
    Patch {
        body: Some(text.into()),
        ..Patch::default()
    }
}

/// Whether `lore`'s tree holds a tombstone for memory `id`.
fn tombstoned(lore: &Lore, id: &str) -> bool {
    let store = lore.store();
    let path = lore::store::layout::tombstone_path(&lore::MemoryId::parse(id).unwrap());
    let snap = store.snapshot(store.tip().unwrap()).unwrap();
    snap.blob_id(&path).unwrap().is_some()
}

/// What a sync says it merged is what the other side did: added, changed and forgot; a local
/// edit the other side never saw is not counted as changed.
#[test]
fn a_sync_counts_what_the_other_side_added_changed_and_forgot() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let [x, y, z, w] = [
        "Cache warm-up",
        "Flaky login test",
        "Release train",
        "Nightly backups",
    ]
    .map(|summary| share(&mut a, &mut b, note(summary)));
    let ctx = WriteContext::default();
    for summary in ["Index rebuild", "Token rotation"] {
        a.remember(&note(summary), &ctx).unwrap();
    }
    let edit = |tag: &str| Patch {
        add_tags: vec![tag.into()],
        ..Patch::default()
    };
    a.update(&x, &edit("theirs"), &ctx).unwrap();
    a.forget(&y, &ctx).unwrap();
    b.update(&z, &edit("ours"), &ctx).unwrap();
    // w: a's change is part of b's later one, so the merge leaves b's version as it is.
    a.update(&w, &edit("ci"), &at(1)).unwrap();
    let both = Patch {
        add_tags: vec!["ci".into(), "docs".into()],
        ..Patch::default()
    };
    b.update(&w, &both, &at(2)).unwrap();
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(
        report.memories,
        lore::merge::MergeCounts {
            new: 2,
            updated: 1,
            forgotten: 1,
            conflicts: 0,
        }
    );
    assert!(b.get(&y).is_err(), "the forget travelled");
    assert!(tombstoned(&b, &y));
    assert_eq!(b.get(&w).unwrap().tags, ["ci", "docs"]);
}

/// An edit against a forget is a contradiction whichever side forgot: the edit stays live on
/// both clones and the tombstone is kept out of the merged tree.
#[test]
fn an_edit_against_a_forget_stays_live_and_the_tombstone_stays_out() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let x = share(&mut a, &mut b, note("Cache warm-up"));
    let y = share(&mut a, &mut b, note("Flaky login test"));
    let ctx = WriteContext::default();
    let edit = |text: &str| Patch {
        body: Some(format!("{text}\n")),
        ..Patch::default()
    };
    // x: forgotten on a, edited on b; y: the other way round. b merges both.
    a.forget(&x, &ctx).unwrap();
    b.update(&x, &edit("Warm from the last snapshot."), &ctx)
        .unwrap();
    b.forget(&y, &ctx).unwrap();
    a.update(&y, &edit("Retry once, then quarantine."), &ctx)
        .unwrap();
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.conflicts, 2, "{report:?}");
    let check = |lore: &mut Lore| {
        assert_eq!(lore.get(&x).unwrap().body, "Warm from the last snapshot.\n");
        assert_eq!(lore.get(&y).unwrap().body, "Retry once, then quarantine.\n");
        assert!(!tombstoned(lore, &x) && !tombstoned(lore, &y));
        let conflicts = lore.conflicts().unwrap();
        assert_eq!(conflicts.len(), 2);
        assert!(
            conflicts
                .iter()
                .all(|c| c.description == "changed on one side, forgotten on the other"),
            "{conflicts:?}"
        );
    };
    check(&mut b);
    sync_now(&a);
    check(&mut a);
}

/// Writes `edit` to `lore`'s memory chain as another tool would: no tombstone, no checks.
fn raw_write(lore: &Lore, edit: lore::store::Edit) {
    let message = lore::store::Message {
        subject: "edited by another tool".into(),
        ..lore::store::Message::default()
    };
    lore.store()
        .transact(|_| Ok((vec![edit.clone()], message.clone(), ())))
        .unwrap();
}

/// The blob at `path` in `lore`'s memory tree.
fn blob_at(lore: &Lore, path: &str) -> Option<git2::Oid> {
    let store = lore.store();
    let snap = store.snapshot(store.tip().unwrap()).unwrap();
    snap.blob_id(path).unwrap()
}

/// A memory file gone from the other side without a tombstone is kept (never deletion by
/// absence); one the other side left unreadable is merged as a plain file, so both clones
/// hold the same bytes.
#[test]
fn absence_deletes_nothing_and_an_unreadable_file_merges_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let [gone, damaged] =
        ["Cache warm-up", "Flaky login test"].map(|summary| share(&mut a, &mut b, note(summary)));
    let mut path = |id: &str| lore::store::layout::path_of(&b.get(id).unwrap());
    let (gone_path, damaged_path) = (path(&gone), path(&damaged));
    raw_write(&a, lore::store::Edit::Remove { path: gone_path });
    raw_write(
        &a,
        lore::store::Edit::Upsert {
            path: damaged_path.clone(),
            content: b"not a memory file\n".to_vec(),
        },
    );
    // b writes too, so its sync is a merge.
    b.remember(&note("Release train"), &WriteContext::default())
        .unwrap();
    sync_now(&a);
    sync_now(&b);
    assert_eq!(b.get(&gone).unwrap().summary, "Cache warm-up");
    assert!(blob_at(&a, &damaged_path).is_some());
    assert_eq!(blob_at(&b, &damaged_path), blob_at(&a, &damaged_path));
}

/// Two different memories written under one key on two clones: a contradiction, named so.
#[test]
fn two_memories_under_one_key_are_a_contradiction() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_clones(dir.path());
    let ctx = WriteContext::default();
    for (lore, engine) in [(&a, "SQLite"), (&b, "Postgres")] {
        let new = NewMemory {
            namespace: "decisions".into(),
            key: Some("db-engine".into()),
            summary: format!("Use {engine}"),
            ..NewMemory::default()
        };
        lore.remember(&new, &ctx).unwrap();
    }
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.conflicts, 1, "{report:?}");
    let conflicts = b.conflicts().unwrap();
    assert_eq!(
        conflicts[0].description,
        "written under the same key on both sides"
    );
}

#[test]
fn one_memory_changed_on_both_sides_merges_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let id = shared(&mut a, &mut b, "step one\nstep two\nstep three\n");
    let ctx = WriteContext::default();
    let patch = |body: &str, add: &str, remove: &[&str], status: Option<Status>| Patch {
        body: Some(body.into()),
        add_tags: vec![add.into()],
        remove_tags: remove.iter().map(|t| t.to_string()).collect(),
        status,
        ..Patch::default()
    };
    a.update(
        &id,
        &patch("step ONE\nstep two\nstep three\n", "ci", &["old"], None),
        &ctx,
    )
    .unwrap();
    b.update(
        &id,
        &patch(
            "step one\nstep two\nstep THREE\n",
            "docs",
            &[],
            Some(Status::Resolved),
        ),
        &ctx,
    )
    .unwrap();
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.updated, 1);
    assert_eq!(report.memories.conflicts, 0);
    let m = b.get(&id).unwrap();
    assert_eq!(
        m.body, "step ONE\nstep two\nstep THREE\n",
        "both edits, merged by line"
    );
    assert_eq!(
        m.tags,
        vec!["release", "docs", "ci"],
        "tags: union, minus what one side removed"
    );
    assert_eq!(m.status, Status::Resolved, "the status one side changed");
    sync_now(&a);
    assert_eq!(a.get(&id).unwrap(), m, "both clones agree");
}

#[test]
fn overlapping_edits_of_one_memory_are_a_contradiction_and_the_last_update_stays_live() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let id = shared(&mut a, &mut b, "deploy on fridays\n");
    let ctx = WriteContext::default();
    let theirs = a
        .update(&id, &body("never deploy on fridays\n"), &ctx)
        .unwrap()
        .commit;
    let ours = b
        .update(&id, &body("deploy on fridays before noon\n"), &ctx)
        .unwrap()
        .commit;
    // Each side writes on after its edit: the record credits each version to the commit that
    // wrote it, not to a side's tip.
    a.remember(&note("Cache warm-up"), &ctx).unwrap();
    b.remember(&note("Flaky login test"), &ctx).unwrap();
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.conflicts, 1);
    assert_eq!(b.get(&id).unwrap().body, "deploy on fridays before noon\n");
    let conflicts = b.conflicts().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(
        conflicts[0].description,
        "changed differently on both sides"
    );
    assert_eq!(
        conflicts[0].others[0].commit.as_deref(),
        Some(theirs.as_str())
    );
    let live = conflicts[0].live.as_ref().expect("a version in force");
    assert_eq!(live.commit.as_deref(), Some(ours.as_str()));
    assert_eq!(
        conflicts[0].others[0].body.as_deref(),
        Some("never deploy on fridays\n")
    );
    assert_eq!(
        conflicts[0].base.as_ref().and_then(|v| v.body.as_deref()),
        Some("deploy on fridays\n")
    );
    // The chain stays writable while the contradiction is open.
    b.update(
        &id,
        &Patch {
            add_tags: vec!["ops".into()],
            ..Patch::default()
        },
        &ctx,
    )
    .unwrap();
    let hits = b.recall("deploy fridays", &Default::default()).unwrap();
    assert!(hits.iter().any(|h| h.contradicted.is_some()));
    // Both change it differently again while the record is open: the new contradiction joins
    // that record as one more side, and counts as one.
    sync_now(&b);
    sync_now(&a);
    // b's edit is the later one, so it stays in force and a's joins the record.
    edit_both(
        &mut a,
        &mut b,
        &id,
        ["deploy on mondays\n", "deploy on tuesdays\n"],
        1,
    );
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.conflicts, 1, "{report:?}");
    assert_open_with(&mut b, "deploy on mondays\n");
}

/// A conflict record both sides changed since they parted merges as a record, not as a file
/// where ours wins: one clone settled a contradiction while the others extended it with a new
/// one, and the settling clone keeps the record open when it hears of that.
#[test]
fn a_record_settled_on_one_clone_and_extended_on_another_stays_open() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let id = shared(&mut a, &mut b, "deploy on fridays\n");
    let mut c = another_clone(dir.path(), "c");
    let first = [
        "never deploy on fridays\n",
        "deploy on fridays before noon\n",
    ];
    edit_both(&mut a, &mut b, &id, first, 1);
    sync_now(&a);
    sync_now(&b);
    sync_now(&c);
    let name = c.conflicts().unwrap()[0].name.clone();
    c.resolve_conflict(&name, &lore::Resolution::Ours, &WriteContext::default())
        .unwrap();
    assert!(c.conflicts().unwrap().is_empty());
    // Meanwhile a and b contradict each other again; b's merge extends the open record.
    sync_now(&a);
    edit_both(
        &mut a,
        &mut b,
        &id,
        ["deploy on mondays\n", "deploy on tuesdays\n"],
        3,
    );
    sync_now(&a);
    sync_now(&b);
    sync_now(&c);
    // One open record on c (not none: the extended record was not dropped).
    assert_open_with(&mut c, "deploy on mondays\n");
}

/// The version in force is the later update whichever clone merges: here the clone whose own
/// edit is the older one merges, and takes the other's.
#[test]
fn the_later_update_stays_in_force_when_the_older_side_merges() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let id = shared(&mut a, &mut b, "deploy on fridays\n");
    // b's edit is the later one, though a writes second.
    b.update(&id, &body("deploy on fridays before noon\n"), &at(2))
        .unwrap();
    a.update(&id, &body("never deploy on fridays\n"), &at(1))
        .unwrap();
    sync_now(&b);
    let report = sync_now(&a);
    assert_eq!(report.memories.conflicts, 1);
    assert_eq!(a.get(&id).unwrap().body, "deploy on fridays before noon\n");
    let conflicts = a.conflicts().unwrap();
    assert_eq!(
        conflicts[0].others[0].body.as_deref(),
        Some("never deploy on fridays\n")
    );
}

#[test]
fn a_damaged_tombstone_from_the_remote_stops_the_merge_and_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    let id = shared(&mut a, &mut b, "Tag, then push the tag.");
    // Clone a forgets the memory by hand with a tombstone that does not parse.
    let memory = a.get(&id).unwrap();
    let memory_path = lore::store::layout::path_of(&memory);
    let tombstone = lore::store::layout::tombstone_path(&memory.id);
    a.store()
        .transact(|_| {
            Ok((
                vec![
                    lore::store::Edit::Remove {
                        path: memory_path.clone(),
                    },
                    lore::store::Edit::Upsert {
                        path: tombstone.clone(),
                        content: b"id: [unclosed".to_vec(),
                    },
                ],
                lore::store::Message {
                    subject: "forget by hand".into(),
                    body: None,
                    trailers: Vec::new(),
                },
                (),
            ))
        })
        .unwrap();
    sync_now(&a);
    // Clone b edits it meanwhile, so the sync must merge.
    b.update(
        &id,
        &Patch {
            add_tags: vec!["edited".into()],
            ..Patch::default()
        },
        &WriteContext::default(),
    )
    .unwrap();
    let before = b.store().tip().unwrap();
    let err = try_sync(&b).unwrap_err();
    assert!(err.to_string().contains(&tombstone), "{err}");
    assert_eq!(b.store().tip().unwrap(), before);
    assert!(b.get(&id).unwrap().tags.contains(&"edited".to_string()));
}

#[test]
fn a_contradiction_over_a_secret_kept_under_warn_elsewhere_still_merges() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_clones(dir.path());
    a.set_secret_policy(Some(lore::secrets::SecretPolicy::Warn));
    let secret = "ghp_R8fK2mQ9vT4xW7bN1cZ5hJ3pL6sD0gY8aE2u";
    let ctx = WriteContext::default();
    let id = share(
        &mut a,
        &mut b,
        NewMemory {
            namespace: "decisions".into(),
            key: Some("deploy-token".into()),
            summary: "Which token deploys".into(),
            body: format!("Deploy with {secret}.\n"),
            ..NewMemory::default()
        },
    );
    // Both take the secret out, differently: a contradiction whose record keeps the base, the
    // one version that still holds it.
    a.update(&id, &body("Deploy from CI.\n"), &ctx).unwrap();
    b.update(&id, &body("Deploy with the vault's token.\n"), &ctx)
        .unwrap();
    sync_now(&a);
    // This clone redacts, yet merging the other side's version into a conflict record is not a
    // new write of the secret: the sync goes through.
    let report = sync_now(&b);
    assert_eq!(report.memories.conflicts, 1, "{report:?}");
}

/// Two clones sharing a memory whose body `a` then changed (not synced yet); its id.
fn shared_then_edited_on_a(dir: &Path) -> (Lore, Lore, String) {
    let (mut a, mut b) = two_clones(dir);
    let id = shared(&mut a, &mut b, "first\n");
    a.update(
        &id,
        &Patch {
            body: Some("second\n".into()),
            ..Patch::default()
        },
        &WriteContext::default(),
    )
    .unwrap();
    (a, b, id)
}

#[test]
fn a_sync_merge_that_only_brought_a_version_is_not_a_version_in_history() {
    let dir = tempfile::tempdir().unwrap();
    let (a, mut b, id) = shared_then_edited_on_a(dir.path());
    let ctx = WriteContext::default();
    // b writes something else, so its sync is a real merge, not a fast-forward.
    b.remember(
        &NewMemory {
            namespace: "learnings".into(),
            summary: "Unrelated".into(),
            ..NewMemory::default()
        },
        &ctx,
    )
    .unwrap();
    sync_now(&a);
    let report = sync_now(&b);
    assert_eq!(report.memories.updated, 1, "{report:?}");
    let (_, versions) = b.history(&id).unwrap();
    let subjects: Vec<&str> = versions.iter().map(|v| v.subject.as_str()).collect();
    assert_eq!(
        versions.len(),
        2,
        "the write and a's update only: {subjects:?}"
    );
    assert!(
        subjects.iter().all(|s| !s.starts_with("merge ")),
        "{subjects:?}"
    );
    assert_eq!(
        versions[0].memory.as_ref().map(|m| m.body.as_str()),
        Some("second\n")
    );
}

#[test]
fn a_sync_merge_that_combined_both_edits_is_a_version_saying_what_it_brought() {
    let dir = tempfile::tempdir().unwrap();
    let (a, mut b, id) = shared_then_edited_on_a(dir.path());
    let ctx = WriteContext::default();
    let mine = b
        .update(
            &id,
            &Patch {
                add_tags: vec!["ci".into()],
                ..Patch::default()
            },
            &ctx,
        )
        .unwrap()
        .commit;
    sync_now(&a);
    sync_now(&b);
    let (_, versions) = b.history(&id).unwrap();
    let merge = versions[0]
        .merge
        .as_ref()
        .expect("the merge is the newest version");
    assert!(versions[0].subject.starts_with("merge "), "{versions:?}");
    assert_eq!(merge.fields, ["body"], "{merge:?}");
    assert_eq!(merge.remote.as_deref(), Some("origin"));
    assert_eq!(merge.from.as_deref(), Some(mine.as_str()), "{versions:?}");
    assert!(versions[1..].iter().all(|v| v.merge.is_none()));
}
