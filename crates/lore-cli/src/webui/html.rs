//! The web UI's HTML: escaping (every stored text is hostile), URL encoding, the page layout
//! with its navigation, and the small pieces pages share (times, forms, empty states, diffs).

use std::fmt::Write as _;

use jiff::Timestamp;
use lore::thoughts::read::DiffLine;

/// The sections of the UI, in the order the navigation lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Memories,
    Review,
    Context,
    Thoughts,
    Sync,
    Overview,
}

const SECTIONS: [(Section, &str, &str); 6] = [
    (Section::Memories, "/memories", "Memories"),
    (Section::Review, "/review", "Review queue"),
    (Section::Context, "/context", "Context branches"),
    (Section::Thoughts, "/thoughts", "Reasoning trees"),
    (Section::Sync, "/sync", "Sync"),
    (Section::Overview, "/overview", "Overview"),
];

/// A rendered page before the layout goes around it.
pub struct Page {
    /// The `<title>` and the heading.
    pub title: String,
    /// Which navigation entry is current.
    pub section: Section,
    /// The content (already escaped HTML).
    pub body: String,
    /// Warnings from the operations, shown above the content.
    pub warnings: Vec<String>,
}

impl Page {
    /// A page with this title (plain text) and content (HTML).
    pub fn new(section: Section, title: impl Into<String>, body: String) -> Page {
        Page {
            title: title.into(),
            section,
            body,
            warnings: Vec::new(),
        }
    }
}

/// Escapes text for HTML content and quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes text for a path segment or a query value.
pub fn enc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A query string from pairs whose value is not empty (`?a=1&b=2`, or nothing).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let kept: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    }
}

/// A time as a `<time>` element: the date and minute, the full value on hover.
pub fn time(t: &Timestamp) -> String {
    let full = t.to_string();
    let short = t.strftime("%Y-%m-%d %H:%M").to_string();
    format!(
        "<time datetime=\"{}\" title=\"{}\">{}</time>",
        esc(&full),
        esc(&full),
        esc(&short)
    )
}

/// The first characters of an id or hash, for display.
pub fn short(id: &str) -> &str {
    match id.char_indices().nth(10) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// A form that POSTs to `action` with the CSRF token and the given fields and buttons (HTML).
pub fn post_form(action: &str, csrf: &str, class: &str, inner: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\" class=\"{}\"><input type=\"hidden\" name=\"csrf\" \
         value=\"{}\">{inner}</form>",
        esc(action),
        esc(class),
        esc(csrf)
    )
}

/// A notice for a page with nothing to show: what it is, and what to do.
pub fn empty_state(what: &str, todo: &str) -> String {
    format!(
        "<div class=\"empty\" role=\"status\"><p><strong>{}</strong></p><p>{}</p></div>",
        esc(what),
        todo
    )
}

/// A line diff as a table: one row a line, `+`/`-`/` `/`@` marked.
pub fn diff_table(lines: &[DiffLine]) -> String {
    if lines.is_empty() {
        return "<p class=\"muted\">No difference.</p>".into();
    }
    let mut out = String::from("<table class=\"diff\"><tbody>");
    for line in lines {
        let class = match line.origin {
            '+' => "add",
            '-' => "del",
            '@' => "hunk",
            _ => "ctx",
        };
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td class=\"mark\">{}</td><td><code>{}</code></td></tr>",
            esc(&line.origin.to_string()),
            esc(&line.text)
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// A `<select>` whose options are `(value, label)`, with `selected` chosen.
pub fn select(name: &str, label: &str, options: &[(String, String)], selected: &str) -> String {
    let mut out = format!("<label>{}<select name=\"{}\">", esc(label), esc(name));
    for (value, text) in options {
        let sel = if value == selected { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{}\"{sel}>{}</option>",
            esc(value),
            esc(text)
        );
    }
    out.push_str("</select></label>");
    out
}

/// The page an error becomes.
pub fn error_page(e: &lore::Error) -> Page {
    Page::new(
        Section::Overview,
        "Something went wrong",
        format!(
            "<div class=\"error\" role=\"alert\"><p>{}</p><p class=\"muted\">code: {}</p>\
             <p><a href=\"/\">Back to the memories</a></p></div>",
            esc(&e.to_string()),
            esc(e.code())
        ),
    )
}

/// The whole document around a page: navigation, warnings, the live stamp, CSS and JS.
pub fn layout(page: &Page, stamp: &str) -> String {
    let mut nav = String::new();
    for (section, href, label) in SECTIONS {
        let current = if section == page.section {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(nav, "<li><a href=\"{href}\"{current}>{label}</a></li>");
    }
    let mut warnings = String::new();
    for w in &page.warnings {
        let _ = write!(
            warnings,
            "<p class=\"warning\" role=\"status\">{}</p>",
            esc(w)
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · lore</title><link rel=\"icon\" href=\"data:,\">\
         <link rel=\"stylesheet\" href=\"/assets/ui.css\"></head>\
         <body data-stamp=\"{stamp}\"><header><a class=\"brand\" href=\"/\">lore</a>\
         <nav aria-label=\"Sections\"><ul>{nav}</ul></nav>\
         <span id=\"live\" class=\"muted\" aria-live=\"polite\">live</span></header>\
         <main id=\"main\"><h1>{title}</h1>{warnings}{body}</main>\
         <script src=\"/assets/ui.js\" defer></script></body></html>\n",
        title = esc(&page.title),
        stamp = esc(stamp),
        body = page.body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_text_cannot_open_markup() {
        let hostile = "<script>alert(1)</script>\"' onmouseover=x &amp;";
        let out = esc(hostile);
        for bad in ["<", ">", "\"", "'"] {
            assert!(!out.contains(bad), "{out}");
        }
        assert!(out.contains("&amp;amp;"));
    }

    #[test]
    fn values_in_urls_are_encoded() {
        assert_eq!(enc("a b/&?=é"), "a%20b%2F%26%3F%3D%C3%A9");
        assert_eq!(query(&[("q", "x y"), ("tag", "")]), "?q=x%20y");
        assert_eq!(query(&[("q", "")]), "");
    }
}
