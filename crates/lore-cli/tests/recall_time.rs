//! `lore recall` reads the time a query names: a dated window filters, a relative one boosts,
//! `--no-time` turns the reading off; the window is in the JSON and the text output.

mod common;

use common::{json, ok};
use lore_testutils::TestRepo;

fn hits(value: &serde_json::Value) -> usize {
    value["hits"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_dated_window_filters_and_a_relative_one_boosts() {
    let repo = TestRepo::new();
    ok(
        &repo,
        &[
            "remember",
            "Cache the embedder per process",
            "-n",
            "patterns",
        ],
    );

    let before = json(&repo, &["recall", "cache", "before", "2000-01-01"]);
    assert_eq!(before["time_window"]["use"], "filter", "{before}");
    assert_eq!(before["time_window"]["phrase"], "before 2000-01-01");
    assert_eq!(before["time_window"]["end"], "2000-01-01T00:00:00Z");
    assert_eq!(
        hits(&before),
        0,
        "nothing was written before 2000: {before}"
    );

    let since = json(&repo, &["recall", "cache", "since", "2000-01-01"]);
    assert_eq!(since["time_window"]["use"], "filter");
    assert_eq!(hits(&since), 1, "{since}");

    // Relative words boost: the memory, written now and outside last week, is still found.
    let last_week = json(&repo, &["recall", "cache", "last", "week", "--explain"]);
    assert_eq!(last_week["time_window"]["use"], "boost", "{last_week}");
    assert_eq!(hits(&last_week), 1);
    let today = json(&repo, &["recall", "cache", "today", "--explain"]);
    let time = today["hits"][0]["explain"]["time"].as_f64().unwrap();
    assert!(
        (time - 1.5).abs() < 1e-9,
        "written today: the full boost, {today}"
    );

    let off = json(
        &repo,
        &["recall", "cache", "before", "2000-01-01", "--no-time"],
    );
    assert!(off.get("time_window").is_none(), "{off}");

    let text = ok(&repo, &["recall", "cache", "before", "2000-01-01"]);
    assert!(
        text.starts_with("time: \"before 2000-01-01\" read as the beginning .. "),
        "{text}"
    );
    assert!(text.contains("only memories written then"), "{text}");
}
