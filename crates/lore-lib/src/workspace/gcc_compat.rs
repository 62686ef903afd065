//! What lore's `.GCC/` export adds so that other implementations read it (contexa 1.1.2's
//! parsers): `commit.md` entries in the GCC form (`## Commit `id``, labelled fields, `---`)
//! and the `metadata.yaml` fields contexa requires (name, purpose, created_from, created_at,
//! status). Each addition follows a marker line, and lore's import cuts the file there, so lore
//! still reads its own export back exactly. The text escaping every GCC writer needs is here too.

use serde_norway::{Mapping, Value};

use super::BranchMeta;

/// The line after which `commit.md` repeats the branch's entries for GCC readers.
pub const COMMIT_MARKER: &str = "<!-- lore: the entries below repeat this branch's commits in the GCC form; lore's import leaves them out -->";

/// The line after which `metadata.yaml` holds the fields GCC readers need.
pub const METADATA_MARKER: &str =
    "# lore: the fields below are for GCC readers; lore's import leaves them out";

/// One line of free text as written into a GCC file. contexa splits its files at every `---` +
/// newline not preceded by a backslash, so a line ending in `---` gets one before it (a line
/// that is just `---` reads back as `---` there); a line that starts one of `starts` (a label,
/// a heading a reader looks for) is moved one space in (readers trim it away). `leads`: the
/// line follows a label on its own line, so its start means nothing.
fn escaped_line(line: &str, leads: bool, starts: &[&str]) -> String {
    let mut out = String::with_capacity(line.len() + 2);
    if !leads && starts.iter().any(|s| line.starts_with(s)) {
        out.push(' ');
    }
    match line.strip_suffix("---") {
        Some(head) => {
            out.push_str(head);
            out.push_str("\\---");
        }
        None => out.push_str(line),
    }
    out
}

/// Free text as written into a GCC file, every line escaped (see [`escaped_line`]); `leads`
/// when the first line follows a label.
pub fn escaped(text: &str, leads: bool, starts: &[&str]) -> String {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| escaped_line(line, leads && i == 0, starts))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line starts contexa's `commit.md` parser looks for.
const COMMIT_STARTS: [&str; 6] = [
    "## Commit",
    "**Timestamp:**",
    "**Branch Purpose:**",
    "**Previous Progress Summary:**",
    "**This Commit's Contribution:**",
    COMMIT_MARKER,
];

/// The kinds of entry lore's `commit.md` headings name.
const KINDS: [&str; 7] = [
    "init", "branch", "commit", "merge", "update", "metadata", "import",
];

/// An entry of lore's `commit.md`: its heading's kind, number and time, then its three
/// sections. `None` for a line that is not such a heading.
fn own_heading(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("## ")?;
    let mut parts = rest.split(" · ");
    let (kind, seq) = parts.next()?.split_once(' ')?;
    let time = parts.next()?;
    (KINDS.contains(&kind)
        && seq.bytes().all(|b| b.is_ascii_digit())
        && time.parse::<jiff::Timestamp>().is_ok())
    .then(|| (format!("{kind}-{seq}"), time.to_string()))
}

/// One entry's three sections (purpose, previous summary, contribution), as lore wrote them.
fn own_sections(body: &str) -> [String; 3] {
    const HEADS: [&str; 3] = [
        "### Branch purpose\n\n",
        "\n\n### Previous progress summary\n\n",
        "\n\n### This commit's contribution\n\n",
    ];
    let mut out: [String; 3] = Default::default();
    let Some(start) = body.find(HEADS[0]) else {
        return out;
    };
    let mut rest = &body[start + HEADS[0].len()..];
    for (i, next) in HEADS.iter().skip(1).enumerate() {
        let Some(at) = rest.find(next) else {
            out[i] = rest.trim().to_string();
            return out;
        };
        out[i] = rest[..at].trim().to_string();
        rest = &rest[at + next.len()..];
    }
    out[2] = rest.trim().to_string();
    out
}

/// The entries of lore's `commit.md` (id, time, purpose, previous summary, contribution).
fn own_entries(text: &str) -> Vec<(String, String, [String; 3])> {
    let mut out = Vec::new();
    let mut current: Option<((String, String), String)> = None;
    for line in text.split_inclusive('\n') {
        if let Some(heading) = own_heading(line.trim_end_matches(['\n', '\r'])) {
            if let Some(((id, time), body)) = current.take() {
                out.push((id, time, own_sections(&body)));
            }
            current = Some((heading, String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
        }
    }
    if let Some(((id, time), body)) = current {
        out.push((id, time, own_sections(&body)));
    }
    out
}

/// `commit.md` as exported: lore's text, then (unless it already holds GCC entries, as a
/// branch imported from contexa does) the marker and each of its entries in the GCC form
/// (`## Commit `commit-2``, the entry's time and sections).
pub fn export_commit_md(text: &str) -> String {
    let entries = own_entries(text);
    if entries.is_empty() || super::gcc_foreign::commit_entries(text).is_some() {
        return text.to_string();
    }
    let mut out = text.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out.push_str(COMMIT_MARKER);
    out.push_str("\n\n");
    let field = |s: &str| escaped(s, true, &COMMIT_STARTS);
    for (id, time, [purpose, previous, contribution]) in &entries {
        out.push_str(&format!(
            "## Commit `{id}`\n**Timestamp:** {time}\n\n**Branch Purpose:** {}\n\n\
             **Previous Progress Summary:** {}\n\n**This Commit's Contribution:** {}\n\n---\n",
            field(purpose),
            field(previous),
            field(contribution),
        ));
    }
    out
}

/// The text before `marker`'s line (the whole text when it has none).
fn before_marker<'t>(text: &'t str, marker: &str) -> Option<&'t str> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == marker {
            return Some(&text[..at]);
        }
        at += line.len();
    }
    None
}

/// `commit.md` of lore's own export as lore wrote it: the GCC entries the export added cut off.
pub fn import_commit_md(text: &str) -> String {
    match before_marker(text, COMMIT_MARKER) {
        // The export put one blank line before the marker.
        Some(head) => head.strip_suffix('\n').unwrap_or(head).to_string(),
        None => text.to_string(),
    }
}

/// `metadata.yaml` as exported: lore's text, then the fields contexa requires that it lacks
/// (after the marker). An empty mapping (`{}`) is replaced by them; text whose mapping would
/// not take them (not a block mapping) is left as it is.
pub fn export_metadata(text: &str, parsed: &Value, meta: &BranchMeta) -> String {
    let Some(map) = parsed.as_mapping() else {
        return text.to_string();
    };
    let wanted = [
        ("name", meta.name.clone()),
        ("purpose", meta.purpose.clone()),
        ("created_from", meta.parent.clone().unwrap_or_default()),
        ("created_at", meta.created.to_string()),
        ("status", "active".to_string()),
    ];
    let mut added = Mapping::new();
    for (key, value) in wanted {
        if !map.contains_key(key) {
            added.insert(Value::String(key.into()), Value::String(value));
        }
    }
    if added.is_empty() {
        return text.to_string();
    }
    let Ok(fields) = serde_norway::to_string(&added) else {
        return text.to_string();
    };
    let head = if map.is_empty() {
        String::new()
    } else if text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    };
    let out = format!("{head}{METADATA_MARKER}\n{fields}");
    // Only when the result reads as the original mapping plus the fields.
    let mut expected = map.clone();
    expected.extend(added);
    match serde_norway::from_str::<Value>(&out) {
        Ok(Value::Mapping(m)) if m == expected => out,
        _ => text.to_string(),
    }
}

/// `metadata.yaml` of lore's own export as lore wrote it: the fields the export added cut off
/// (an empty rest is the empty mapping lore writes, `{}`).
pub fn import_metadata(text: &str) -> String {
    match before_marker(text, METADATA_MARKER) {
        Some(head) if head.trim().is_empty() => "{}\n".to_string(),
        Some(head) => head.to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::summary::commit_md_entry;
    use crate::workspace::{Entry, EntryKind};

    #[test]
    fn added_entries_and_fields_are_cut_off_again_on_import() {
        let entry = |seq, previous: &str, contribution: &str| Entry {
            kind: EntryKind::Commit,
            seq,
            time: "2026-01-02T03:04:05Z".parse().unwrap(),
            code_head: Some("0123456789abcdef".into()),
            purpose: "Ship it".into(),
            previous_summary: previous.into(),
            contribution: contribution.into(),
            summary: String::new(),
            steps: 0,
            segment: None,
            merged: None,
        };
        let mut text = commit_md_entry("main", None, &entry(1, "", "one\n---\n## Commit `x`"));
        text.push_str(&commit_md_entry(
            "main",
            Some(&text),
            &entry(2, "one", "two"),
        ));
        let out = export_commit_md(&text);
        assert!(
            out.contains("## Commit `commit-1`\n**Timestamp:** 2026-01-02T03:04:05Z\n"),
            "{out}"
        );
        assert!(out.contains("**This Commit's Contribution:** one\n\\---\n ## Commit `x`\n"));
        assert_eq!(import_commit_md(&out), text);
        let read = super::super::gcc_foreign::commit_entries(&out).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].contribution, "one\n---\n## Commit `x`");
        assert_eq!(read[0].previous_summary, "(none yet)");
        assert_eq!(read[1].previous_summary, "one");
        // A commit.md already in the GCC form is left as it is.
        assert_eq!(export_commit_md(&out), out);

        let meta = BranchMeta {
            name: "main".into(),
            purpose: "Ship it".into(),
            parent: None,
            created: "2026-01-02T03:04:05Z".parse().unwrap(),
            summary: String::new(),
            commits: 0,
            segments: 0,
            merged: Vec::new(),
            last: None,
        };
        let parse = |t: &str| serde_norway::from_str::<Value>(t).unwrap();
        let empty = export_metadata("{}\n", &parse("{}\n"), &meta);
        assert!(empty.starts_with(METADATA_MARKER), "{empty}");
        assert_eq!(parse(&empty)["created_from"], Value::String(String::new()));
        assert_eq!(import_metadata(&empty), "{}\n");
        let block = "env:\n  rust: 1.90\nname: keep\n";
        let out = export_metadata(block, &parse(block), &meta);
        assert_eq!(parse(&out)["name"], Value::String("keep".into()));
        assert_eq!(parse(&out)["purpose"], Value::String("Ship it".into()));
        assert_eq!(import_metadata(&out), block);
        let flow = "{env: x}\n";
        assert_eq!(export_metadata(flow, &parse(flow), &meta), flow);
    }
}
