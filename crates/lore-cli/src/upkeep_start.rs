//! Starting `lore upkeep` detached: what a command, hook or MCP call does after answering when
//! its reads left upkeep due (the vector cache grown, written again apart from the caller).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lore::Lore;

use crate::global::GlobalArgs;

/// Starts `lore upkeep` in the background, detached (its own process group, no terminal,
/// nothing waited for), for the stores whose reads left upkeep to run apart (`lore`'s own and
/// those of the other scopes it read). The child is this
/// binary with the same embedder options, so it reads the same cache; a failure to start it
/// costs nothing but the upkeep (the next command tries again).
pub fn start_if_wanted(lore: &mut Lore, global: &GlobalArgs) {
    Starter::new(global).start_if_wanted(lore);
}

/// What starting `lore upkeep` needs from the command line: kept by a server, which starts one
/// after a call as a command does after it has answered.
#[derive(Clone, Debug)]
pub struct Starter {
    embedder: String,
    model_dir: Option<PathBuf>,
}

impl Starter {
    pub fn new(global: &GlobalArgs) -> Starter {
        Starter {
            embedder: global.embedder.clone(),
            model_dir: global.model_dir.clone(),
        }
    }

    /// See [`start_if_wanted`]: one `lore upkeep` for every store that wants it (a recall over
    /// several scopes may leave several), which keeps them up one after another rather than
    /// reading several caches at once.
    pub fn start_if_wanted(&self, lore: &mut Lore) {
        let wanted = lore.take_wanted_upkeep();
        if !wanted.is_empty() {
            let _ = self.start(&wanted);
        }
    }

    /// Starts `lore upkeep --store <git dir>…`: each store named by its git directory, whatever
    /// scope it is (opened as a project with `--repo`, a personal or team store would be added
    /// to the list of projects). A thread waits for the child, so that a server that starts
    /// many leaves no zombies; a command exits before it ends, and the child is reparented.
    fn start(&self, git_dirs: &[PathBuf]) -> std::io::Result<()> {
        use std::os::unix::process::CommandExt;
        let mut command = Command::new(std::env::current_exe()?);
        command.arg("--embedder").arg(&self.embedder);
        if let Some(dir) = &self.model_dir {
            command.arg(equals("--model-dir", dir));
        }
        command.arg("upkeep");
        for git_dir in git_dirs {
            command.arg(equals("--store", git_dir));
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        std::thread::spawn(move || child.wait());
        Ok(())
    }
}

/// `--option=<path>`: a path that begins with `-` is not taken for an option.
fn equals(option: &str, path: &Path) -> std::ffi::OsString {
    let mut arg = std::ffi::OsString::from(format!("{option}="));
    arg.push(path);
    arg
}
