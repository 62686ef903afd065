//! Reasoning trees end to end through the operations: tree shape in git, replay, scores as
//! notes, outcomes as refs, search filters, finishing with a keyed lesson, sequential thinking,
//! bundles, concurrent writers, and bad input that writes nothing.

use std::collections::BTreeMap;

use lore_testutils::TestRepo;

use crate::memory::{Lore, WriteContext};
use crate::ops::Env;
use crate::ops::sequential::SequentialThinking;
use crate::ops::thoughts::*;
use crate::store::Store;
use crate::thoughts::search::OutcomeFilter;
use crate::thoughts::{Outcome, session_ref};

fn lore(repo: &TestRepo) -> Lore {
    Lore::new(Store::discover(&repo.path()).unwrap())
}

fn ctx() -> WriteContext {
    WriteContext {
        agent: Some("tester".into()),
        ..WriteContext::default()
    }
}

fn add(lore: &mut Lore, session: &str, parent: Option<&str>, text: &str, score: f64) -> String {
    Env::new(lore, ctx())
        .run(ThinkAdd {
            session: Some(session.into()),
            parent: parent.map(str::to_string),
            text: text.into(),
            score: Some(score),
            trace: vec![serde_json::json!({"tool": "calc", "input": text})],
            ..ThinkAdd::default()
        })
        .unwrap()
        .id
}

fn search(lore: &mut Lore, request: ThinkSearch) -> Vec<String> {
    Env::new(lore, ctx())
        .run(request)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn refs(repo: &TestRepo) -> String {
    repo.git(&["for-each-ref", "--format=%(refname)"])
}

#[test]
fn thoughts_form_a_tree_of_commits_and_replay_from_an_id() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let root = add(&mut lore, "algebra", None, "Let x be the unknown.", 0.5);
    let a = add(
        &mut lore,
        "algebra",
        Some(&root),
        "Try x = 3.\nCheck: 9.",
        0.4,
    );
    let b = add(
        &mut lore,
        "algebra",
        Some(&root[..8]),
        "Try x = 4.\nCheck: 16.",
        0.9,
    );
    let c = add(&mut lore, "algebra", Some(&b), "So x = 4 works.", 0.95);
    // Each thought's commit has its parent thought as its only parent; siblings branch.
    assert_eq!(repo.git(&["rev-parse", &format!("{a}^")]).trim(), root);
    assert_eq!(repo.git(&["rev-parse", &format!("{b}^")]).trim(), root);
    assert_eq!(repo.git(&["rev-parse", &format!("{c}^")]).trim(), b);
    let files = repo.git(&["ls-tree", "--name-only", &c]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["metadata.json", "scores.json", "thought.md", "trace.jsonl"]
    );
    // Every thought is reachable from the session ref, the pruned branch too.
    let reachable = repo.git(&["rev-list", &session_ref("algebra")]);
    for id in [&root, &a, &b, &c] {
        assert!(reachable.contains(id.as_str()), "{id} not reachable");
    }
    // Scores are versions on the session's scores ref, one directory per thought.
    let dir = format!("refs/lore/scores/algebra:{}/{}", &c[..2], &c[2..]);
    let listed = repo.git(&["ls-tree", "--name-only", &dir]);
    let version = listed.lines().last().unwrap();
    let note = repo.git(&["show", &format!("{dir}/{version}")]);
    assert!(note.contains("0.95"), "{note}");

    let replayed = Env::new(&mut lore, ctx())
        .run(ThinkReplay {
            id: c[..10].into(),
            into: None,
        })
        .unwrap();
    let ids: Vec<&str> = replayed.path.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, [root.as_str(), b.as_str(), c.as_str()]);
    assert_eq!(replayed.path[2].metadata.depth, 2);
    assert_eq!(replayed.path[1].text, "Try x = 4.\nCheck: 16.\n");
    assert_eq!(replayed.path[1].trace[0]["tool"], "calc");
    assert_eq!(replayed.path[1].metadata.agent.as_deref(), Some("tester"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay");
    let written = Env::new(&mut lore, ctx())
        .run(ThinkReplay {
            id: c.clone(),
            into: Some(out.clone()),
        })
        .unwrap()
        .written;
    assert_eq!(written.len(), 3);
    let last = std::fs::read_to_string(out.join(format!("02-{}", &c[..12])).join("thought.md"));
    assert_eq!(last.unwrap(), "So x = 4 works.\n");
    assert!(out.join("replay.json").exists());
    // Materialising again into the same, now full, directory is refused.
    let again = Env::new(&mut lore, ctx()).run(ThinkReplay {
        id: c.clone(),
        into: Some(out),
    });
    assert_eq!(again.unwrap_err().code(), "invalid");

    let diff = Env::new(&mut lore, ctx())
        .run(ThinkDiff {
            from: a.clone(),
            to: b.clone(),
        })
        .unwrap();
    let changed: Vec<String> = diff
        .lines
        .iter()
        .filter(|l| l.origin == '+' || l.origin == '-')
        .map(|l| format!("{}{}", l.origin, l.text))
        .collect();
    assert_eq!(
        changed,
        ["-Try x = 3.", "-Check: 9.", "+Try x = 4.", "+Check: 16."]
    );
    assert_eq!(diff.to_scores.combined, 0.9);
}

#[test]
fn ranking_follows_scores_outcomes_and_filters() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let root = add(&mut lore, "s1", None, "plan the parser", 0.5);
    let low = add(
        &mut lore,
        "s1",
        Some(&root),
        "parser with regex tokens",
        0.2,
    );
    let high = add(
        &mut lore,
        "s1",
        Some(&root),
        "parser with a hand lexer",
        0.8,
    );
    let ranked = search(
        &mut lore,
        ThinkSearch {
            query: Some("parser lexer".into()),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(ranked[0], high);
    // Rescoring moves the note and the index follows.
    Env::new(&mut lore, ctx())
        .run(ThinkScore {
            id: low.clone(),
            score: Some(1.0),
            components: BTreeMap::new(),
        })
        .unwrap();
    let ranked = search(&mut lore, ThinkSearch::default());
    assert_eq!(ranked[0], low);
    // Outcomes are refs; the filter reads them.
    let marked = Env::new(&mut lore, ctx())
        .run(ThinkOutcome {
            id: high.clone(),
            outcome: Outcome::Failed,
        })
        .unwrap();
    assert!(refs(&repo).contains(&marked.refname));
    assert!(marked.refname.starts_with("refs/lore/outcomes/s1/failed_"));
    let failed = search(
        &mut lore,
        ThinkSearch {
            outcome: Some(OutcomeFilter::Failed),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(failed, std::slice::from_ref(&high));
    // Marking it success supersedes the failed mark, which stays as history.
    Env::new(&mut lore, ctx())
        .run(ThinkOutcome {
            id: high.clone(),
            outcome: Outcome::Success,
        })
        .unwrap();
    assert!(refs(&repo).contains("failed_") && refs(&repo).contains("success_"));
    let failed = search(
        &mut lore,
        ThinkSearch {
            outcome: Some(OutcomeFilter::Failed),
            ..ThinkSearch::default()
        },
    );
    assert!(failed.is_empty(), "{failed:?}");
    // The frontier holds the open leaves only.
    let mut frontier = search(
        &mut lore,
        ThinkSearch {
            frontier: true,
            ..ThinkSearch::default()
        },
    );
    frontier.sort();
    let mut leaves = vec![low.clone(), high.clone()];
    leaves.sort();
    assert_eq!(frontier, leaves);
    // Keywords must all be present; the pickaxe finds where a word was introduced.
    let grep = search(
        &mut lore,
        ThinkSearch {
            grep: Some("regex parser".into()),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(grep, std::slice::from_ref(&low));
    let pickaxe = search(
        &mut lore,
        ThinkSearch {
            pickaxe: Some("lexer".into()),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(pickaxe, std::slice::from_ref(&high));
    let introduced = search(
        &mut lore,
        ThinkSearch {
            pickaxe: Some("parse".into()),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(
        introduced,
        std::slice::from_ref(&root),
        "children keep the word: no change"
    );
}

#[test]
fn near_duplicates_are_flagged_at_the_copyability_threshold() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let same = add(&mut lore, "s", None, "integrate x squared from 0 to 3", 0.9);
    add(&mut lore, "s", None, "sort the list of users by age", 0.9);
    let out = Env::new(&mut lore, ctx())
        .run(ThinkSearch {
            query: Some("integrate x squared from 0 to 3".into()),
            ..ThinkSearch::default()
        })
        .unwrap();
    assert_eq!(
        out.hits.len(),
        1,
        "only thoughts sharing words are candidates"
    );
    assert_eq!(out.hits[0].id, same);
    assert!(out.hits[0].similarity.unwrap() > 0.99);
    assert!(out.hits[0].near_duplicate);
    let partial = Env::new(&mut lore, ctx())
        .run(ThinkSearch {
            query: Some("integrate something else entirely".into()),
            ..ThinkSearch::default()
        })
        .unwrap();
    assert!(!partial.hits[0].near_duplicate);
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let mut run_add = |parent: Option<&str>, score: f64| {
        Env::new(&mut lore, ctx())
            .run(ThinkAdd {
                session: Some("s".into()),
                parent: parent.map(str::to_string),
                text: "a thought".into(),
                score: Some(score),
                ..ThinkAdd::default()
            })
            .map(|a| a.id)
    };
    for bad in [f64::NAN, 1.5, -0.1, f64::INFINITY] {
        assert_eq!(run_add(None, bad).unwrap_err().code(), "invalid", "{bad}");
    }
    assert_eq!(
        run_add(Some("deadbeef"), 0.5).unwrap_err().code(),
        "thought_not_found"
    );
    assert_eq!(refs(&repo).trim(), "refs/heads/main", "nothing written");
    // A commit that is not a thought is not a parent either.
    let head = repo.git(&["rev-parse", "HEAD"]);
    let err = Env::new(&mut lore, ctx())
        .run(ThinkAdd {
            session: Some("s".into()),
            parent: None,
            text: "root".into(),
            ..ThinkAdd::default()
        })
        .map(|_| ());
    err.unwrap();
    let not_thought = crate::thoughts::write::add_thought(
        lore.store(),
        &crate::thoughts::write::NewThought {
            session: "s".into(),
            parent: Some(git2::Oid::from_str(head.trim()).unwrap()),
            text: "child of a code commit".into(),
            ..Default::default()
        },
        &ctx(),
    );
    assert_eq!(not_thought.unwrap_err().code(), "thought_not_found");
    // A parent in another session is refused.
    let other = add(&mut lore, "other", None, "elsewhere", 0.5);
    let cross = Env::new(&mut lore, ctx()).run(ThinkAdd {
        session: Some("s".into()),
        parent: Some(other),
        text: "x".into(),
        ..ThinkAdd::default()
    });
    assert_eq!(cross.unwrap_err().code(), "thought_not_found");
    let count = repo.git(&["rev-list", "--count", &session_ref("s")]);
    assert_eq!(count.trim(), "3", "session start, the root and its record");
    // Rescoring with a bad score or an unknown id writes nothing.
    let bad_rescore = Env::new(&mut lore, ctx()).run(ThinkScore {
        id: "0000".into(),
        score: Some(0.5),
        components: BTreeMap::new(),
    });
    assert_eq!(bad_rescore.unwrap_err().code(), "thought_not_found");
    // A bad session name.
    let bad_session = Env::new(&mut lore, ctx()).run(ThinkAdd {
        session: Some("../main".into()),
        text: "x".into(),
        ..ThinkAdd::default()
    });
    assert_eq!(bad_session.unwrap_err().code(), "invalid");
}

#[test]
fn done_merges_the_best_path_and_keeps_a_keyed_lesson() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let root = add(&mut lore, "q1", None, "What is 6 * 7?", 0.5);
    let good = add(&mut lore, "q1", Some(&root), "6 * 7 = 42", 0.9);
    add(&mut lore, "q1", Some(&root), "6 * 7 = 48", 0.1);
    // A lesson that gives the answer away is refused before anything is written.
    let leaky = Env::new(&mut lore, ctx()).run(ThinkDone {
        session: Some("q1".into()),
        answer: Some("42".into()),
        topic: Some("multiplication".into()),
        lesson: Some("The answer is 42.".into()),
        ..ThinkDone::default()
    });
    assert_eq!(leaky.unwrap_err().code(), "invalid");
    assert!(!refs(&repo).contains("best"));
    assert!(!refs(&repo).contains("refs/lore/memory"));
    let done = Env::new(&mut lore, ctx())
        .run(ThinkDone {
            session: Some("q1".into()),
            answer: Some("42".into()),
            topic: Some("multiplication".into()),
            lesson: Some("Split a product into tens and units before multiplying.".into()),
            ..ThinkDone::default()
        })
        .unwrap();
    assert_eq!(done.best, good, "the best-scored leaf by default");
    let lesson = done.lesson.unwrap();
    assert_eq!(lesson.path, "lessons/multiplication.md");
    // The ledger's tip merges the best thought; best points at it.
    let tip = session_ref("q1");
    assert_eq!(repo.git(&["rev-parse", &format!("{tip}^2")]).trim(), good);
    assert_eq!(
        repo.git(&["rev-parse", "refs/lore/outcomes/q1/best^1"])
            .trim(),
        good,
        "best is a mark whose first parent is the best thought"
    );
    assert_eq!(
        repo.git(&["rev-parse", "refs/lore/outcomes/q1/best^{tree}"]),
        repo.git(&["rev-parse", &format!("{good}^{{tree}}")])
    );
    let best = search(
        &mut lore,
        ThinkSearch {
            outcome: Some(OutcomeFilter::Best),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(best, std::slice::from_ref(&good));
    // A finished session has no frontier.
    let frontier = search(
        &mut lore,
        ThinkSearch {
            frontier: true,
            ..ThinkSearch::default()
        },
    );
    assert!(frontier.is_empty());
    // A second lesson on the topic is a new version of the same file, not a second memory.
    let r2 = add(&mut lore, "q2", None, "What is 7 * 8?", 0.8);
    let done2 = Env::new(&mut lore, ctx())
        .run(ThinkDone {
            session: Some("q2".into()),
            best: Some(r2),
            topic: Some("multiplication".into()),
            lesson: Some("Use the nearest square and adjust.".into()),
            ..ThinkDone::default()
        })
        .unwrap();
    assert_eq!(done2.lesson.unwrap().path, "lessons/multiplication.md");
    let files = repo.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        "refs/lore/memory",
        "lessons/",
    ]);
    assert_eq!(
        files.lines().filter(|l| l.ends_with(".md")).count(),
        1,
        "{files}"
    );
}

#[test]
fn sequential_thinking_maps_numbers_revisions_and_branches_onto_the_tree() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let mut step = |n: u32, f: &dyn Fn(&mut SequentialThinking)| {
        let mut call = SequentialThinking {
            thought: format!("thought number {n}"),
            thought_number: n,
            total_thoughts: 3,
            next_thought_needed: true,
            session: Some("seq".into()),
            ..SequentialThinking::default()
        };
        f(&mut call);
        Env::new(&mut lore, ctx()).run(call)
    };
    let one = step(1, &|_| {}).unwrap();
    let two = step(2, &|_| {}).unwrap();
    assert_eq!(two.parent.as_deref(), Some(one.id.as_str()));
    let revised = step(3, &|c| {
        c.is_revision = Some(true);
        c.revises_thought = Some(2);
    })
    .unwrap();
    assert_eq!(
        revised.parent.as_deref(),
        Some(one.id.as_str()),
        "a sibling of 2"
    );
    let branch = step(4, &|c| {
        c.branch_from_thought = Some(1);
        c.branch_id = Some("alt".into());
        c.score = Some(0.9);
        c.outcome = Some(crate::ops::sequential::StepOutcome::Success);
    })
    .unwrap();
    assert_eq!(branch.parent.as_deref(), Some(one.id.as_str()));
    assert_eq!(branch.branches, ["alt"]);
    assert_eq!(branch.thought_history_length, 4);
    assert_eq!(branch.total_thoughts, 4);
    let next_on_branch = step(5, &|c| c.branch_id = Some("alt".into())).unwrap();
    assert_eq!(next_on_branch.parent.as_deref(), Some(branch.id.as_str()));

    // A thought without a branch id continues the main line, not the branch just written.
    let main_again = step(6, &|_| {}).unwrap();
    assert_eq!(main_again.parent.as_deref(), Some(revised.id.as_str()));
    assert_eq!(main_again.unresolved, None);
    // A reference to a thought the session does not hold is written on its line and flagged.
    let missing = step(7, &|c| {
        c.is_revision = Some(true);
        c.revises_thought = Some(9);
    })
    .unwrap();
    assert_eq!(missing.parent.as_deref(), Some(main_again.id.as_str()));
    assert!(
        missing
            .unresolved
            .as_deref()
            .unwrap()
            .contains("revisesThought 9")
    );
    let lost_branch = step(8, &|c| {
        c.branch_from_thought = Some(40);
        c.branch_id = Some("alt".into());
    })
    .unwrap();
    assert_eq!(
        lost_branch.parent.as_deref(),
        Some(next_on_branch.id.as_str())
    );
    assert!(lost_branch.unresolved.is_some());
    let bare_revision = step(9, &|c| c.is_revision = Some(true)).unwrap();
    assert_eq!(bare_revision.parent.as_deref(), Some(missing.id.as_str()));
    assert!(bare_revision.unresolved.is_some());
    let zero = step(0, &|_| {});
    assert_eq!(zero.unwrap_err().code(), "invalid");
    let bad = step(10, &|c| c.score = Some(f64::NAN));
    assert_eq!(bad.unwrap_err().code(), "invalid");
    let index = crate::thoughts::index::ThoughtIndex::open(lore.store()).unwrap();
    assert_eq!(index.count().unwrap(), 9, "refused calls wrote nothing");
}

#[test]
fn bundles_carry_sessions_with_identical_ids_and_refuse_other_projects() {
    let origin = TestRepo::new();
    origin.git(&[
        "remote",
        "add",
        "origin",
        "https://example.com/team/project.git",
    ]);
    let mut lore_a = lore(&origin);
    let root = add(&mut lore_a, "shared", None, "first idea", 0.5);
    let leaf = add(&mut lore_a, "shared", Some(&root), "second idea", 0.7);
    Env::new(&mut lore_a, ctx())
        .run(ThinkOutcome {
            id: leaf.clone(),
            outcome: Outcome::Success,
        })
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.bundle");
    let exported = Env::new(&mut lore_a, ctx())
        .run(ThinkBundle {
            sessions: vec!["shared".into()],
            file: file.clone(),
        })
        .unwrap();
    assert_eq!(exported.refs.len(), 3, "{:?}", exported.refs);
    // git itself reads the file.
    origin.git(&["bundle", "verify", file.to_str().unwrap()]);

    let clone = TestRepo::new();
    clone.git(&[
        "remote",
        "add",
        "origin",
        "git@example.com:team/project.git",
    ]);
    let mut lore_b = lore(&clone);
    let imported = Env::new(&mut lore_b, ctx())
        .run(ThinkUnbundle { file: file.clone() })
        .unwrap();
    assert_eq!(imported.updated.len(), 3);
    let replayed = Env::new(&mut lore_b, ctx())
        .run(ThinkReplay {
            id: leaf.clone(),
            into: None,
        })
        .unwrap();
    assert_eq!(replayed.path[0].id, root, "ids are bit-identical");
    assert_eq!(replayed.path[1].scores.combined, 0.7);
    let success = search(
        &mut lore_b,
        ThinkSearch {
            outcome: Some(OutcomeFilter::Success),
            ..ThinkSearch::default()
        },
    );
    assert_eq!(success, [leaf]);
    // Importing again changes nothing.
    let again = Env::new(&mut lore_b, ctx())
        .run(ThinkUnbundle { file: file.clone() })
        .unwrap();
    assert!(again.updated.is_empty());

    let stranger = TestRepo::new();
    stranger.git(&[
        "remote",
        "add",
        "origin",
        "https://example.com/other/thing.git",
    ]);
    let mut lore_c = lore(&stranger);
    let refused = Env::new(&mut lore_c, ctx()).run(ThinkUnbundle { file });
    assert_eq!(refused.unwrap_err().code(), "foreign_bundle");
    assert_eq!(refs(&stranger).trim(), "refs/heads/main");
}

#[test]
fn concurrent_writers_lose_no_thought() {
    let repo = TestRepo::new();
    let mut first = lore(&repo);
    let root = add(&mut first, "race", None, "start", 0.5);
    let path = repo.path();
    let handles: Vec<_> = (0..3)
        .map(|w| {
            let path = path.clone();
            let root = root.clone();
            std::thread::spawn(move || {
                let mut lore = Lore::new(Store::discover(&path).unwrap());
                for i in 0..10 {
                    add(
                        &mut lore,
                        "race",
                        Some(&root),
                        &format!("worker {w} idea {i}"),
                        0.5,
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let index = crate::thoughts::index::ThoughtIndex::open(first.store()).unwrap();
    assert_eq!(index.count().unwrap(), 31);
    // The index is derived: deleted, it is rebuilt from the refs.
    drop(index);
    std::fs::remove_file(crate::thoughts::index::index_path(first.store())).unwrap();
    let rebuilt = crate::thoughts::index::ThoughtIndex::open(first.store()).unwrap();
    assert_eq!(rebuilt.count().unwrap(), 31);
}

#[test]
fn an_unreadable_score_version_is_a_warning_and_the_thought_keeps_its_score() {
    let repo = TestRepo::new();
    let mut lore = lore(&repo);
    let id = add(&mut lore, "s1", None, "Cache the token stream", 0.7);
    let oid = git2::Oid::from_str(&id).unwrap();
    lore.store()
        .transact_ref(&crate::thoughts::scores::versions_ref("s1"), |_| {
            let edit = crate::store::Edit::Upsert {
                path: format!(
                    "{}/9999999999999-damaged.json",
                    crate::thoughts::scores::thought_dir(oid)
                ),
                content: b"not json".to_vec(),
            };
            let message = crate::store::Message {
                subject: "a damaged note".into(),
                body: None,
                trailers: Vec::new(),
            };
            Ok((crate::store::RefWrite::on_tip(vec![edit], message), ()))
        })
        .unwrap();
    let _ = lore.store().take_warnings();
    let hits = Env::new(&mut lore, ctx())
        .run(ThinkSearch {
            session: Some("s1".into()),
            ..ThinkSearch::default()
        })
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 1);
    assert!((hits[0].score - 0.7).abs() < 1e-9, "{}", hits[0].score);
    let warnings = lore.store().take_warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("score version") && w.contains("not readable")),
        "{warnings:?}"
    );
}
