//! The registry of projects: the repositories on this machine where lore has a store, kept in
//! the personal store's local data (`<personal store>/lore/projects.json`, never pushed), noted
//! when a project's store is opened, read by `--scope all`. An entry whose path is gone is
//! dropped when the registry is read.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::localstate::JsonFile;

/// The registry's document.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Registry {
    /// Each project's work tree (or git directory, for a bare repository).
    projects: Vec<PathBuf>,
}

/// Notes a project at `path` in the registry at `file` (nothing is written when it is there
/// already, so opening a known project costs one small read).
pub fn note(file: &Path, path: &Path) -> Result<()> {
    let registry: JsonFile<Registry> = JsonFile::new(file.to_path_buf());
    if registry
        .read()
        .ok()
        .flatten()
        .is_some_and(|r| r.projects.iter().any(|p| p == path))
    {
        return Ok(());
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::error::Error::io(format!("creating {}", dir.display()), e))?;
    }
    let mut locked = registry.lock()?;
    if !locked.value.projects.iter().any(|p| p == path) {
        locked.value.projects.push(path.to_path_buf());
        locked.save()?;
    }
    Ok(())
}

/// The registered projects whose path still exists (those gone are dropped from the file).
pub fn projects(file: &Path) -> Result<Vec<PathBuf>> {
    let registry: JsonFile<Registry> = JsonFile::new(file.to_path_buf());
    let Some(read) = registry.read()? else {
        return Ok(Vec::new());
    };
    if read.projects.iter().all(|p| p.exists()) {
        return Ok(read.projects);
    }
    let mut locked = registry.lock()?;
    locked.value.projects.retain(|p| p.exists());
    locked.save()?;
    Ok(locked.value.projects.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_are_noted_once_and_dropped_when_gone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.git").join("lore").join("projects.json");
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        note(&file, &a).unwrap();
        note(&file, &a).unwrap();
        note(&file, &b).unwrap();
        assert_eq!(projects(&file).unwrap(), vec![a.clone(), b.clone()]);
        std::fs::remove_dir_all(&b).unwrap();
        assert_eq!(projects(&file).unwrap(), vec![a.clone()]);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("\"b\"") && !text.ends_with("/b\"]}"),
            "{text}"
        );
    }
}
