//! Inline SVG drawings: bar and line charts for the overview, and a reasoning tree as a graph
//! (score as colour, outcomes marked, the best path highlighted, each node a link).

use std::collections::HashMap;
use std::fmt::Write as _;

use lore::thoughts::index::IndexedThought;

use super::html::{enc, esc};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 180.0;
const PAD: f64 = 32.0;

/// Horizontal bars, one per `(label, value)`.
pub fn bars(title: &str, rows: &[(String, f64)]) -> String {
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1.0);
    let row_h = 22.0;
    let h = PAD + rows.len() as f64 * row_h;
    let mut out = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {WIDTH} {h}\" \
         width=\"{WIDTH}\" height=\"{h}\"><title>{}</title>",
        esc(title),
        esc(title)
    );
    for (i, (label, value)) in rows.iter().enumerate() {
        let y = PAD / 2.0 + i as f64 * row_h;
        let w = (WIDTH - 260.0) * value / max;
        let _ = write!(
            out,
            "<text x=\"150\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"160\" y=\"{:.1}\" width=\"{w:.1}\" height=\"14\" class=\"bar\"></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">{value}</text>",
            y + 12.0,
            esc(label),
            y,
            166.0 + w,
            y + 12.0
        );
    }
    out.push_str("</svg>");
    out
}

/// A line through `(x, y)` points, with the axes' extremes labelled by `x_label`/`y_label`.
pub fn line(title: &str, points: &[(f64, f64)], x_labels: (&str, &str), y_unit: &str) -> String {
    let mut out = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\"><title>{}</title>",
        esc(title),
        esc(title)
    );
    if points.is_empty() {
        out.push_str("<text x=\"20\" y=\"40\">nothing yet</text></svg>");
        return out;
    }
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
    let _ = write!(
        out,
        "<line x1=\"{PAD}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" class=\"axis\"></line>\
         <line x1=\"{PAD}\" y1=\"{PAD}\" x2=\"{PAD}\" y2=\"{b}\" class=\"axis\"></line>\
         <polyline points=\"{}\" class=\"series\"></polyline>\
         <text x=\"{PAD}\" y=\"{}\">{}</text><text x=\"{r}\" y=\"{}\" text-anchor=\"end\">{}</text>\
         <text x=\"4\" y=\"{}\">{} {}</text>",
        path.join(" "),
        HEIGHT - 8.0,
        esc(x_labels.0),
        HEIGHT - 8.0,
        esc(x_labels.1),
        PAD - 8.0,
        format_number(y1),
        esc(y_unit),
        b = HEIGHT - PAD,
        r = WIDTH - PAD,
    );
    for p in points {
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" class=\"point\"></circle>",
            sx(p.0),
            sy(p.1)
        );
    }
    out.push_str("</svg>");
    out
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

/// A reasoning tree: roots at the top, children below, leaves spread left to right.
pub fn tree(session: &str, thoughts: &[IndexedThought], best: &[String], selected: &str) -> String {
    let index: HashMap<&str, usize> = thoughts
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); thoughts.len()];
    let mut roots = Vec::new();
    for (i, t) in thoughts.iter().enumerate() {
        match t.parent.as_deref().and_then(|p| index.get(p)) {
            Some(&p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    // Leaves take consecutive columns; a parent sits above the middle of its children.
    let mut x = vec![0.0f64; thoughts.len()];
    let mut next = 0.0;
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
    for &r in &roots {
        place(r, &children, &mut x, &mut next, 0);
    }
    let depth_max = thoughts.iter().map(|t| t.depth).max().unwrap_or(0) as f64;
    // Wide enough for each node's first words under it.
    let col = 120.0;
    let row = 84.0;
    let w = (next.max(1.0) * col + 40.0).max(200.0);
    let h = (depth_max + 1.0) * row + 40.0;
    let pos = |i: usize| {
        (
            20.0 + x[i] * col + col / 2.0,
            30.0 + thoughts[i].depth as f64 * row,
        )
    };
    let on_best = |id: &str| best.iter().any(|b| b == id);
    let mut out = format!(
        "<svg class=\"tree\" role=\"img\" aria-label=\"Reasoning tree of {}\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\"><title>Reasoning tree of {}</title>",
        esc(session),
        esc(session)
    );
    for (i, t) in thoughts.iter().enumerate() {
        if let Some(&p) = t.parent.as_deref().and_then(|p| index.get(p)) {
            let (x1, y1) = pos(p);
            let (x2, y2) = pos(i);
            let class = if on_best(&t.id) && on_best(&thoughts[p].id) {
                "edge best"
            } else {
                "edge"
            };
            let _ = write!(
                out,
                "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" class=\"{class}\"></line>"
            );
        }
    }
    for (i, t) in thoughts.iter().enumerate() {
        let (cx, cy) = pos(i);
        let mut class = String::from("node");
        if on_best(&t.id) {
            class.push_str(" best");
        }
        if t.id == selected {
            class.push_str(" selected");
        }
        let mark = match t.outcome.as_deref() {
            Some("success") => "✓",
            Some("failed") => "✗",
            _ => "",
        };
        let first_line = t.text.lines().next().unwrap_or("");
        let _ = write!(
            out,
            "<a href=\"/thoughts?session={}&amp;node={}\" class=\"node-link\">\
             <title>{} — score {:.2}{}</title>\
             <circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"16\" class=\"{class}\" fill=\"{}\"></circle>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"mark\">{}</text>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"label\">{:.2}</text>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"thought\">{}</text></a>",
            enc(session),
            enc(&t.id),
            esc(first_line),
            t.score,
            t.outcome
                .as_deref()
                .map(|o| format!(", {}", esc(o)))
                .unwrap_or_default(),
            score_colour(t.score),
            cy + 5.0,
            mark,
            cy + 30.0,
            t.score,
            cy + 44.0,
            esc(&first_words(first_line, 18))
        );
    }
    out.push_str("</svg>");
    out
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
