//! Namespaces: registering one, listing them, and refusing a name that is neither built in nor
//! registered, on a write (checked on the tip it lands on) and on a read filtered by it, with
//! the closest known name as a suggestion.

use serde::Serialize;

use super::Lore;
use crate::error::{Error, Result};
use crate::index::ListFilter;
use crate::model::{BUILTIN_NAMESPACES, Namespace};
use crate::store::layout::namespace_marker_path;
use crate::store::{Edit, Message, Snapshot, WriteContext};

impl Lore {
    /// Registers a user-defined namespace.
    pub fn add_namespace(&self, name: &str, description: &str, ctx: &WriteContext) -> Result<bool> {
        let ns = Namespace::parse(name)?;
        if ns.is_builtin() {
            return Ok(false);
        }
        let (added, _) = self.store.transact(|snap| {
            if namespace_known(snap, &ns)? {
                return Ok((Vec::new(), Message::default(), false));
            }
            let message = Message {
                subject: format!("namespace add {ns}"),
                body: None,
                trailers: ctx.trailers("namespace", &[]),
            };
            Ok((
                vec![namespace_marker_edit(&ns, description)?],
                message,
                true,
            ))
        })?;
        Ok(added)
    }

    /// All namespaces: built in, then registered.
    pub fn namespaces(&mut self) -> Result<Vec<(String, bool)>> {
        let mut out: Vec<(String, bool)> = BUILTIN_NAMESPACES
            .iter()
            .map(|n| (n.to_string(), true))
            .collect();
        for n in self.read(|i| i.registered_namespaces())? {
            out.push((n, false));
        }
        Ok(out)
    }

    /// Refuses a namespace given to filter a read (list, recall, export) when it is neither
    /// built in nor registered and no memory is in it, suggesting the closest known name: a
    /// typo answers with an error, not with "nothing matches".
    pub fn check_namespace_filter(&mut self, name: &str) -> Result<()> {
        let ns = Namespace::parse(name)?;
        if ns.is_builtin() {
            return Ok(());
        }
        let known = self.namespaces()?;
        if known.iter().any(|(n, _)| n == ns.as_str()) {
            return Ok(());
        }
        // Memories under a name without a marker (written by hand) are still read.
        let held = ListFilter {
            namespace: Some(ns.to_string()),
            limit: Some(1),
            ..ListFilter::default()
        };
        if !self.list(&held)?.is_empty() {
            return Ok(());
        }
        Err(unknown(&ns, known.iter().map(|(n, _)| n.as_str())))
    }
}

pub(super) fn namespace_known(snap: &Snapshot<'_>, ns: &Namespace) -> Result<bool> {
    Ok(ns.is_builtin() || snap.blob_id(&namespace_marker_path(ns))?.is_some())
}

pub(super) fn namespace_marker_edit(ns: &Namespace, description: &str) -> Result<Edit> {
    #[derive(Serialize)]
    struct Marker<'a> {
        name: &'a str,
        description: &'a str,
    }
    let text = serde_norway::to_string(&Marker {
        name: ns.as_str(),
        description,
    })
    .map_err(|e| Error::Parse {
        context: "writing a namespace marker".into(),
        message: e.to_string(),
    })?;
    Ok(Edit::Upsert {
        path: namespace_marker_path(ns),
        content: text.into_bytes(),
    })
}

/// Refuses a namespace that is neither built in nor registered on this tip, suggesting the
/// closest known name.
pub(super) fn check_namespace(snap: &Snapshot<'_>, ns: &Namespace) -> Result<()> {
    if namespace_known(snap, ns)? {
        return Ok(());
    }
    let mut registered = Vec::new();
    for (dir, _) in snap.dirs_in("")? {
        if let Ok(candidate) = Namespace::parse(&dir)
            && snap.blob_id(&namespace_marker_path(&candidate))?.is_some()
        {
            registered.push(dir);
        }
    }
    let known = BUILTIN_NAMESPACES
        .iter()
        .copied()
        .chain(registered.iter().map(String::as_str));
    Err(unknown(ns, known))
}

/// The error for an unknown namespace, with the closest of `known` (at most three edits away)
/// as a suggestion.
fn unknown<'a>(ns: &Namespace, known: impl Iterator<Item = &'a str>) -> Error {
    let suggestion = known
        .map(|k| (strsim::levenshtein(k, ns.as_str()), k))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, k)| k.to_string());
    Error::UnknownNamespace {
        name: ns.to_string(),
        suggestion,
    }
}
