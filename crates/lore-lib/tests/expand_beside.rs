//! Recall expands around strong hits: a candidate written just before or after a strong hit in
//! the same agent session (the answer to the question that matched) takes a share of its
//! relevance, within the query's filter, and only when the share asked for is above 0.

use lore::index::RankOptions;
use lore::{Hit, ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;

/// Writes a memory in `session` at `minute` past a fixed hour; returns its id.
fn turn(lore: &Lore, namespace: &str, session: Option<&str>, minute: i64, text: &str) -> String {
    let new = NewMemory {
        namespace: namespace.into(),
        summary: text.into(),
        ..NewMemory::default()
    };
    let when: jiff::Timestamp = "2026-03-02T10:00:00Z".parse().unwrap();
    let ctx = WriteContext {
        session: session.map(Into::into),
        now: Some(when + jiff::SignedDuration::from_mins(minute)),
        ..WriteContext::default()
    };
    lore.remember(&new, &ctx).unwrap().memory.id.to_string()
}

/// A handle on `repo` ranking by BM25 alone: the candidates are exactly the memories that
/// share a word with the query.
fn bm25_only(repo: &TestRepo) -> Lore {
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(None);
    lore
}

fn search(lore: &mut Lore, query: &str, filter: &ListFilter, beside: f64) -> Vec<Hit> {
    let options = RankOptions {
        beside,
        now: Some("2026-03-03T00:00:00Z".parse().unwrap()),
        ..RankOptions::default()
    };
    lore.search(query, filter, &options, true).unwrap()
}

fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.memory.id.to_string()).collect()
}

/// A conversation: a question about the staging database, its answer (one word in common with
/// the question), a turn that shares nothing; a turn of another session and a memory outside any
/// session that also match.
struct Conversation {
    _repo: TestRepo,
    lore: Lore,
    question: String,
    answer: String,
    later: String,
    elsewhere: String,
}

fn conversation() -> Conversation {
    let repo = TestRepo::new();
    let lore = bm25_only(&repo);
    let chat = Some("chat-1");
    turn(
        &lore,
        "research",
        chat,
        0,
        "Good morning, ready for the release review",
    );
    let question = turn(
        &lore,
        "research",
        chat,
        1,
        "Which port does the staging database use?",
    );
    let answer = turn(
        &lore,
        "decisions",
        chat,
        2,
        "The database moved to 5433 in the migration",
    );
    let later = turn(
        &lore,
        "research",
        chat,
        3,
        "Then the dashboards need new links",
    );
    let elsewhere = turn(
        &lore,
        "research",
        Some("chat-2"),
        2,
        "Lunch with the database team",
    );
    turn(
        &lore,
        "research",
        None,
        5,
        "The staging database is backed up nightly",
    );
    Conversation {
        _repo: repo,
        lore,
        question,
        answer,
        later,
        elsewhere,
    }
}

/// What a neighbour with weights `weights` is lifted to by `seed` at share `part`: that part of
/// the seed's relevance times its own weights, never above that part of the seed's score.
fn expected_lift(seed: &Hit, part: f64, weights: f64) -> f64 {
    let fused = seed.explain.as_ref().unwrap().fused;
    (part * fused * weights).min(part * seed.score)
}

fn hit<'h>(hits: &'h [Hit], id: &str) -> Option<(usize, &'h Hit)> {
    hits.iter()
        .enumerate()
        .find(|(_, h)| h.memory.id.as_str() == id)
}

#[test]
fn a_weak_match_beside_a_strong_hit_takes_a_share_of_its_relevance_and_says_why() {
    let mut c = conversation();
    let query = "staging database port";
    let off = search(&mut c.lore, query, &ListFilter::default(), 0.0);
    let on = search(&mut c.lore, query, &ListFilter::default(), 0.5);
    assert_eq!(ids(&on).first(), Some(&c.question), "{on:#?}");
    let (place_off, before) = hit(&off, &c.answer).expect("the answer matches a word");
    let (place_on, lifted) = hit(&on, &c.answer).unwrap();
    let why = lifted.explain.as_ref().unwrap();
    assert_eq!(why.beside.as_deref(), Some(c.question.as_str()), "{on:#?}");
    let weights = why.recency * why.namespace * why.status;
    assert_eq!(lifted.score, expected_lift(&on[0], 0.5, weights), "{on:#?}");
    assert!(
        (lifted.score - why.fused * weights).abs() < 1e-12,
        "{on:#?}"
    );
    assert!(
        lifted.score > before.score && place_on < place_off,
        "{off:#?} {on:#?}"
    );
    // A match in another session takes nothing; a turn that matches nothing stays out.
    let (_, other) = hit(&on, &c.elsewhere).expect("it matches a word");
    assert_eq!(other.explain.as_ref().unwrap().beside, None);
    assert!(hit(&on, &c.later).is_none(), "{on:#?}");
    assert!(
        on.iter()
            .all(|h| h.explain.as_ref().unwrap().bm25.is_some())
    );
}

#[test]
fn a_neighbour_that_matches_better_on_its_own_keeps_its_own_score() {
    let mut c = conversation();
    // The question and the answer both match well: each is the other's neighbour, and each
    // keeps its own score, above half of the other's.
    let query = "database port migration";
    let off = search(&mut c.lore, query, &ListFilter::default(), 0.0);
    let on = search(&mut c.lore, query, &ListFilter::default(), 0.5);
    for id in [&c.question, &c.answer] {
        let (_, a) = hit(&off, id).unwrap();
        let (_, b) = hit(&on, id).unwrap();
        assert_eq!(b.explain.as_ref().unwrap().beside, None, "{on:#?}");
        assert_eq!(a.score, b.score);
    }
}

#[test]
fn without_a_share_nothing_is_lifted() {
    let mut c = conversation();
    let off = search(
        &mut c.lore,
        "staging database port",
        &ListFilter::default(),
        0.0,
    );
    assert!(hit(&off, &c.answer).is_some());
    assert!(
        off.iter()
            .all(|h| h.explain.as_ref().unwrap().beside.is_none()),
        "{off:#?}"
    );
}

/// An index written by the schema before sessions were kept (8) is brought forward in place:
/// each row's session is read from its record, nothing is rebuilt, and expansion works at once.
#[test]
fn an_index_of_schema_8_gains_the_sessions_in_place() {
    let mut c = conversation();
    c.lore.index().unwrap();
    let path = lore::index::index_path(c.lore.store());
    let Conversation {
        _repo, mut lore, ..
    } = c;
    let memories = lore.list(&ListFilter::default()).unwrap();
    drop(lore);
    let conn = rusqlite::Connection::open(&path).unwrap();
    lore_testutils::write_records_whole(&conn, &memories);
    conn.execute_batch(
        "DROP INDEX memories_session;
         ALTER TABLE memories DROP COLUMN session;
         INSERT INTO meta (name, value) VALUES ('kept-through-the-migration', 'yes');
         PRAGMA user_version = 8;",
    )
    .unwrap();
    conn.execute_batch(lore_testutils::FULL_TEXT_TABLE_OF_SCHEMA_11)
        .unwrap();
    conn.execute_batch(lore_testutils::INDEX_INSERT_TRIGGERS_OF_SCHEMA_9)
        .unwrap();
    drop(conn);
    let mut lore = bm25_only(&_repo);
    let on = search(
        &mut lore,
        "staging database port",
        &ListFilter::default(),
        0.5,
    );
    assert!(
        on.iter()
            .any(|h| h.explain.as_ref().unwrap().beside.is_some()),
        "{on:#?}"
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 12);
    let kept: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'kept-through-the-migration'",
            [],
            |r| r.get(0),
        )
        .ok();
    assert_eq!(
        kept.as_deref(),
        Some("yes"),
        "the index was rebuilt, not migrated"
    );
    let sessions: i64 = conn
        .query_row(
            "SELECT count(*) FROM memories WHERE session IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 5);
}

/// A session where the candidate two turns from the top hit has a decision between them, and
/// common-word memories outside any session that keep that candidate's own score low.
fn two_turns_apart() -> (TestRepo, Lore, String, String) {
    let repo = TestRepo::new();
    let lore = bm25_only(&repo);
    let s = Some("chat-9");
    let seed = turn(
        &lore,
        "research",
        s,
        0,
        "The alpha plan for the zebra rollout",
    );
    turn(&lore, "decisions", s, 1, "Unrelated words in between");
    let far = turn(&lore, "research", s, 2, "A zebra, again");
    for (i, kind) in ["crossing", "stripes", "herd", "mussel", "finch", "fish"]
        .iter()
        .enumerate()
    {
        turn(
            &lore,
            "research",
            None,
            10 + i as i64,
            &format!("Zebra {kind}"),
        );
    }
    (repo, lore, seed, far)
}

#[test]
fn two_turns_away_the_share_is_halved_and_a_filtered_turn_still_counts() {
    let (_repo, mut lore, seed, far) = two_turns_apart();
    let research_only = ListFilter {
        namespace: Some("research".into()),
        ..ListFilter::default()
    };
    for filter in [ListFilter::default(), research_only] {
        let hits = search(&mut lore, "alpha zebra", &filter, 0.5);
        assert_eq!(ids(&hits).first(), Some(&seed), "{hits:#?}");
        let (_, lifted) = hit(&hits, &far).unwrap();
        let why = lifted.explain.as_ref().unwrap();
        // The decision between them is a turn even where the filter leaves it out.
        assert_eq!(why.beside.as_deref(), Some(seed.as_str()), "{hits:#?}");
        let weights = why.recency * why.namespace * why.status;
        assert_eq!(
            lifted.score,
            expected_lift(&hits[0], 0.25, weights),
            "{hits:#?}"
        );
    }
}

/// The neighbour of a superseded hit stays below it and below its replacement, at any share.
#[test]
fn a_neighbour_of_a_superseded_hit_stays_below_it_and_its_replacement() {
    let repo = TestRepo::new();
    let mut lore = bm25_only(&repo);
    let s = Some("chat-3");
    let old = turn(
        &lore,
        "research",
        s,
        0,
        "Which port does the staging database use?",
    );
    let answer = turn(
        &lore,
        "research",
        s,
        1,
        "Moved during the database migration",
    );
    turn(&lore, "research", None, 5, "Backups run nightly");
    let done = lore
        .supersede(
            &old,
            &NewMemory {
                namespace: "research".into(),
                summary: "The staging database port is 6000".into(),
                ..NewMemory::default()
            },
            &WriteContext::default(),
        )
        .unwrap();
    let new = done.new.memory.id.to_string();
    for share in [0.5, 0.9] {
        let hits = search(
            &mut lore,
            "staging database port",
            &ListFilter::default(),
            share,
        );
        let score = |id: &str| hit(&hits, id).map(|(_, h)| h.score);
        let (Some(o), Some(n), Some(a)) = (score(&old), score(&new), score(&answer)) else {
            panic!("all three are found: {hits:#?}");
        };
        assert!(a < o && o < n, "answer {a}, old {o}, new {n}: {hits:#?}");
    }
}

/// A share outside 0..=0.9 (1 would let a neighbour tie its hit) is refused, saying so.
#[test]
fn a_share_outside_0_to_0_9_is_refused_saying_so() {
    let with = |beside: f64| lore::ops::memory::Ranking {
        beside: Some(beside),
        ..Default::default()
    };
    for bad in [-0.1, 0.95, 1.0, f64::NAN] {
        let err = with(bad).options().unwrap_err();
        assert!(
            err.to_string().contains("expected a number from 0 to 0.9"),
            "{bad}: {err}"
        );
    }
    assert_eq!(with(0.9).options().unwrap().beside, 0.9);
    assert_eq!(with(0.0).options().unwrap().beside, 0.0);
}
