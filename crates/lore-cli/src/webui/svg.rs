//! Inline SVG drawings: bar and line charts for the overview, and a reasoning tree as a graph
//! (score as colour, outcomes marked, the best path highlighted, each node a link).

use std::collections::HashMap;

use lore::thoughts::index::IndexedThought;
use maud::{Markup, html};

use super::html::enc;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 180.0;
const PAD: f64 = 32.0;

/// A coordinate as SVG takes it: one decimal.
fn at(v: f64) -> String {
    format!("{v:.1}")
}

/// Horizontal bars, one per `(label, value)`.
pub fn bars(title: &str, rows: &[(String, f64)]) -> Markup {
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1.0);
    let row_h = 22.0;
    let h = PAD + rows.len() as f64 * row_h;
    html! {
        svg class="chart" role="img" aria-label=(title) viewBox=(format!("0 0 {WIDTH} {h}"))
            width=(WIDTH) height=(h)
        {
            title { (title) }
            @for (i, (label, value)) in rows.iter().enumerate() {
                @let y = PAD / 2.0 + i as f64 * row_h;
                @let w = (WIDTH - 260.0) * value / max;
                text x="150" y=(at(y + 12.0)) text-anchor="end" { (label) }
                rect x="160" y=(at(y)) width=(at(w)) height="14" class="bar" {}
                text x=(at(166.0 + w)) y=(at(y + 12.0)) { (value) }
            }
        }
    }
}

/// A line through `(x, y)` points, with the axes' extremes labelled by `x_label`/`y_label`.
pub fn line(title: &str, points: &[(f64, f64)], x_labels: (&str, &str), y_unit: &str) -> Markup {
    html! {
        svg class="chart" role="img" aria-label=(title)
            viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) width=(WIDTH) height=(HEIGHT)
        {
            title { (title) }
            @if points.is_empty() {
                text x="20" y="40" { "nothing yet" }
            } @else {
                (series(points, x_labels, y_unit))
            }
        }
    }
}

/// The axes, the line and its points, scaled to the chart.
fn series(points: &[(f64, f64)], x_labels: (&str, &str), y_unit: &str) -> Markup {
    let (x0, x1) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let y1 = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
    let sx = |x: f64| {
        if x1 > x0 {
            PAD + (x - x0) / (x1 - x0) * (WIDTH - 2.0 * PAD)
        } else {
            WIDTH / 2.0
        }
    };
    let sy = |y: f64| HEIGHT - PAD - y / y1 * (HEIGHT - 2.0 * PAD);
    let path: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", sx(p.0), sy(p.1)))
        .collect();
    let (b, r) = (HEIGHT - PAD, WIDTH - PAD);
    html! {
        line x1=(PAD) y1=(b) x2=(r) y2=(b) class="axis" {}
        line x1=(PAD) y1=(PAD) x2=(PAD) y2=(b) class="axis" {}
        polyline points=(path.join(" ")) class="series" {}
        text x=(PAD) y=(HEIGHT - 8.0) { (x_labels.0) }
        text x=(r) y=(HEIGHT - 8.0) text-anchor="end" { (x_labels.1) }
        text x="4" y=(PAD - 8.0) { (format_number(y1)) " " (y_unit) }
        @for p in points {
            circle cx=(at(sx(p.0))) cy=(at(sy(p.1))) r="2.5" class="point" {}
        }
    }
}

/// An axis value: a count prints as a count ("11 memories", never "11.00"), a large value
/// whole, a small fraction with two decimals.
fn format_number(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// At most `max` characters of a thought's first line, for the label under its node (the whole
/// line is the node's tooltip and the selected node's panel).
fn first_words(line: &str, max: usize) -> String {
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max - 1).collect();
    format!("{}…", cut.trim_end())
}

/// The colour of a score in 0..=1: red (0) through amber to green (1).
fn score_colour(score: f64) -> String {
    let hue = (score.clamp(0.0, 1.0) * 120.0).round();
    format!("hsl({hue}, 70%, 45%)")
}

/// Where a tree's nodes go: each thought's parent (by position) and column, and the number of
/// columns. Leaves take consecutive columns; a parent sits above the middle of its children.
struct TreeLayout {
    parent: Vec<Option<usize>>,
    column: Vec<f64>,
    columns: f64,
}

impl TreeLayout {
    fn of(thoughts: &[IndexedThought]) -> TreeLayout {
        let index: HashMap<&str, usize> = thoughts
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect();
        let parent: Vec<Option<usize>> = thoughts
            .iter()
            .map(|t| t.parent.as_deref().and_then(|p| index.get(p)).copied())
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); thoughts.len()];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        let mut column = vec![0.0f64; thoughts.len()];
        let mut next = 0.0;
        for &r in &roots {
            place(r, &children, &mut column, &mut next, 0);
        }
        TreeLayout {
            parent,
            column,
            columns: next,
        }
    }
}

/// Gives node `n` and those below it their columns, from `next` on.
fn place(n: usize, children: &[Vec<usize>], x: &mut [f64], next: &mut f64, depth: usize) {
    if children[n].is_empty() || depth > 512 {
        x[n] = *next;
        *next += 1.0;
        return;
    }
    for &c in &children[n] {
        place(c, children, x, next, depth + 1);
    }
    let first = x[children[n][0]];
    let last = x[*children[n].last().unwrap_or(&children[n][0])];
    x[n] = (first + last) / 2.0;
}

/// A reasoning tree: roots at the top, children below, leaves spread left to right.
pub fn tree(session: &str, thoughts: &[IndexedThought], best: &[String], selected: &str) -> Markup {
    let layout = TreeLayout::of(thoughts);
    let depth_max = thoughts.iter().map(|t| t.depth).max().unwrap_or(0) as f64;
    // Wide enough for each node's first words under it.
    let col = 120.0;
    let row = 84.0;
    let w = (layout.columns.max(1.0) * col + 40.0).max(200.0);
    let h = (depth_max + 1.0) * row + 40.0;
    let pos = |i: usize| {
        (
            20.0 + layout.column[i] * col + col / 2.0,
            30.0 + thoughts[i].depth as f64 * row,
        )
    };
    let on_best = |id: &str| best.iter().any(|b| b == id);
    html! {
        svg class="tree" role="img" aria-label={ "Reasoning tree of " (session) }
            viewBox=(format!("0 0 {w} {h}")) width=(w) height=(h)
        {
            title { "Reasoning tree of " (session) }
            @for (i, t) in thoughts.iter().enumerate() {
                @if let Some(p) = layout.parent[i] {
                    @let ((x1, y1), (x2, y2)) = (pos(p), pos(i));
                    @let best_edge = on_best(&t.id) && on_best(&thoughts[p].id);
                    line x1=(at(x1)) y1=(at(y1)) x2=(at(x2)) y2=(at(y2))
                        class=(if best_edge { "edge best" } else { "edge" }) {}
                }
            }
            @for (i, t) in thoughts.iter().enumerate() {
                (node(session, t, pos(i), on_best(&t.id), t.id == selected))
            }
        }
    }
}

/// One thought as a circle coloured by its score at `(cx, cy)`, its outcome marked, its score
/// and first words under it, linked to its replay.
fn node(
    session: &str,
    t: &IndexedThought,
    (cx, cy): (f64, f64),
    best: bool,
    selected: bool,
) -> Markup {
    let mut class = String::from("node");
    if best {
        class.push_str(" best");
    }
    if selected {
        class.push_str(" selected");
    }
    let mark = match t.outcome.as_deref() {
        Some("success") => "✓",
        Some("failed") => "✗",
        _ => "",
    };
    let first_line = t.text.lines().next().unwrap_or("");
    let href = format!("/thoughts?session={}&node={}", enc(session), enc(&t.id));
    html! {
        a href=(href) class="node-link" {
            title {
                (first_line) " — score " (format!("{:.2}", t.score))
                @if let Some(o) = &t.outcome { ", " (o) }
            }
            circle cx=(at(cx)) cy=(at(cy)) r="16" class=(class) fill=(score_colour(t.score)) {}
            text x=(at(cx)) y=(at(cy + 5.0)) text-anchor="middle" class="mark" { (mark) }
            text x=(at(cx)) y=(at(cy + 30.0)) text-anchor="middle" class="label" {
                (format!("{:.2}", t.score))
            }
            text x=(at(cx)) y=(at(cy + 44.0)) text-anchor="middle" class="thought" {
                (first_words(first_line, 18))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{first_words, format_number};

    #[test]
    fn a_node_label_is_the_first_words() {
        assert_eq!(first_words("Split the problem", 18), "Split the problem");
        assert_eq!(
            first_words("Split the problem by input size", 18),
            "Split the problem…"
        );
        assert_eq!(first_words("ééééééééééééééééééééé", 5), "éééé…");
    }

    #[test]
    fn counts_print_as_counts() {
        assert_eq!(format_number(11.0), "11");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(2.5), "2.50");
        assert_eq!(format_number(1234.56), "1235");
    }
}
