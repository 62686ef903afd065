//! JSONL: one memory per line, every field of the record (the body included).

use std::io::{BufRead, Write};

use jiff::Timestamp;

use super::{Converted, ImportRecord, convert_all};
use crate::error::{Error, Result};
use crate::model::Memory;

/// Writes memories as JSON lines.
pub fn export(memories: &[Memory], out: &mut dyn Write) -> Result<()> {
    for m in memories {
        let line = serde_json::to_string(m).map_err(|e| Error::Parse {
            context: format!("writing memory {}", m.id),
            message: e.to_string(),
        })?;
        writeln!(out, "{line}").map_err(|e| Error::io("writing JSONL", e))?;
    }
    Ok(())
}

/// Reads JSON lines (lore's own, or any objects with at least a summary and a namespace).
pub fn import(input: &mut dyn BufRead, source: &str, now: Timestamp) -> Result<Converted> {
    let mut records = Vec::new();
    let mut bad = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(format!("reading {source}"), e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let origin = format!("{source}:{line_no}");
        let Ok(line) = std::str::from_utf8(&buf) else {
            bad.push(format!("skipped: {origin}: not UTF-8"));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                bad.push(format!("skipped: {origin}: not JSON ({e})"));
                continue;
            }
        };
        let Ok(serde_norway::Value::Mapping(mut fields)) = serde_norway::to_value(&value) else {
            bad.push(format!("skipped: {origin}: not a JSON object"));
            continue;
        };
        let body = match fields.remove(serde_norway::Value::String("body".into())) {
            Some(serde_norway::Value::String(b)) => b,
            _ => String::new(),
        };
        // A record without an id gets one from its content, so importing it again adds
        // nothing (see `Converted::derived_ids`).
        let content_id = super::stable_id(&format!(
            "jsonl\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{body}",
            super::text(&fields, "namespace").unwrap_or_default(),
            super::text(&fields, "key").unwrap_or_default(),
            super::text(&fields, "summary").unwrap_or_default(),
        ));
        records.push(ImportRecord {
            origin,
            fields,
            body,
            fallback_id: Some(content_id),
            ..ImportRecord::default()
        });
    }
    let mut converted = convert_all(&records, now);
    bad.append(&mut converted.warnings);
    converted.warnings = bad;
    Ok(converted)
}
