//! The files of a context commit's tree: `branch.yaml`, the log segments and the text documents,
//! read from a snapshot and written as edits.

use serde::Serialize;

use super::log_md::Step;
use super::{BRANCH_FILE, BranchMeta, LOG_DIR};
use crate::error::{Error, Result};
use crate::store::{Edit, Snapshot};

pub(super) fn yaml_error(context: &str) -> impl FnOnce(serde_norway::Error) -> Error + '_ {
    move |e| Error::Parse {
        context: context.to_string(),
        message: e.to_string(),
    }
}

pub(super) fn to_yaml_text<T: Serialize>(value: &T, context: &str) -> Result<String> {
    serde_norway::to_string(value).map_err(yaml_error(context))
}

pub(super) fn to_yaml<T: Serialize>(value: &T, context: &str) -> Result<Vec<u8>> {
    Ok(to_yaml_text(value, context)?.into_bytes())
}

/// A text file of a context commit (empty when absent). lore writes these files as UTF-8, so
/// other bytes are damage: an error, not text read with replacement characters and written back.
pub(super) fn text_of(snap: &Snapshot<'_>, path: &str) -> Result<String> {
    match snap.read(path)? {
        Some(bytes) => String::from_utf8(bytes).map_err(|e| Error::Parse {
            context: path.to_string(),
            message: format!("not UTF-8 text: {}", e.utf8_error()),
        }),
        None => Ok(String::new()),
    }
}

/// Reads `branch.yaml` of a context commit.
pub fn read_meta(snap: &Snapshot<'_>) -> Result<Option<BranchMeta>> {
    match snap.read(BRANCH_FILE)? {
        Some(bytes) => Ok(Some(
            serde_norway::from_slice(&bytes).map_err(yaml_error(BRANCH_FILE))?,
        )),
        None => Ok(None),
    }
}

/// Reads a tree's log segments, in order.
pub fn read_segments(snap: &Snapshot<'_>) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (name, blob) in snap.files_in(LOG_DIR)? {
        steps.extend(parse_segment(&snap.blob(blob)?, &name)?);
    }
    Ok(steps)
}

pub(super) fn parse_segment(bytes: &[u8], name: &str) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        steps.push(serde_json::from_slice(line).map_err(|e| Error::Parse {
            context: format!("{LOG_DIR}/{name} line {}", n + 1),
            message: e.to_string(),
        })?);
    }
    Ok(steps)
}

pub(super) fn segment_bytes(steps: &[Step]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for step in steps {
        out.extend(serde_json::to_vec(step).map_err(|e| Error::Parse {
            context: "writing a log segment".into(),
            message: e.to_string(),
        })?);
        out.push(b'\n');
    }
    Ok(out)
}

pub(super) fn segment_path(n: u32) -> String {
    format!("{LOG_DIR}/{n:06}.jsonl")
}

pub(super) fn upsert(path: &str, content: Vec<u8>) -> Edit {
    Edit::Upsert {
        path: path.to_string(),
        content,
    }
}

pub(super) fn normalize_doc(text: &str) -> String {
    let mut t = text.replace("\r\n", "\n");
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}
