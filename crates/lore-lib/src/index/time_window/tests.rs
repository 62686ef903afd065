//! Tests of the time grammar: expressions, their windows, and what is left alone.

use super::*;

/// Wednesday 25 November 2026, 15:00 UTC.
fn now() -> Zoned {
    "2026-11-25T15:00:00Z[UTC]".parse().unwrap()
}

/// The window as `(start, end, use)` in UTC dates/times, or `None`.
fn window(text: &str) -> Option<(String, String, WindowUse)> {
    find(text, &now()).map(|w| (w.start.to_string(), w.end.to_string(), w.usage))
}

const F: WindowUse = WindowUse::Filter;
const B: WindowUse = WindowUse::Boost;

/// Each case's window is as expected.
fn check(cases: &[(&str, &str, &str, WindowUse)]) {
    for (text, start, end, usage) in cases {
        assert_eq!(
            window(text),
            Some((start.to_string(), end.to_string(), *usage)),
            "{text}"
        );
    }
}

/// Expressions that name their year: filters.
#[test]
fn dated_expressions_filter() {
    check(&[
        (
            "during March 2024",
            "2024-03-01T00:00:00Z",
            "2024-04-01T00:00:00Z",
            F,
        ),
        ("in 2025", "2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z", F),
        (
            "on 2026-05-01",
            "2026-05-01T00:00:00Z",
            "2026-05-02T00:00:00Z",
            F,
        ),
        (
            "on 2026/05/01",
            "2026-05-01T00:00:00Z",
            "2026-05-02T00:00:00Z",
            F,
        ),
        (
            "on the 3rd of June, 2024",
            "2024-06-03T00:00:00Z",
            "2024-06-04T00:00:00Z",
            F,
        ),
        (
            "since 2026-11-01",
            "2026-11-01T00:00:00Z",
            "2026-11-25T15:00:00Z",
            F,
        ),
        (
            "before 2026-01-01",
            "-009999-01-02T01:59:59Z",
            "2026-01-01T00:00:00Z",
            F,
        ),
        (
            "from 2026-01-05 to 2026-01-09",
            "2026-01-05T00:00:00Z",
            "2026-01-10T00:00:00Z",
            F,
        ),
    ]);
}

/// Days, weeks, months and weekdays counted from today: boosts; several expressions make one window over them all.
#[test]
fn calendar_words_boost() {
    check(&[
        (
            "what did we decide yesterday",
            "2026-11-24T00:00:00Z",
            "2026-11-25T00:00:00Z",
            B,
        ),
        (
            "the day before yesterday",
            "2026-11-23T00:00:00Z",
            "2026-11-24T00:00:00Z",
            B,
        ),
        (
            "what changed last week",
            "2026-11-16T00:00:00Z",
            "2026-11-23T00:00:00Z",
            B,
        ),
        (
            "bugs fixed this week",
            "2026-11-23T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "last month's outage",
            "2026-10-01T00:00:00Z",
            "2026-11-01T00:00:00Z",
            B,
        ),
        (
            "plans made last year",
            "2025-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
            B,
        ),
        (
            "what did I do on Saturday",
            "2026-11-21T00:00:00Z",
            "2026-11-22T00:00:00Z",
            B,
        ),
        (
            "last Wednesday",
            "2026-11-18T00:00:00Z",
            "2026-11-19T00:00:00Z",
            B,
        ),
        (
            "on Wednesday",
            "2026-11-25T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "the release in March",
            "2026-03-01T00:00:00Z",
            "2026-04-01T00:00:00Z",
            B,
        ),
        (
            "in december",
            "2025-12-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
            B,
        ),
        (
            "on March 15th",
            "2026-03-15T00:00:00Z",
            "2026-03-16T00:00:00Z",
            B,
        ),
        (
            "on Dec 24",
            "2025-12-24T00:00:00Z",
            "2025-12-25T00:00:00Z",
            B,
        ),
        (
            "after October",
            "2026-11-01T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "in the past three months",
            "2026-08-25T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "over the last 2 weeks",
            "2026-11-11T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "the past week",
            "2026-11-18T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "what broke today",
            "2026-11-25T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "between May 1 and May 3",
            "2026-05-01T00:00:00Z",
            "2026-05-04T00:00:00Z",
            B,
        ),
        (
            "in March and April",
            "2026-03-01T00:00:00Z",
            "2026-05-01T00:00:00Z",
            B,
        ),
    ]);
}

/// Distances in time ("two days ago", "recently"): boosts, wider the further back.
#[test]
fn approximate_distances_boost() {
    check(&[
        (
            "in the past few months",
            "2026-08-25T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "two days ago",
            "2026-11-22T15:00:00Z",
            "2026-11-24T15:00:00Z",
            B,
        ),
        (
            "5 days ago",
            "2026-11-19T09:00:00Z",
            "2026-11-21T21:00:00Z",
            B,
        ),
        (
            "a week ago",
            "2026-11-16T21:00:00Z",
            "2026-11-20T09:00:00Z",
            B,
        ),
        (
            "a couple of days ago",
            "2026-11-22T15:00:00Z",
            "2026-11-24T15:00:00Z",
            B,
        ),
        (
            "a few weeks ago",
            "2026-10-30T09:00:00Z",
            "2026-11-09T21:00:00Z",
            B,
        ),
        (
            "recently",
            "2026-11-11T00:00:00Z",
            "2026-11-25T15:00:00Z",
            B,
        ),
        (
            "the other day",
            "2026-11-18T00:00:00Z",
            "2026-11-24T00:00:00Z",
            B,
        ),
        (
            "two months ago and last week",
            "2026-09-10T09:00:00Z",
            "2026-11-23T00:00:00Z",
            B,
        ),
    ]);
}

#[test]
fn words_that_only_look_like_time_name_no_window() {
    for text in [
        "how many days ago did I buy a smoker",
        "the March 15th issue of the magazine",
        "what time do I wake up on Tuesdays",
        "I may march on",
        "April said the index was slow",
        "2023 errors in the log",
        "what should I cook this weekend",
        "we sat down on the sun deck",
        "last time the build broke",
        "plan for next week",
        "",
    ] {
        assert_eq!(window(text), None, "{text}");
    }
}

#[test]
fn the_phrase_is_the_words_as_written() {
    let w = find("What did we decide Last Week about caching?", &now()).unwrap();
    assert_eq!(w.phrase, "Last Week");
    let w = find("in March and in April", &now()).unwrap();
    assert_eq!(w.phrase, "in March, in April");
}

#[test]
fn closeness_is_one_inside_and_falls_off_outside() {
    let w = find("yesterday", &now()).unwrap();
    let inside: Timestamp = "2026-11-24T12:00:00Z".parse().unwrap();
    let a_day_out: Timestamp = "2026-11-23T00:00:00Z".parse().unwrap();
    let a_week_out: Timestamp = "2026-11-17T00:00:00Z".parse().unwrap();
    assert_eq!(w.closeness(inside), 1.0);
    assert!(w.closeness(a_day_out) < 0.4 && w.closeness(a_day_out) > 0.3);
    assert!(w.closeness(a_week_out) < 0.01);
}

#[test]
fn cost_is_bounded_for_long_text() {
    let long = "last week ".repeat(100_000);
    let w = find(&long, &now()).unwrap();
    assert_eq!(w.usage, WindowUse::Boost);
    assert!(w.phrase.len() < 10 * MAX_TOKENS);
}

/// Phrases the grammar reads, in many shapes, and some it leaves alone.
const PHRASES: &[&str] = &[
    "what did we decide yesterday",
    "what changed last week",
    "the day before yesterday",
    "on Saturday",
    "this weekend",
    "in March",
    "on February 29",
    "on the 31st of April",
    "the 31st",
    "since May 1",
    "between March 3 and March 9",
    "three days ago",
    "in the past 2 weeks",
    "recently",
    "the other day",
    "on 2026-05-01",
    "during March 2024",
    "today",
    "tonight",
    "how to configure the linker",
    "April said the index was slow",
    "",
];

/// Reading the zone only for text that reads as time changes no window: every phrase at
/// instants by a day's, a month's and a leap year's end, in zones across the date line.
#[test]
fn the_zone_is_asked_only_when_it_can_matter() {
    let instants = [
        "2026-11-25T15:00:00Z",
        "2028-02-28T09:30:00Z",
        "2027-12-31T23:30:00Z",
        "2028-01-01T00:30:00Z",
        "2028-02-28T23:00:00Z",
        "2028-03-01T01:00:00Z",
        "2026-04-30T11:30:00Z",
        "2026-05-01T12:30:00Z",
    ];
    // Zones across the date line, and beyond it as a POSIX `TZ` or an old local mean time
    // may be (jiff allows ±25:59:59), at instants where their dates differ from UTC's by a day
    // or more (09:30 UTC on 28 February 2028 is already 29 February from +14:30).
    let zones = [
        -(25 * 3600 + 3599),
        -16 * 3600,
        -12 * 3600,
        -11 * 3600,
        -5 * 3600,
        0,
        19_800,
        13 * 3600,
        14 * 3600,
        15 * 3600,
        24 * 3600 + 59 * 60,
        25 * 3600 + 3599,
    ];
    for instant in instants {
        let now: Timestamp = instant.parse().unwrap();
        for seconds in zones {
            let zone = TimeZone::fixed(jiff::tz::Offset::from_seconds(seconds).unwrap());
            for text in PHRASES {
                let expected = find(text, &now.to_zoned(zone.clone()));
                let found = find_at(text, now, || zone.clone());
                assert_eq!(found, expected, "{text} at {instant}, offset {seconds}s");
            }
        }
    }
    for text in [
        "how to configure the linker",
        "April said the index was slow",
        "",
    ] {
        let now: Timestamp = "2026-11-25T15:00:00Z".parse().unwrap();
        assert_eq!(
            find_at(text, now, || panic!("the zone was asked for {text:?}")),
            None
        );
    }
}
