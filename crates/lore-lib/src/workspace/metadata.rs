//! `metadata.yaml`: addressable segments (file structure, env config, dependencies, …), read
//! whole or one segment at a time, and set or removed one segment per commit.

use git2::Oid;

use super::files::{text_of, to_yaml, upsert, yaml_error};
use super::{BRANCH_FILE, EntryKind, METADATA_FILE, Workspace, branch_ref, read_meta};
use crate::error::{Error, Result};
use crate::store::RefWrite;
use crate::store::WriteContext;

impl Workspace<'_> {
    /// The metadata of a branch, whole or one segment (`a.b` reaches into nested mappings).
    pub fn metadata_get(
        &self,
        branch: Option<&str>,
        segment: Option<&str>,
    ) -> Result<serde_norway::Value> {
        let branch = self.resolve(branch)?;
        let tip = self
            .tip(&branch)?
            .ok_or_else(|| self.unknown_branch(&branch))?;
        let value = parse_metadata(&text_of(&self.store.snapshot(Some(tip))?, METADATA_FILE)?)?;
        let Some(segment) = segment else {
            return Ok(value);
        };
        let mut current = &value;
        for part in segment.split('.') {
            current = current.get(part).ok_or_else(|| {
                let known: Vec<String> = value
                    .as_mapping()
                    .map(|m| {
                        m.keys()
                            .filter_map(|k| k.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                Error::ContextNotFound(format!(
                    "no metadata segment {segment:?} on {branch} (segments: {})",
                    if known.is_empty() {
                        "none yet".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })?;
        }
        Ok(current.clone())
    }

    /// Sets (or with `None`, removes) a top-level metadata segment, as one commit.
    pub fn metadata_set(
        &self,
        branch: Option<&str>,
        segment: &str,
        value: Option<serde_norway::Value>,
        ctx: &WriteContext,
    ) -> Result<Oid> {
        let ok = !segment.is_empty()
            && segment.len() <= 64
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(Error::Invalid {
                what: "metadata segment",
                value: segment.to_string(),
                reason: "use 1-64 letters, digits, '_' or '-'".into(),
            });
        }
        let value = value
            .map(|v| self.screened_value("metadata", v))
            .transpose()?;
        let branch = self.resolve(branch)?;
        let now = Self::now(ctx);
        let (_, commit) = self.store.transact_ref(&branch_ref(&branch), |snap| {
            let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&branch))?;
            let mut doc = parse_metadata(&text_of(snap, METADATA_FILE)?)?;
            let map = doc.as_mapping_mut().ok_or_else(|| Error::Parse {
                context: METADATA_FILE.into(),
                message: "not a mapping".into(),
            })?;
            let key = serde_norway::Value::String(segment.to_string());
            let contribution = match &value {
                Some(v) => {
                    map.insert(key, v.clone());
                    format!("Set metadata segment {segment}.")
                }
                None => {
                    if map.remove(&key).is_none() {
                        return Err(Error::ContextNotFound(format!(
                            "no metadata segment {segment:?} on {branch}"
                        )));
                    }
                    format!("Removed metadata segment {segment}.")
                }
            };
            meta.last = Some(self.entry(
                &meta,
                EntryKind::Metadata,
                &contribution,
                &meta.summary,
                now,
            ));
            let edits = vec![
                upsert(METADATA_FILE, to_yaml(&doc, METADATA_FILE)?),
                upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?),
            ];
            let message = self.message(
                format!("ctx metadata {branch}: {contribution}"),
                None,
                EntryKind::Metadata,
                &branch,
                ctx,
            );
            Ok((RefWrite::on_tip(edits, message), ()))
        })?;
        commit.ok_or_else(|| Error::ContextNotFound("metadata set wrote nothing".into()))
    }
}

/// A metadata value as given by a user: YAML, or (with `as_text`) a plain string.
pub fn metadata_value(raw: &str, as_text: bool) -> Result<serde_norway::Value> {
    if as_text {
        return Ok(serde_norway::Value::String(raw.to_string()));
    }
    serde_norway::from_str(raw).map_err(|e| Error::Parse {
        context: "the metadata value is not YAML (pass --text to store it as text)".into(),
        message: e.to_string(),
    })
}

pub(super) fn parse_metadata(text: &str) -> Result<serde_norway::Value> {
    if text.trim().is_empty() {
        return Ok(serde_norway::Value::Mapping(serde_norway::Mapping::new()));
    }
    let value: serde_norway::Value =
        serde_norway::from_str(text).map_err(yaml_error(METADATA_FILE))?;
    match value {
        serde_norway::Value::Mapping(_) => Ok(value),
        serde_norway::Value::Null => Ok(serde_norway::Value::Mapping(serde_norway::Mapping::new())),
        _ => Err(Error::Parse {
            context: METADATA_FILE.into(),
            message: "metadata must be a mapping of segments".into(),
        }),
    }
}
