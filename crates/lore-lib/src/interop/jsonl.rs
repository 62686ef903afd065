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
    let mut reader = Reader::new(input, source);
    Ok(reader.next_batch(now, usize::MAX)?.unwrap_or_default())
}

/// Where one line of the input is: its first byte, its length and its number (from 1).
#[derive(Clone, Copy, Debug)]
pub struct LineSpan {
    /// The offset of its first byte.
    pub offset: u64,
    /// Its length in bytes, the newline included.
    pub len: u64,
    /// Its line number.
    pub line: usize,
}

/// JSON lines read a batch at a time, so a large file is never held whole.
pub struct Reader<'a> {
    input: &'a mut dyn BufRead,
    source: &'a str,
    line_no: usize,
    bytes: u64,
    buf: Vec<u8>,
    /// The lines of the last batch's records, in the order of its records.
    spans: Vec<LineSpan>,
}

impl<'a> Reader<'a> {
    /// A reader of `input`, named `source` in messages.
    pub fn new(input: &'a mut dyn BufRead, source: &'a str) -> Reader<'a> {
        Reader {
            input,
            source,
            line_no: 0,
            bytes: 0,
            buf: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// The line each memory of the last batch was read from (by [`Converted::kept`]).
    pub fn lines_of(&self, converted: &Converted) -> Vec<LineSpan> {
        converted.kept.iter().map(|&at| self.spans[at]).collect()
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The next records, at most `max` of them; `None` at the end of the input.
    pub fn next_batch(&mut self, now: Timestamp, max: usize) -> Result<Option<Converted>> {
        let mut records = Vec::new();
        let mut bad = Vec::new();
        let mut ended = true;
        self.spans.clear();
        while records.len() < max {
            self.buf.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(format!("reading {}", self.source), e))?;
            if n == 0 {
                break;
            }
            ended = false;
            self.line_no += 1;
            let span = LineSpan {
                offset: self.bytes,
                len: n as u64,
                line: self.line_no,
            };
            self.bytes += n as u64;
            let origin = format!("{}:{}", self.source, self.line_no);
            match record(&self.buf, origin) {
                Ok(Some(rec)) => {
                    records.push(rec);
                    self.spans.push(span);
                }
                Ok(None) => {}
                Err(why) => bad.push(why),
            }
        }
        if ended && records.is_empty() && bad.is_empty() {
            return Ok(None);
        }
        Ok(Some(finish(&records, bad, now)))
    }
}

/// Converts lines read again by their place (`(line number, bytes)`, as [`Reader`] read them
/// from `source`): the same records, named by the same line numbers, as when read in order.
pub fn convert_lines(lines: &[(usize, Vec<u8>)], source: &str, now: Timestamp) -> Converted {
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (line, bytes) in lines {
        match record(bytes, format!("{source}:{line}")) {
            Ok(Some(rec)) => records.push(rec),
            Ok(None) => {}
            Err(why) => bad.push(why),
        }
    }
    finish(&records, bad, now)
}

/// Converts the records read; the lines skipped (`bad`) are warned of before what conversion
/// says.
fn finish(records: &[ImportRecord], mut bad: Vec<String>, now: Timestamp) -> Converted {
    let mut converted = convert_all(records, now);
    bad.append(&mut converted.warnings);
    converted.warnings = bad;
    converted
}

/// One line as a record (`None` for a blank line), or why it was skipped.
fn record(bytes: &[u8], origin: String) -> std::result::Result<Option<ImportRecord>, String> {
    let Ok(line) = std::str::from_utf8(bytes) else {
        return Err(format!("skipped: {origin}: not UTF-8"));
    };
    if line.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("skipped: {origin}: not JSON ({e})"))?;
    let Ok(serde_norway::Value::Mapping(mut fields)) = serde_norway::to_value(&value) else {
        return Err(format!("skipped: {origin}: not a JSON object"));
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
    Ok(Some(ImportRecord {
        origin,
        fields,
        body,
        fallback_id: Some(content_id),
        ..ImportRecord::default()
    }))
}
