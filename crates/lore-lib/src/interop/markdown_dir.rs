//! A directory of markdown files with YAML front matter, laid out like lore's tree.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::{Converted, ImportRecord, convert_all, stable_id};
use crate::error::{Error, Result};
use crate::model::Memory;
use crate::record;
use crate::store::layout::path_of;

/// Writes each memory to `dir/<namespace>/…` exactly as it is stored. Returns the files written.
pub fn export(memories: &[Memory], dir: &Path) -> Result<usize> {
    for m in memories {
        let path = dir.join(path_of(m));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(&path, record::render(m)?)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    }
    Ok(memories.len())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        if kind.is_dir() {
            if !entry.file_name().to_string_lossy().starts_with('.') {
                walk(&path, out)?;
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads every `*.md` file under `dir`. A file without front matter becomes a memory whose
/// summary is its first line; the namespace comes from the front matter or the first directory.
pub fn import(dir: &Path, now: Timestamp) -> Result<Converted> {
    if !dir.is_dir() {
        return Err(Error::Parse {
            context: dir.display().to_string(),
            message: "not a directory".into(),
        });
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(dir).unwrap_or(&file);
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let origin = file.display().to_string();
        let bytes = std::fs::read(&file).map_err(|e| Error::io(format!("reading {origin}"), e))?;
        let Ok(text) = String::from_utf8(bytes) else {
            bad.push(format!("skipped: {origin}: not UTF-8"));
            continue;
        };
        let (fields, body) = match record::split_front_matter(&text) {
            Ok((yaml, _)) if yaml.len() > record::MAX_FRONT_MATTER_BYTES => {
                bad.push(format!(
                    "skipped: {origin}: {}",
                    record::front_matter_too_large(yaml.len())
                ));
                continue;
            }
            Ok((yaml, body)) => match serde_norway::from_str::<serde_norway::Value>(yaml) {
                Ok(serde_norway::Value::Mapping(m)) => (m, body.to_string()),
                Ok(_) => (serde_norway::Mapping::new(), body.to_string()),
                Err(e) => {
                    bad.push(format!("skipped: {origin}: invalid front matter ({e})"));
                    continue;
                }
            },
            // A file that opens a front matter it never closes is not a plain note: its first
            // lines would become the body, fields and all.
            Err(why) if text.starts_with("---\n") || text.starts_with("---\r\n") => {
                bad.push(format!("skipped: {origin}: {why}"));
                continue;
            }
            // No front matter at all: a plain markdown note, its text the body.
            Err(_) => (serde_norway::Mapping::new(), text.clone()),
        };
        let fallback_namespace = rel_text
            .split('/')
            .next()
            .filter(|first| rel_text.contains('/') && !first.is_empty())
            .map(str::to_string);
        records.push(ImportRecord {
            fallback_id: Some(stable_id(&format!("markdown:{rel_text}"))),
            origin,
            fields,
            body,
            fallback_namespace,
            fallback_anchor: None,
        });
    }
    let mut converted = convert_all(&records, now);
    bad.append(&mut converted.warnings);
    converted.warnings = bad;
    Ok(converted)
}
