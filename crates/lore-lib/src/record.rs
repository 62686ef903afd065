//! The on-disk form of a memory: YAML front matter between `---` lines, then the markdown body.
//!
//! `parse(render(m)) == m` for every valid memory, and `render(parse(t)) == t` for every text
//! lore wrote itself; the body is kept byte for byte.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Citation, Key, Memory, MemoryId, Namespace, Status};

/// The front matter fields, in the order they are written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    id: MemoryId,
    namespace: Namespace,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<Key>,
    summary: String,
    status: Status,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    created: Timestamp,
    updated: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    anchor: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    citations: Vec<Citation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    relates_to: Vec<MemoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    supersedes: Option<MemoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    superseded_by: Option<MemoryId>,
}

/// The largest front matter lore writes or reads. Front matter is a few hundred bytes; this
/// bound keeps a hand-edited or imported file with a huge tag or citation list from costing
/// more than its size is worth (YAML parsing is not linear in the length of a list).
pub const MAX_FRONT_MATTER_BYTES: usize = 64 * 1024;

pub(crate) fn front_matter_too_large(len: usize) -> String {
    format!(
        "its front matter is {len} bytes; the limit is {MAX_FRONT_MATTER_BYTES} (fewer tags, citations or relations)"
    )
}

/// Writes a memory as front matter + body.
pub fn render(memory: &Memory) -> Result<String> {
    let fm = FrontMatter {
        id: memory.id.clone(),
        namespace: memory.namespace.clone(),
        key: memory.key.clone(),
        summary: memory.summary.clone(),
        status: memory.status,
        tags: memory.tags.clone(),
        created: memory.created,
        updated: memory.updated,
        author: memory.author.clone(),
        agent: memory.agent.clone(),
        session: memory.session.clone(),
        confidence: memory.confidence,
        anchor: memory.anchor.clone(),
        citations: memory.citations.clone(),
        relates_to: memory.relates_to.clone(),
        supersedes: memory.supersedes.clone(),
        superseded_by: memory.superseded_by.clone(),
    };
    let yaml = serde_norway::to_string(&fm).map_err(|e| Error::Parse {
        context: format!("writing memory {}", memory.id),
        message: e.to_string(),
    })?;
    if yaml.len() > MAX_FRONT_MATTER_BYTES {
        return Err(Error::Invalid {
            what: "memory",
            value: memory.summary.clone(),
            reason: front_matter_too_large(yaml.len()),
        });
    }
    let mut out = String::with_capacity(yaml.len() + memory.body.len() + 8);
    out.push_str("---\n");
    out.push_str(&yaml);
    if !yaml.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("---\n");
    out.push_str(&memory.body);
    Ok(out)
}

/// Splits a text into its front matter and body, or says why it has none.
pub fn split_front_matter(text: &str) -> std::result::Result<(&str, &str), String> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| "it does not start with a '---' front matter line".to_string())?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((yaml, body));
        }
        offset += line.len();
    }
    Err("its front matter has no closing '---' line".to_string())
}

/// Reads a memory from its file text. `path` names the file in error messages.
pub fn parse(text: &str, path: &str) -> Result<Memory> {
    let record_error = |message: String| Error::Record {
        path: path.to_string(),
        message,
    };
    let (yaml, body) = split_front_matter(text).map_err(record_error)?;
    if yaml.len() > MAX_FRONT_MATTER_BYTES {
        return Err(record_error(front_matter_too_large(yaml.len())));
    }
    let fm: FrontMatter = serde_norway::from_str(yaml).map_err(|e| record_error(e.to_string()))?;
    let memory = Memory {
        id: fm.id,
        namespace: fm.namespace,
        key: fm.key,
        summary: fm.summary,
        body: body.to_string(),
        tags: fm.tags,
        status: fm.status,
        created: fm.created,
        updated: fm.updated,
        author: fm.author,
        agent: fm.agent,
        session: fm.session,
        confidence: fm.confidence,
        anchor: fm.anchor,
        citations: fm.citations,
        relates_to: fm.relates_to,
        supersedes: fm.supersedes,
        superseded_by: fm.superseded_by,
    };
    memory.validate().map_err(|e| record_error(e.to_string()))?;
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn renders_readable_front_matter() {
        let text = render(&Memory::sample()).unwrap();
        assert!(
            text.starts_with("---\nid: abc123def456\nnamespace: decisions\nkey: index-engine\n")
        );
        assert!(text.ends_with("---\n## Why\n\n---\nNot a front matter line.\n"));
    }

    #[test]
    fn round_trips_both_ways() {
        let m = Memory::sample();
        let text = render(&m).unwrap();
        let back = parse(&text, "x").unwrap();
        assert_eq!(back, m);
        assert_eq!(render(&back).unwrap(), text);
    }

    #[test]
    fn invalid_yaml_is_reported_with_its_path() {
        let err = parse("---\nid: [unclosed\n---\nbody", "decisions/a/b/x.md").unwrap_err();
        assert!(err.to_string().contains("decisions/a/b/x.md"), "{err}");
        let err = parse("no front matter", "p").unwrap_err();
        assert!(err.to_string().contains("front matter"), "{err}");
        let err = parse("---\nid: abc123def456\n", "p").unwrap_err();
        assert!(err.to_string().contains("closing"), "{err}");
    }

    #[test]
    fn crlf_front_matter_is_accepted() {
        let text = render(&Memory::sample()).unwrap().replace('\n', "\r\n");
        let m = parse(&text, "x").unwrap();
        assert_eq!(m.summary, Memory::sample().summary);
    }

    proptest! {
        #[test]
        fn any_valid_memory_round_trips(
            summary in "[A-Za-z0-9][A-Za-z0-9 :#'\"{}\\[\\],&*!|>%@`-]{0,98}[A-Za-z0-9.]",
            body in "(?s).{0,300}",
            tags in proptest::collection::vec("[a-z0-9][a-z0-9:._-]{0,20}", 0..5),
            millis in 0i64..4_000_000_000_000,
            confidence in proptest::option::of(0.0f64..=1.0),
            agent in proptest::option::of("[ -~]{1,40}"),
        ) {
            let mut m = Memory::sample();
            m.summary = summary;
            m.body = body;
            m.tags = crate::model::normalize_tags(&tags).unwrap();
            m.created = Timestamp::from_millisecond(millis).unwrap();
            m.updated = m.created;
            m.confidence = confidence;
            m.agent = agent;
            let text = render(&m).unwrap();
            let back = parse(&text, "x").unwrap();
            prop_assert_eq!(&back, &m);
            prop_assert_eq!(render(&back).unwrap(), text);
        }
    }
}
