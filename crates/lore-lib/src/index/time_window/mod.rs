//! Time expressions in queries ("last week", "two days ago", "in March", "since 2024-05-01")
//! resolved against a reference time into a window of time that recall filters or boosts by.
//!
//! A small grammar of English, read token by token, no model: each expression is a *point* (a
//! day, a week, a month, a year: a span of calendar time) or a *range*; a preposition turns a
//! point into a range (`since X` runs from X to now, `before X` up to X). Dates without a
//! preposition are left alone: "the March 15th issue" names a thing, not a time.
//!
//! Where every expression names its year ("on 2024-05-01", "in March 2024", "since 2025",
//! "between May 1, 2024 and May 3, 2024") the window is a filter: nothing outside it is
//! recalled. Where it depends on today ("yesterday", "last week", "in March", "two days ago",
//! "recently") it is a boost: memories written then rank higher, others still count. People
//! say "last weekend" of a thing they wrote down days later, and measured on LongMemEval a
//! filter on such words dropped more gold sessions than it kept out noise.

mod words;

use jiff::civil::Date;
use jiff::tz::{Offset, TimeZone};
use jiff::{Timestamp, ToSpan, Zoned};
use serde::Serialize;

use words::{day_of_month, month_word, number, unit, weekday, year};

/// How recall uses a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowUse {
    /// Only memories written inside the window are recalled.
    Filter,
    /// Memories written inside (or near) the window rank higher.
    Boost,
}

/// A window of time a query names.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimeWindow {
    /// The words that named it, as written.
    pub phrase: String,
    /// The first instant inside.
    pub start: Timestamp,
    /// The first instant after.
    pub end: Timestamp,
    /// Filter or boost.
    #[serde(rename = "use")]
    pub usage: WindowUse,
}

impl TimeWindow {
    /// How close `t` is to the window: 1 inside, falling off outside with the distance measured
    /// in window lengths (at least a day), `exp(−distance / length)`.
    pub fn closeness(&self, t: Timestamp) -> f64 {
        let day = 86_400_000i64;
        let (s, e, t) = (
            self.start.as_millisecond(),
            self.end.as_millisecond(),
            t.as_millisecond(),
        );
        let distance = if t < s {
            s - t
        } else if t >= e {
            t - e + 1
        } else {
            return 1.0;
        };
        let length = (e - s).max(day) as f64;
        (-(distance as f64) / length).exp()
    }

    /// Whether `t` is inside.
    pub fn contains(&self, t: Timestamp) -> bool {
        self.start <= t && t < self.end
    }
}

/// The most tokens a query is read for time expressions (longer text costs no more).
const MAX_TOKENS: usize = 512;

/// The window the time expressions of `text` name, read against `now` in its time zone; `None`
/// if it names none. Several expressions make one window spanning them all, a filter only when
/// every one of them names its year.
pub fn find(text: &str, now: &Zoned) -> Option<TimeWindow> {
    let tokens = tokenize(text);
    let mut found: Vec<(usize, usize, Resolved)> = Vec::new();
    let mut i = 0;
    let now_ts = now.timestamp();
    while i < tokens.len() {
        match expression(&tokens, i, now) {
            // Memories are written in the past: a window is cut at now, and one wholly in the
            // future ("this weekend" on a Tuesday) names a plan, not a time to recall.
            Some((len, r)) if r.start < r.end.min(now_ts) && i + len <= tokens.len() => {
                let end = r.end.min(now_ts);
                found.push((i, i + len, Resolved { end, ..r }));
                i += len;
            }
            Some((len, _)) => i += len,
            None => i += 1,
        }
    }
    let first = found.first()?;
    let last = found.last()?;
    let phrase = text[tokens[first.0].at.0..tokens[last.1 - 1].at.1].to_string();
    let phrase = if found.len() == 1 {
        phrase
    } else {
        found
            .iter()
            .map(|(a, b, _)| &text[tokens[*a].at.0..tokens[*b - 1].at.1])
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(TimeWindow {
        phrase,
        start: found.iter().map(|f| f.2.start).min()?,
        end: found.iter().map(|f| f.2.end).max()?,
        usage: if found.iter().all(|f| f.2.dated) {
            WindowUse::Filter
        } else {
            WindowUse::Boost
        },
    })
}

/// [`find`] at `now` in the zone `zone` gives, asking for the zone only when an expression of
/// `text` reads as time on some date `now` can have in any zone: a query without one, the usual
/// case, costs no zone lookup (finding the system's zone reads the zone database). Whether an
/// expression reads as time depends on the local date alone. A zone's offset lies within
/// ±25:59:59 (jiff's bound; a POSIX `TZ` allows ±24:59, local mean times of old dates reach
/// ±16 hours), so the local date is one of the dates the window that far either side of `now`
/// spans, and the offsets read at (never more than 24 hours apart, the window's ends included)
/// meet every one of them.
pub fn find_at(text: &str, now: Timestamp, zone: impl FnOnce() -> TimeZone) -> Option<TimeWindow> {
    let tokens = tokenize(text);
    let reads_as_time = |offset: Offset| {
        let local = now.to_zoned(TimeZone::fixed(offset));
        (0..tokens.len()).any(|i| expression(&tokens, i, &local).is_some())
    };
    let samples = [
        Offset::MIN,
        Offset::constant(-13),
        Offset::UTC,
        Offset::constant(13),
        Offset::MAX,
    ];
    if !samples.into_iter().any(reads_as_time) {
        return None;
    }
    find(text, &now.to_zoned(zone()))
}

/// A word of the query, lowercased, with its byte range in the text.
struct Token {
    word: String,
    at: (usize, usize),
    /// Written with a capital first letter.
    capital: bool,
}

/// Words: runs of letters, digits and the `-`/`/` of dates; `'s` and trailing dots dropped.
fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut start = None;
    let keep = |c: char| c.is_alphanumeric() || c == '-' || c == '/';
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, keep(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let raw = text[s..i].trim_matches(|c| c == '-' || c == '/');
                if !raw.is_empty() {
                    let from = s + text[s..i].find(raw).unwrap_or(0);
                    tokens.push(Token {
                        word: raw.to_lowercase(),
                        at: (from, from + raw.len()),
                        capital: raw.starts_with(|c: char| c.is_uppercase()),
                    });
                    if tokens.len() == MAX_TOKENS {
                        break;
                    }
                }
                start = None;
            }
            _ => {}
        }
    }
    tokens
}

/// A resolved expression: `[start, end)` and whether it names its year (see the module's
/// documentation).
#[derive(Clone, Copy, Debug)]
struct Resolved {
    start: Timestamp,
    end: Timestamp,
    dated: bool,
}

/// The word at `i`, or "".
fn word(tokens: &[Token], i: usize) -> &str {
    tokens.get(i).map_or("", |t| t.word.as_str())
}

/// The expression starting at token `i`: its length in tokens and what it resolves to.
fn expression(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let w = word(tokens, i);
    let today = now.date();
    let tz = now.time_zone();
    let range = |start: Zoned, end: &Zoned| Resolved {
        start: start.timestamp(),
        end: end.timestamp(),
        dated: false,
    };
    match w {
        "between" | "from" => span(tokens, i, now),
        "since" | "after" | "before" | "until" | "till" => bounded(tokens, i, now),
        "recently" | "lately" => {
            let start = day_start(today.checked_sub(14.days()).ok()?, tz)?;
            Some((1, range(start, now)))
        }
        "the" if word(tokens, i + 1) == "other" && word(tokens, i + 2) == "day" => {
            let start = day_start(today.checked_sub(7.days()).ok()?, tz)?;
            let end = day_start(today.checked_sub(1.days()).ok()?, tz)?;
            Some((3, range(start, &end)))
        }
        "in" | "over" | "during" | "within" | "for" | "the" | "past" | "last" => {
            if let Some(found) = recent_period(tokens, i, now) {
                return Some(found);
            }
            // "in March", "during 2023", "on Saturday": the preposition belongs to the point.
            let skip = usize::from(matches!(w, "in" | "over" | "during" | "within" | "for"));
            let (len, p) = point(tokens, i + skip, now)?;
            Some((skip + len, p))
        }
        "on" | "by" | "of" => {
            let (len, p) = point_or_date(tokens, i + 1, now)?;
            Some((1 + len, p))
        }
        _ => {
            if let Some(found) = ago(tokens, i, now) {
                return Some(found);
            }
            point(tokens, i, now)
        }
    }
}

/// "between A and B", "from A to|until|till|through B": from the earlier start to the later
/// end.
fn span(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let w = word(tokens, i);
    let (a_len, a) = point_or_date(tokens, i + 1, now)?;
    let joiner = word(tokens, i + 1 + a_len);
    let joins = if w == "between" {
        joiner == "and"
    } else {
        matches!(joiner, "to" | "until" | "till" | "through")
    };
    if !joins {
        return None;
    }
    let (b_len, b) = point_or_date(tokens, i + 2 + a_len, now)?;
    Some((
        2 + a_len + b_len,
        Resolved {
            start: a.start.min(b.start),
            end: a.end.max(b.end),
            dated: a.dated && b.dated,
        },
    ))
}

/// "since A" (A's start until now), "after A" (A's end until now), "before A" (until A's
/// start), "until|till A" (until A's end).
fn bounded(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let w = word(tokens, i);
    let (len, p) = point_or_date(tokens, i + 1, now)?;
    let now_ts = now.timestamp();
    let r = match w {
        "since" => Resolved { end: now_ts, ..p },
        "after" => Resolved {
            start: p.end,
            end: now_ts,
            ..p
        },
        "before" => Resolved {
            start: Timestamp::MIN,
            end: p.start,
            ..p
        },
        _ => Resolved {
            start: Timestamp::MIN,
            end: p.end,
            ..p
        },
    };
    Some((1 + len, r))
}

/// "(in|over|during|within|for) (the) (past|last) N units", "the past week", "the past few
/// months": from N units ago until now.
fn recent_period(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let mut j = i;
    if matches!(word(tokens, j), "in" | "over" | "during" | "within" | "for") {
        j += 1;
    }
    if word(tokens, j) == "the" {
        j += 1;
    }
    if !matches!(word(tokens, j), "past" | "last" | "previous") {
        return None;
    }
    j += 1;
    let (count, n_len) = match amount(tokens, j) {
        Some((n, len)) => (n, len),
        // "the past week" (but not "last week", a calendar week: see `point`).
        None if word(tokens, i) != "last" => (1, 0),
        None => return None,
    };
    let unit = unit(word(tokens, j + n_len))?;
    let start = now.checked_sub(unit.times(count)).ok()?;
    let start = day_start(start.date(), now.time_zone())?;
    Some((
        j + n_len + 1 - i,
        Resolved {
            start: start.timestamp(),
            end: now.timestamp(),
            dated: false,
        },
    ))
}

/// "N units ago", "a couple of days ago": a window around that distance in the past, wider for
/// longer distances (a quarter of the distance, at least a day each side). Always approximate.
fn ago(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let (count, len) = amount(tokens, i)?;
    let unit = unit(word(tokens, i + len))?;
    if word(tokens, i + len + 1) != "ago" {
        return None;
    }
    let centre = now.checked_sub(unit.times(count)).ok()?;
    let distance_ms = now.timestamp().as_millisecond() - centre.timestamp().as_millisecond();
    let half = (distance_ms / 4).max(86_400_000);
    let start = Timestamp::from_millisecond(centre.timestamp().as_millisecond() - half).ok()?;
    let end = Timestamp::from_millisecond(centre.timestamp().as_millisecond() + half).ok()?;
    Some((
        len + 2,
        Resolved {
            start,
            end: end.min(now.timestamp()),
            dated: false,
        },
    ))
}

/// A count: digits, a number word, "a"/"an", "a couple (of)" (2), "a few" (3), "several" (4).
/// Returns the count and its length in tokens.
fn amount(tokens: &[Token], i: usize) -> Option<(i64, usize)> {
    let w = word(tokens, i);
    let (lead, w) = if matches!(w, "a" | "an") {
        match word(tokens, i + 1) {
            "couple" | "few" => (1, word(tokens, i + 1)),
            _ if unit(word(tokens, i + 1)).is_some() => return Some((1, 1)),
            _ => return None,
        }
    } else {
        (0, w)
    };
    let of = usize::from(word(tokens, i + lead + 1) == "of");
    let (n, len) = match w {
        "couple" => (2, 1 + of),
        "few" => (3, 1),
        "several" => (4, 1),
        _ => (number(w)?, 1),
    };
    Some((n, lead + len))
}

/// A point of calendar time named without a preposition: "yesterday", "today", "last week",
/// "this month", "last Saturday", "Saturday", "March", "March 2023", "2023", or — after a
/// preposition, see [`point_or_date`] — a date. Exact.
fn point(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    if let Some(found) = relative_point(tokens, i, now) {
        return Some(found);
    }
    if let Some(found) = weekday_point(tokens, i, now) {
        return Some(found);
    }
    let tz = now.time_zone();
    if let Some(month) = month_word(word(tokens, i), tokens.get(i)) {
        // "March 15" is a date (only after a preposition); "March" or "March 2023" a month,
        // after a preposition or with its year ("April" alone is as often a name).
        if day_of_month(word(tokens, i + 1)).is_some() {
            return point_or_date(tokens, i, now).filter(|_| is_preposition(tokens, i));
        }
        let (year, len) = match year(word(tokens, i + 1)) {
            Some(y) => (y, 2),
            None if !is_preposition(tokens, i) => return None,
            None => {
                let y = now.year();
                (if month > now.month() { y - 1 } else { y }, 1)
            }
        };
        let start = Date::new(year, month, 1).ok()?;
        let end = start.checked_add(1.month()).ok()?;
        return days(start, end, tz, len, len == 2);
    }
    let y = year(word(tokens, i))?;
    // A bare year only counts after a preposition ("in 2023"), not as a number in a sentence.
    if !is_preposition(tokens, i) {
        return None;
    }
    let start = Date::new(y, 1, 1).ok()?;
    days(start, start.checked_add(1.year()).ok()?, tz, 1, true)
}

/// Whether the token before `i` is a preposition that makes a following date a time.
fn is_preposition(tokens: &[Token], i: usize) -> bool {
    i > 0
        && matches!(
            word(tokens, i - 1),
            "in" | "on"
                | "since"
                | "before"
                | "after"
                | "until"
                | "till"
                | "by"
                | "during"
                | "between"
                | "from"
                | "and"
                | "to"
                | "through"
                | "of"
                | "for"
                | "over"
        )
}

/// "yesterday", "today", "tonight", "the day before yesterday", "last/this week|month|year|
/// weekend", "earlier this week|month|year".
fn relative_point(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let today = now.date();
    let tz = now.time_zone();
    let day = |d: Date, len: usize| days(d, d.checked_add(1.day()).ok()?, tz, len, false);
    match word(tokens, i) {
        "today" => return day(today, 1),
        "yesterday" => return day(today.checked_sub(1.day()).ok()?, 1),
        "the"
            if word(tokens, i + 1) == "day"
                && word(tokens, i + 2) == "before"
                && word(tokens, i + 3) == "yesterday" =>
        {
            return day(today.checked_sub(2.days()).ok()?, 4);
        }
        _ => {}
    }
    let (lead, which) = match (word(tokens, i), word(tokens, i + 1)) {
        ("earlier", "this") => (2, "this"),
        ("this", "past") | ("the", "past") => (2, "last"),
        ("past", _) => (1, "last"),
        (w @ ("last" | "this"), _) => (1, w),
        _ => return None,
    };
    let monday = today
        .checked_sub((today.weekday().to_monday_zero_offset() as i64).days())
        .ok()?;
    let (start, end) = match word(tokens, i + lead) {
        "week" => (monday, monday.checked_add(1.week()).ok()?),
        "weekend" => {
            let saturday = monday.checked_add(5.days()).ok()?;
            (saturday, saturday.checked_add(2.days()).ok()?)
        }
        "month" => {
            let first = today.first_of_month();
            (first, first.checked_add(1.month()).ok()?)
        }
        "year" => {
            let first = today.first_of_year();
            (first, first.checked_add(1.year()).ok()?)
        }
        _ => return None,
    };
    let len = lead + 1;
    if which == "this" {
        return days(start, end, tz, len, false);
    }
    // The period before the current one.
    let (start, end) = match word(tokens, i + lead) {
        "week" | "weekend" => (
            start.checked_sub(1.week()).ok()?,
            end.checked_sub(1.week()).ok()?,
        ),
        "month" => (start.checked_sub(1.month()).ok()?, start),
        _ => (start.checked_sub(1.year()).ok()?, start),
    };
    days(start, end, tz, len, false)
}

/// "Saturday", "last Saturday", "this past Saturday": the most recent such day (before today
/// after "last", today included otherwise).
fn weekday_point(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let (lead, strictly_before) = match (word(tokens, i), word(tokens, i + 1)) {
        ("this", "past") => (2, true),
        ("last" | "past", _) => (1, true),
        _ => (0, false),
    };
    let target = weekday(word(tokens, i + lead))?;
    if lead == 0 && !is_preposition(tokens, i) {
        return None;
    }
    let today = now.date();
    let mut back = (7 + today.weekday().to_monday_zero_offset() as i64
        - target.to_monday_zero_offset() as i64)
        % 7;
    if back == 0 && strictly_before {
        back = 7;
    }
    let d = today.checked_sub(back.days()).ok()?;
    days(
        d,
        d.checked_add(1.day()).ok()?,
        now.time_zone(),
        lead + 1,
        false,
    )
}

/// A date after a preposition: `2024-05-01`, `2024/05/01`, `May 1(st)(,) (2024)`, `1(st) May
/// (2024)`, or any [`point`]. Without a year, the most recent such date up to today.
fn point_or_date(tokens: &[Token], i: usize, now: &Zoned) -> Option<(usize, Resolved)> {
    let tz = now.time_zone();
    // "the 3rd of June".
    if word(tokens, i) == "the" && day_of_month(word(tokens, i + 1)).is_some() {
        let (len, r) = point_or_date(tokens, i + 1, now)?;
        return Some((len + 1, r));
    }
    let w = word(tokens, i);
    let iso: Vec<&str> = w.split(['-', '/']).collect();
    if let [y, m, d] = iso[..]
        && y.len() == 4
    {
        let date = Date::new(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?).ok()?;
        return days(date, date.checked_add(1.day()).ok()?, tz, 1, true);
    }
    let (month, day, len) = if let Some(m) = month_word(w, tokens.get(i)) {
        (m, day_of_month(word(tokens, i + 1)), 2)
    } else if let Some(d) = day_of_month(w) {
        let of = usize::from(word(tokens, i + 1) == "of");
        (
            month_word(word(tokens, i + 1 + of), tokens.get(i + 1 + of))?,
            Some(d),
            2 + of,
        )
    } else {
        return point(tokens, i, now);
    };
    let Some(day) = day else {
        return point(tokens, i, now);
    };
    let (year, len, dated) = match year(word(tokens, i + len)) {
        Some(y) => (y, len + 1, true),
        None => {
            let this_year = Date::new(now.year(), month, day).ok()?;
            let y = if this_year > now.date() {
                now.year() - 1
            } else {
                now.year()
            };
            (y, len, false)
        }
    };
    let date = Date::new(year, month, day).ok()?;
    days(date, date.checked_add(1.day()).ok()?, tz, len, dated)
}

/// The start of `date` in `tz`.
fn day_start(date: Date, tz: &TimeZone) -> Option<Zoned> {
    date.to_zoned(tz.clone()).ok()
}

/// Whole days `[start, end)` in `tz`, `len` tokens long, `dated` if the words named the year.
fn days(
    start: Date,
    end: Date,
    tz: &TimeZone,
    len: usize,
    dated: bool,
) -> Option<(usize, Resolved)> {
    Some((
        len,
        Resolved {
            start: day_start(start, tz)?.timestamp(),
            end: day_start(end, tz)?.timestamp(),
            dated,
        },
    ))
}

#[cfg(test)]
mod tests;
