//! Recall expands around strong hits: the memory written just before or after a strong hit in
//! the same agent session (the answer to the question that matched) is recalled with it, within
//! the query's filter, and only when the share asked for is above 0.

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

/// A conversation: a question about the staging database, its answer (no word in common), and
/// more turns; another session and memories outside any session.
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
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    // BM25 alone: without expansion only the turns that share words with the query are found.
    lore.set_embedder(None);
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
        "5433, moved there after the migration",
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
        "Lunch plans for friday",
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

#[test]
fn the_turn_beside_a_strong_hit_is_recalled_with_it_and_says_why() {
    let mut c = conversation();
    let hits = search(
        &mut c.lore,
        "staging database port",
        &ListFilter::default(),
        0.5,
    );
    let order = ids(&hits);
    assert_eq!(order.first(), Some(&c.question), "{hits:#?}");
    let at = order
        .iter()
        .position(|id| *id == c.answer)
        .expect("the answer beside the question is recalled");
    let answer = &hits[at];
    let why = answer.explain.as_ref().unwrap();
    assert_eq!(why.beside.as_deref(), Some(c.question.as_str()));
    assert_eq!(why.bm25, None, "it shares no word with the query");
    // Half the question's score (its status weight is 1).
    assert!(
        (answer.score - 0.5 * hits[0].score).abs() < 1e-9,
        "{hits:#?}"
    );
    // Two turns away, or in another session: not lifted.
    assert!(!order.contains(&c.later), "{hits:#?}");
    assert!(!order.contains(&c.elsewhere), "{hits:#?}");
}

#[test]
fn without_a_share_or_outside_the_filter_the_neighbour_stays_out() {
    let mut c = conversation();
    let off = ids(&search(
        &mut c.lore,
        "staging database port",
        &ListFilter::default(),
        0.0,
    ));
    assert!(off.contains(&c.question));
    assert!(!off.contains(&c.answer), "{off:?}");
    let research_only = ListFilter {
        namespace: Some("research".into()),
        ..ListFilter::default()
    };
    let filtered = ids(&search(
        &mut c.lore,
        "staging database port",
        &research_only,
        0.5,
    ));
    assert!(filtered.contains(&c.question));
    assert!(
        !filtered.contains(&c.answer),
        "a decision is outside the filter: {filtered:?}"
    );
}

#[test]
fn a_neighbour_that_matches_better_on_its_own_keeps_its_own_score() {
    let mut c = conversation();
    let hits = search(&mut c.lore, "migration", &ListFilter::default(), 0.5);
    let answer = hits
        .iter()
        .find(|h| h.memory.id.as_str() == c.answer)
        .expect("the answer matches the query itself");
    assert_eq!(answer.explain.as_ref().unwrap().beside, None, "{hits:#?}");
    assert_eq!(ids(&hits).first(), Some(&c.answer));
}
