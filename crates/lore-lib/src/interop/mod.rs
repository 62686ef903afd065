//! Moving memories in and out: JSONL, a directory of markdown files, and the git-notes-memory
//! layout (`refs/notes/mem/<namespace>`). Imports are lenient (foreign records are mapped onto
//! lore's fields, with warnings); every import is one batch commit and re-importing is idempotent.

pub mod jsonl;
pub mod markdown_dir;
pub mod notes;

use jiff::Timestamp;
use serde_norway::Value;

use crate::error::{Error, Result};
use crate::model::{
    Citation, Key, MAX_SUMMARY_CHARS, Memory, MemoryId, Namespace, Status, normalize_tag, to_millis,
};

/// A memory read from foreign data, before it becomes a [`Memory`].
#[derive(Clone, Debug, Default)]
pub struct ImportRecord {
    /// Where it came from (file and line, note), for messages.
    pub origin: String,
    /// Front matter or object fields.
    pub fields: serde_norway::Mapping,
    /// The markdown body.
    pub body: String,
    /// Namespace to use when the record names none.
    pub fallback_namespace: Option<String>,
    /// Id to use when the record has none (deterministic ids keep re-imports idempotent).
    pub fallback_id: Option<MemoryId>,
    /// Anchor to use when the record has none.
    pub fallback_anchor: Option<String>,
}

/// What importing produced: memories to write and warnings about what was adapted or dropped.
#[derive(Clone, Debug, Default)]
pub struct Converted {
    /// Memories ready for [`crate::Lore::write_batch`].
    pub memories: Vec<Memory>,
    /// Adaptations and skipped records, one line each (records skipped for one reason share
    /// a line).
    pub warnings: Vec<String>,
    /// The ids made from the record's content or origin (it named none): a memory with such an
    /// id that exists already is this record imported before.
    pub derived_ids: std::collections::HashSet<MemoryId>,
    /// For each memory, the position of the record it came from among the records converted
    /// (records that could not be converted have none).
    pub kept: Vec<usize>,
}

fn field<'a>(fields: &'a serde_norway::Mapping, name: &str) -> Option<&'a Value> {
    fields.get(Value::String(name.to_string()))
}

fn text(fields: &serde_norway::Mapping, name: &str) -> Option<String> {
    match field(fields, name)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn list(fields: &serde_norway::Mapping, name: &str) -> Vec<String> {
    match field(fields, name) {
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// Parses the timestamps found in the wild: RFC 3339, a civil date-time taken as UTC, a date.
pub fn parse_time(value: &str) -> Option<Timestamp> {
    if let Ok(t) = value.parse::<Timestamp>() {
        return Some(t);
    }
    if let Ok(dt) = value.replace(' ', "T").parse::<jiff::civil::DateTime>() {
        return dt
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp());
    }
    if let Ok(d) = value.parse::<jiff::civil::Date>() {
        return d
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp());
    }
    None
}

/// Turns one foreign record into a memory, adapting what it can and saying so.
pub fn convert(rec: &ImportRecord, now: Timestamp, warnings: &mut Vec<String>) -> Result<Memory> {
    let f = &rec.fields;
    let origin = &rec.origin;
    let namespace = namespace_of(rec)?;
    let (summary, body) = summary_and_body(rec, warnings)?;
    let key = match text(f, "key") {
        Some(k) => Some(Key::parse(&k).map_err(|e| parse_error(origin, e))?),
        None => None,
    };
    let created = text(f, "created")
        .or_else(|| text(f, "timestamp"))
        .and_then(|t| parse_time(&t))
        .map(to_millis)
        .unwrap_or(now);
    let updated = text(f, "updated")
        .and_then(|t| parse_time(&t))
        .map(to_millis)
        .unwrap_or(created);
    let id_field = |name: &str| text(f, name).and_then(|s| MemoryId::parse(&s).ok());
    let memory = Memory {
        id: id_of(rec, warnings)?,
        namespace,
        key,
        summary,
        body,
        tags: tags_of(rec, warnings),
        status: status_of(rec, warnings),
        created,
        updated: updated.max(created),
        author: text(f, "author"),
        agent: text(f, "agent"),
        session: text(f, "session"),
        confidence: match field(f, "confidence") {
            Some(Value::Number(n)) => n.as_f64().filter(|c| (0.0..=1.0).contains(c)),
            _ => None,
        },
        // `anchor: null` says the memory has none (a note is on some commit all the same).
        anchor: match field(f, "anchor") {
            Some(Value::Null) => None,
            _ => text(f, "anchor")
                .or_else(|| text(f, "commit"))
                .or_else(|| rec.fallback_anchor.clone()),
        }
        .filter(|a| a.len() >= 4 && a.bytes().all(|b| b.is_ascii_hexdigit())),
        citations: citations_of(rec, warnings),
        relates_to: relations_of(rec, warnings),
        supersedes: id_field("supersedes"),
        superseded_by: id_field("superseded_by"),
    };
    memory.validate().map_err(|e| parse_error(origin, e))?;
    Ok(memory)
}

/// A record's error, named by where the record came from.
fn parse_error(origin: &str, message: impl ToString) -> Error {
    Error::Parse {
        context: origin.to_string(),
        message: message.to_string(),
    }
}

/// The record's namespace: `namespace`, else `type`, else the source's own.
fn namespace_of(rec: &ImportRecord) -> Result<Namespace> {
    let f = &rec.fields;
    let namespace = text(f, "namespace")
        .or_else(|| text(f, "type"))
        .or_else(|| rec.fallback_namespace.clone())
        .ok_or_else(|| parse_error(&rec.origin, "no namespace (or type) field"))?;
    Namespace::parse(&namespace).map_err(|e| parse_error(&rec.origin, e))
}

/// The summary (`summary`, `title`, or the body's first line) with control characters made
/// spaces, and the body; a summary past the limit is cut and its whole text starts the body.
fn summary_and_body(rec: &ImportRecord, warnings: &mut Vec<String>) -> Result<(String, String)> {
    let f = &rec.fields;
    let origin = &rec.origin;
    let mut body = rec.body.clone();
    let summary = text(f, "summary")
        .or_else(|| text(f, "title"))
        .or_else(|| {
            body.lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .map(str::to_string)
        })
        .ok_or_else(|| parse_error(origin, "no summary, title or body text"))?;
    let mut summary = summary
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string();
    if summary.chars().count() > MAX_SUMMARY_CHARS {
        warnings.push(format!(
            "{origin}: summary cut to {MAX_SUMMARY_CHARS} characters (the full text starts the body)"
        ));
        let full = summary.clone();
        summary = summary
            .chars()
            .take(MAX_SUMMARY_CHARS - 1)
            .collect::<String>();
        summary = format!("{}…", summary.trim_end());
        body = if body.is_empty() {
            format!("{full}\n")
        } else {
            format!("{full}\n\n{body}")
        };
    }
    Ok((summary, body))
}

/// The record's own id when it is a lore id, else the source's, else a new one.
fn id_of(rec: &ImportRecord, warnings: &mut Vec<String>) -> Result<MemoryId> {
    match text(&rec.fields, "id").map(|s| MemoryId::parse(&s)) {
        Some(Ok(id)) => return Ok(id),
        Some(Err(_)) => warnings.push(format!(
            "{}: its id is not a lore id; a new one was made",
            rec.origin
        )),
        None => {}
    }
    match &rec.fallback_id {
        Some(id) => Ok(id.clone()),
        None => MemoryId::generate(),
    }
}

/// Tags, plus `spec:` and `phase:` tags from those fields; invalid ones are dropped, said.
fn tags_of(rec: &ImportRecord, warnings: &mut Vec<String>) -> Vec<String> {
    let f = &rec.fields;
    let mut tags = Vec::new();
    for raw in list(f, "tags")
        .into_iter()
        .chain(text(f, "spec").map(|s| format!("spec:{s}")))
        .chain(text(f, "phase").map(|s| format!("phase:{s}")))
    {
        match normalize_tag(&raw) {
            Ok(t) if !tags.contains(&t) => tags.push(t),
            Ok(_) => {}
            Err(_) => warnings.push(format!(
                "{}: tag {raw:?} dropped (not a valid tag)",
                rec.origin
            )),
        }
    }
    tags
}

/// The status; another tool's words are mapped to the nearest lore status, said.
fn status_of(rec: &ImportRecord, warnings: &mut Vec<String>) -> Status {
    let Some(s) = text(&rec.fields, "status") else {
        return Status::Active;
    };
    if let Ok(status) = s.to_lowercase().parse::<Status>() {
        return status;
    }
    let mapped = match s.to_lowercase().as_str() {
        "open" | "in-progress" | "in_progress" | "proposed" | "accepted" => Status::Active,
        "closed" | "done" | "fixed" => Status::Resolved,
        "deprecated" | "replaced" => Status::Superseded,
        _ => Status::Active,
    };
    warnings.push(format!("{}: status {s:?} read as {mapped}", rec.origin));
    mapped
}

/// `relates_to` ids; what is not a lore id is dropped, said.
fn relations_of(rec: &ImportRecord, warnings: &mut Vec<String>) -> Vec<MemoryId> {
    let mut relates_to = Vec::new();
    for r in list(&rec.fields, "relates_to") {
        match MemoryId::parse(&r) {
            Ok(id) => relates_to.push(id),
            Err(_) => warnings.push(format!(
                "{}: relation {r:?} dropped (not a lore id)",
                rec.origin
            )),
        }
    }
    relates_to
}

/// Citations as lore writes them; a list of another shape is dropped, said.
fn citations_of(rec: &ImportRecord, warnings: &mut Vec<String>) -> Vec<Citation> {
    match field(&rec.fields, "citations") {
        Some(v) => serde_norway::from_value(v.clone()).unwrap_or_else(|e| {
            warnings.push(format!("{}: citations dropped ({e})", rec.origin));
            Vec::new()
        }),
        None => Vec::new(),
    }
}

/// Converts many records; ones that cannot be converted become warnings.
pub fn convert_all(records: &[ImportRecord], now: Timestamp) -> Converted {
    let mut out = Converted::default();
    // Why records were skipped, each reason once with where it happened.
    let mut skipped: Vec<(String, Vec<String>)> = Vec::new();
    for (at, rec) in records.iter().enumerate() {
        match convert(rec, now, &mut out.warnings) {
            Ok(m) => {
                if rec.fallback_id.as_ref() == Some(&m.id) {
                    out.derived_ids.insert(m.id.clone());
                }
                out.memories.push(m);
                out.kept.push(at);
            }
            Err(Error::Parse { context, message }) if context == rec.origin => {
                match skipped.iter_mut().find(|(why, _)| *why == message) {
                    Some((_, at)) => at.push(context),
                    None => skipped.push((message, vec![context])),
                }
            }
            Err(e) => out.warnings.push(format!("skipped: {e}")),
        }
    }
    for (why, at) in skipped {
        out.warnings.push(match at.as_slice() {
            [one] => format!("skipped: {one}: {why}"),
            [first, ..] => format!("skipped {} records ({first} and on): {why}", at.len()),
            [] => continue,
        });
    }
    out
}

/// A deterministic id from a stable origin string (so re-importing the same data is a no-op).
pub fn stable_id(origin: &str) -> MemoryId {
    // FNV-1a over the origin, twice with different seeds, spread over 60 bits.
    let mut h1: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h2: u64 = 0x8422_2325_cbf2_9ce4;
    for b in origin.bytes() {
        h1 = (h1 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        h2 = (h2 ^ u64::from(b))
            .wrapping_mul(0x0100_0000_01b3)
            .rotate_left(5);
    }
    let bits = h1 ^ h2.rotate_left(29);
    let id: String = (0..crate::model::ID_LEN)
        .map(|i| crate::model::ID_ALPHABET[((bits >> (i * 5)) & 31) as usize] as char)
        .collect();
    MemoryId::from_valid(id)
}
