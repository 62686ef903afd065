//! `sync --setup`: makes a plain `git fetch` bring lore's refs along (one fetch refspec into the
//! remote's tracking namespace) and, on request, installs a pre-push hook that syncs lore and
//! never fails the user's push. Nothing else of the user's configuration changes; in particular
//! `remote.<name>.push` is never set (it would change what a plain `git push` pushes).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::{resolve_remote, tracking_prefix};
use crate::error::{Error, Result};
use crate::store::Store;

/// The line that marks lore's part of a pre-push hook.
const HOOK_MARK: &str = "# lore sync (added by `lore sync --setup --hook`)";

/// What `--setup` changed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SetupReport {
    /// The remote set up.
    pub remote: String,
    /// The fetch refspec (added now, or there already).
    pub refspec: String,
    /// Whether the refspec was added now.
    pub refspec_added: bool,
    /// The pre-push hook written, if one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<PathBuf>,
    /// Whether the hook was changed now (false: lore's part was there already).
    pub hook_added: bool,
}

/// Adds the fetch refspec for `remote` (idempotent) and, if `hook` is set, the pre-push hook
/// running `command` (the path of the lore binary).
pub fn setup(store: &Store, remote: Option<&str>, hook: Option<&str>) -> Result<SetupReport> {
    let repo = store.repo();
    let remote = resolve_remote(repo, remote)?;
    let refspec = format!(
        "+{}*:{}*",
        super::remote_prefix(store)?,
        tracking_prefix(&remote)
    );
    let key = format!("remote.{remote}.fetch");
    let mut config = repo.config()?.open_level(git2::ConfigLevel::Local)?;
    let mut present = false;
    {
        let mut entries = config.multivar(&key, None)?;
        while let Some(entry) = entries.next() {
            if entry?.value().ok() == Some(refspec.as_str()) {
                present = true;
            }
        }
    }
    if !present {
        // A pattern that matches no existing value appends a new one.
        config.set_multivar(&key, "^$^", &refspec)?;
    }
    let mut report = SetupReport {
        remote: remote.clone(),
        refspec,
        refspec_added: !present,
        hook: None,
        hook_added: false,
    };
    if let Some(command) = hook {
        let (path, added) = install_hook(store, &remote, command)?;
        report.hook = Some(path);
        report.hook_added = added;
    }
    Ok(report)
}

fn install_hook(store: &Store, remote: &str, command: &str) -> Result<(PathBuf, bool)> {
    let repo = store.repo();
    let dir = match repo.config()?.get_path("core.hooksPath") {
        Ok(p) if p.is_absolute() => p,
        Ok(p) => repo.workdir().unwrap_or(repo.path()).join(p),
        Err(_) => store.common_dir().join("hooks"),
    };
    let path = dir.join("pre-push");
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    if existing.as_deref().is_some_and(|t| t.contains(HOOK_MARK)) {
        return Ok((path, false));
    }
    let quoted = shell_quote(command);
    // Syncs only when git pushes to the remote set up, in the background of the user's push:
    // whatever happens, the hook exits 0 and prints nothing on failure.
    let block = format!(
        "{HOOK_MARK}\nif [ \"$1\" = {remote_q} ]; then {quoted} sync {remote_q} --quiet >/dev/null 2>&1 || true; fi\n",
        remote_q = shell_quote(remote),
    );
    let text = match existing {
        None => format!("#!/bin/sh\n{block}exit 0\n"),
        Some(text)
            if text.starts_with("#!/bin/sh")
                || text.starts_with("#!/usr/bin/env sh")
                || text.starts_with("#!/bin/bash")
                || text.starts_with("#!/usr/bin/env bash") =>
        {
            // Ours goes first, so an `exit` further down cannot skip it.
            let (shebang, rest) = text.split_once('\n').unwrap_or((&text, ""));
            format!("{shebang}\n{block}{rest}")
        }
        Some(_) => {
            return Err(Error::Invalid {
                what: "pre-push hook",
                value: path.display().to_string(),
                reason: "a hook that is not a shell script exists there; add a line running \
                         `lore sync` to it yourself"
                    .into(),
            });
        }
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    crate::localstate::replace_contents(&path, text.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(format!("making {} executable", path.display()), e))?;
    }
    Ok((path, true))
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
