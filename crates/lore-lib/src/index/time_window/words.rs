//! The time grammar's vocabulary: numbers, units, month and weekday names, days of the month,
//! years. Each reads one lowercased word (a month name also whether it was capitalised).

use jiff::civil::Weekday;
use jiff::{Span, ToSpan};

use super::Token;

/// A number in digits (1–999) or words (one to twelve, and a few round ones).
pub(super) fn number(w: &str) -> Option<i64> {
    if let Ok(n) = w.parse::<i64>() {
        return (1..1000).contains(&n).then_some(n);
    }
    const WORDS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(p) = WORDS.iter().position(|x| *x == w) {
        return Some(p as i64 + 1);
    }
    match w {
        "fifteen" => Some(15),
        "twenty" => Some(20),
        "thirty" => Some(30),
        _ => None,
    }
}

/// A unit of time as a calendar span of one.
pub(super) fn unit(w: &str) -> Option<Unit> {
    Some(match w.strip_suffix('s').unwrap_or(w) {
        "hour" => Unit::Hours(1),
        "day" => Unit::Days(1),
        "week" => Unit::Days(7),
        "fortnight" => Unit::Days(14),
        "month" => Unit::Months(1),
        "year" => Unit::Years(1),
        _ => return None,
    })
}

/// A span of calendar time, multiplied before use (months and years are calendar months).
#[derive(Clone, Copy)]
pub(super) enum Unit {
    Hours(i64),
    Days(i64),
    Months(i64),
    Years(i64),
}

impl Unit {
    pub(super) fn times(self, n: i64) -> Span {
        match self {
            Unit::Hours(h) => (h * n).hours(),
            Unit::Days(d) => (d * n).days(),
            Unit::Months(m) => (m * n).months(),
            Unit::Years(y) => (y * n).years(),
        }
    }
}

/// A month's name (or its three-letter form): 1–12. "may" and "march" count only capitalised
/// ("May", "March"), since the lowercase words are usually a verb.
pub(super) fn month_word(w: &str, token: Option<&Token>) -> Option<i8> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    const SHORT: [&str; 12] = [
        "jan", "feb", "", "apr", "", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    if w.is_empty() {
        return None;
    }
    let m = MONTHS
        .iter()
        .zip(SHORT)
        .position(|(m, s)| *m == w || s == w || (w == "sept" && s == "sep"))?;
    if matches!(w, "may" | "march") && !token.is_some_and(|t| t.capital) {
        return None;
    }
    Some(m as i8 + 1)
}

/// A day of the month: `1`–`31`, optionally with `st`/`nd`/`rd`/`th`.
pub(super) fn day_of_month(w: &str) -> Option<i8> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    let d: i8 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// A year from 1900 to 2199.
pub(super) fn year(w: &str) -> Option<i16> {
    let y: i16 = w.parse().ok()?;
    (w.len() == 4 && (1900..2200).contains(&y)).then_some(y)
}

/// A weekday's full name. (Plurals, "on Saturdays", name a habit, not a day; the short forms
/// "sat", "wed", "sun" are as often other words.)
pub(super) fn weekday(w: &str) -> Option<Weekday> {
    Some(match w {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return None,
    })
}
