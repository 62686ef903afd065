//! The web UI's HTML: the page layout with its navigation, URL encoding, and the small pieces
//! pages share (times, forms, empty states, diffs). Markup is built with maud, which escapes
//! every value spliced into it (every stored text is hostile).

use jiff::Timestamp;
use lore::thoughts::read::DiffLine;
use maud::{DOCTYPE, Markup, html};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What a path segment or query value keeps as is: ASCII letters and digits and `-_.~` (the
/// unreserved characters of RFC 3986); every other byte is percent-encoded.
const URL_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

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
    /// The content.
    pub body: Markup,
    /// Warnings from the operations, shown above the content.
    pub warnings: Vec<String>,
}

impl Page {
    /// A page with this title (plain text) and content.
    pub fn new(section: Section, title: impl Into<String>, body: Markup) -> Page {
        Page {
            title: title.into(),
            section,
            body,
            warnings: Vec::new(),
        }
    }
}

/// Percent-encodes text for a path segment or a query value.
pub fn enc(text: &str) -> String {
    utf8_percent_encode(text, URL_VALUE).to_string()
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
pub fn time(t: &Timestamp) -> Markup {
    let full = t.to_string();
    html! {
        time datetime=(full) title=(full) { (t.strftime("%Y-%m-%d %H:%M")) }
    }
}

/// The first characters of an id or hash, for display.
pub fn short(id: &str) -> &str {
    match id.char_indices().nth(10) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// A form that POSTs to `action` with the CSRF token and the given fields and buttons.
pub fn post_form(action: &str, csrf: &str, class: &str, inner: Markup) -> Markup {
    html! {
        form method="post" action=(action) class=(class) {
            input type="hidden" name="csrf" value=(csrf);
            (inner)
        }
    }
}

/// A notice for a page with nothing to show: what it is, and what to do.
pub fn empty_state(what: &str, todo: Markup) -> Markup {
    html! {
        div class="empty" role="status" {
            p { strong { (what) } }
            p { (todo) }
        }
    }
}

/// A line diff as a table: one row a line, `+`/`-`/` `/`@` marked.
pub fn diff_table(lines: &[DiffLine]) -> Markup {
    if lines.is_empty() {
        return html! { p class="muted" { "No difference." } };
    }
    html! {
        table class="diff" {
            tbody {
                @for line in lines {
                    @let class = match line.origin {
                        '+' => "add",
                        '-' => "del",
                        '@' => "hunk",
                        _ => "ctx",
                    };
                    tr class=(class) {
                        td class="mark" { (line.origin) }
                        td { code { (line.text) } }
                    }
                }
            }
        }
    }
}

/// A `<select>` whose options are `(value, label)`, with `selected` chosen.
pub fn select(name: &str, label: &str, options: &[(String, String)], selected: &str) -> Markup {
    html! {
        label {
            (label)
            select name=(name) {
                @for (value, text) in options {
                    option value=(value) selected[value == selected] { (text) }
                }
            }
        }
    }
}

/// The page an error becomes.
pub fn error_page(e: &lore::Error) -> Page {
    Page::new(
        Section::Overview,
        "Something went wrong",
        html! {
            div class="error" role="alert" {
                p { (e.to_string()) }
                p class="muted" { "code: " (e.code()) }
                p { a href="/" { "Back to the memories" } }
            }
        },
    )
}

/// The whole document around a page: navigation, warnings, the live stamp, CSS and JS.
pub fn layout(page: &Page, stamp: &str) -> String {
    let doc = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (page.title) " · lore" }
                link rel="icon" href="data:,";
                link rel="stylesheet" href="/assets/ui.css";
            }
            body data-stamp=(stamp) {
                header {
                    a class="brand" href="/" { "lore" }
                    nav aria-label="Sections" {
                        ul {
                            @for (section, href, label) in SECTIONS {
                                li {
                                    a href=(href)
                                        aria-current=[(section == page.section).then_some("page")]
                                    { (label) }
                                }
                            }
                        }
                    }
                    span id="live" class="muted" aria-live="polite" { "live" }
                }
                main id="main" {
                    h1 { (page.title) }
                    @for w in &page.warnings {
                        p class="warning" role="status" { (w) }
                    }
                    (page.body)
                }
                script src="/assets/ui.js" defer {}
            }
        }
    };
    let mut out = doc.into_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_text_cannot_open_markup() {
        let hostile = "<script>x()</script>\" onfocus=\"x()\" &amp;";
        let options = [(hostile.to_string(), hostile.to_string())];
        let body = html! {
            (empty_state(hostile, html! { (hostile) }))
            (select(hostile, hostile, &options, hostile))
            (post_form(hostile, hostile, hostile, html! { (hostile) }))
            (diff_table(&[DiffLine { origin: '+', text: hostile.to_string() }]))
        };
        let mut page = Page::new(Section::Memories, hostile, body);
        page.warnings.push(hostile.to_string());
        let out = layout(&page, hostile);
        for bad in ["<script>x", "\" onfocus=\""] {
            assert!(!out.contains(bad), "{bad:?} in {out}");
        }
        let escaped = "&lt;script&gt;x()&lt;/script&gt;&quot; onfocus=&quot;x()&quot; &amp;amp;";
        // The title, heading, stamp, warning, empty state (two), select (name, label, option
        // value, option text), form (action, class, token, content) and diff line.
        assert_eq!(out.matches(escaped).count(), 15, "{out}");
    }

    #[test]
    fn values_in_urls_are_encoded() {
        assert_eq!(enc("a b/&?=é"), "a%20b%2F%26%3F%3D%C3%A9");
        assert_eq!(enc("AZaz09-_.~"), "AZaz09-_.~");
        assert_eq!(query(&[("q", "x y"), ("tag", "")]), "?q=x%20y");
        assert_eq!(query(&[("q", "")]), "");
    }
}
