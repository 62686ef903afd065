//! Git's own conventions for configuration and identity, as stock git applies them.
//!
//! libgit2 reads `~/.gitconfig` and the system file by itself and knows nothing of the
//! variables git honours (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`,
//! `GIT_AUTHOR_*`, `GIT_COMMITTER_*`). The library reads no environment, so the front end gathers
//! those values into a [`GitEnv`]; the store composes the configuration from it file by file at
//! git's levels and sets it on the repository, so every value lore or libgit2 reads (`user.*`,
//! `lore.secrets`, …) comes from the same files git would read.
//!
//! Conditional includes (`includeIf`) are not evaluated: libgit2 evaluates them only for the
//! configuration it loads itself. The store warns when the configuration has any, because a
//! value set only there (often `user.email`) is then not seen. Plain `include.path` works.

use std::path::{Path, PathBuf};

use git2::{Config, ConfigLevel, Repository};

use crate::error::Result;

/// The system configuration file of a stock git build (`$(prefix)/etc/gitconfig`).
pub const SYSTEM_CONFIG: &str = "/etc/gitconfig";

/// The placeholder name for commits made without any git identity.
pub const PLACEHOLDER_NAME: &str = "lore";
/// The placeholder email for commits made without any git identity.
pub const PLACEHOLDER_EMAIL: &str = "lore@localhost";

/// What git would take from the environment: identity overrides, which configuration files to
/// read, and the directories they are found from. Front ends fill it from the process's
/// environment (each field is the variable of the same name, unset or empty as `None`);
/// the default is an empty environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitEnv {
    /// `GIT_AUTHOR_NAME`.
    pub author_name: Option<String>,
    /// `GIT_AUTHOR_EMAIL`.
    pub author_email: Option<String>,
    /// `GIT_AUTHOR_DATE` (git's internal format `<seconds> <±hhmm>`, RFC 2822 or ISO 8601 with
    /// an offset).
    pub author_date: Option<String>,
    /// `GIT_COMMITTER_NAME`.
    pub committer_name: Option<String>,
    /// `GIT_COMMITTER_EMAIL`.
    pub committer_email: Option<String>,
    /// `GIT_COMMITTER_DATE`.
    pub committer_date: Option<String>,
    /// `EMAIL`: git's last resort for the email of both.
    pub email: Option<String>,
    /// `GIT_CONFIG_GLOBAL`: the one user-level file read instead of `~/.gitconfig` and the XDG
    /// file.
    pub config_global: Option<PathBuf>,
    /// `GIT_CONFIG_SYSTEM`: the system-level file read instead of [`SYSTEM_CONFIG`].
    pub config_system: Option<PathBuf>,
    /// `GIT_CONFIG_NOSYSTEM`: no system-level file at all.
    pub config_nosystem: bool,
    /// `HOME`: where `~/.gitconfig` is (and the XDG file when `XDG_CONFIG_HOME` is unset).
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`: where `git/config` is.
    pub xdg_config_home: Option<PathBuf>,
}

impl GitEnv {
    /// Only the repository's own configuration: no system or user file, no identity from the
    /// environment. What [`super::Store::discover`] uses; stores opened by a front end pass the
    /// real environment.
    pub fn repository_only() -> GitEnv {
        GitEnv {
            config_nosystem: true,
            ..GitEnv::default()
        }
    }

    /// The configuration files git reads, lowest precedence first, each with its level. The
    /// repository's own files are added by the store.
    pub fn config_files(&self) -> Vec<(PathBuf, ConfigLevel)> {
        let mut files = Vec::new();
        if !self.config_nosystem {
            let system = self
                .config_system
                .clone()
                .unwrap_or_else(|| PathBuf::from(SYSTEM_CONFIG));
            files.push((system, ConfigLevel::System));
        }
        match &self.config_global {
            Some(global) => files.push((global.clone(), ConfigLevel::Global)),
            None => {
                let xdg = match (&self.xdg_config_home, &self.home) {
                    (Some(x), _) => Some(x.join("git").join("config")),
                    (None, Some(h)) => Some(h.join(".config").join("git").join("config")),
                    (None, None) => None,
                };
                files.extend(xdg.map(|x| (x, ConfigLevel::XDG)));
                if let Some(home) = &self.home {
                    files.push((home.join(".gitconfig"), ConfigLevel::Global));
                }
            }
        }
        files
    }
}

/// Composes the configuration git would read for `repo` under `env` and sets it on the
/// repository. Returns the names of conditional includes it could not evaluate.
pub(super) fn configure(repo: &Repository, env: &GitEnv) -> Result<Vec<String>> {
    let mut config = Config::new()?;
    for (path, level) in env.config_files() {
        add_if_readable(&mut config, &path, level)?;
    }
    let common = repo.commondir().to_path_buf();
    add_if_readable(&mut config, &common.join("config"), ConfigLevel::Local)?;
    let worktree_config = config
        .get_bool("extensions.worktreeconfig")
        .unwrap_or(false);
    if worktree_config {
        add_if_readable(
            &mut config,
            &repo.path().join("config.worktree"),
            ConfigLevel::Worktree,
        )?;
    }
    let mut conditional = Vec::new();
    if let Ok(entries) = config.entries(Some("^includeif\\..*\\.path$")) {
        entries.for_each(|entry| {
            if let Ok(name) = entry.name() {
                conditional.push(name.to_string());
            }
        })?;
    }
    repo.set_config(&config)?;
    Ok(conditional)
}

/// Adds a configuration file that exists and is a regular file (git skips a missing one, and
/// `/dev/null`, a common value of `GIT_CONFIG_GLOBAL`, stands for no file).
fn add_if_readable(config: &mut Config, path: &Path, level: ConfigLevel) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            config.add_file(path, level, false)?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A name, an email and optionally a fixed time: one side of a commit's signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Person {
    /// The name.
    pub name: String,
    /// The email.
    pub email: String,
    /// A fixed time (seconds since the epoch, offset in minutes) from `GIT_*_DATE`.
    pub time: Option<(i64, i32)>,
}

impl Person {
    /// The signature for a commit made now (or at the fixed time).
    pub fn signature(&self) -> Result<git2::Signature<'static>> {
        Ok(match self.time {
            Some((seconds, offset)) => {
                git2::Signature::new(&self.name, &self.email, &git2::Time::new(seconds, offset))?
            }
            None => git2::Signature::now(&self.name, &self.email)?,
        })
    }
}

/// Who authors and who commits lore's commits, as git resolves them, and what was amiss.
#[derive(Clone, Debug)]
pub struct Identity {
    /// The author.
    pub author: Person,
    /// The committer.
    pub committer: Person,
    /// Warnings for the front end (a placeholder identity, a date that was not understood).
    pub warnings: Vec<String>,
}

/// Resolves the author and committer as git does: the environment's `GIT_AUTHOR_*` /
/// `GIT_COMMITTER_*`, then `author.*` / `committer.*`, then `user.*`, then `EMAIL` for the email;
/// a part still missing becomes the placeholder (with a warning).
pub(super) fn resolve(repo: &Repository, env: &GitEnv) -> Identity {
    let config = repo.config().ok();
    let get = |key: &str| {
        config
            .as_ref()
            .and_then(|c| c.get_string(key).ok())
            .filter(|v| !v.trim().is_empty())
    };
    let mut warnings = Vec::new();
    let mut missing = Vec::new();
    let mut person =
        |role: &str, name: &Option<String>, email: &Option<String>, date: &Option<String>| {
            let name = name
                .clone()
                .or_else(|| get(&format!("{role}.name")))
                .or_else(|| get("user.name"));
            let email = email
                .clone()
                .or_else(|| get(&format!("{role}.email")))
                .or_else(|| get("user.email"))
                .or_else(|| env.email.clone());
            if name.is_none() && !missing.contains(&"user.name") {
                missing.push("user.name");
            }
            if email.is_none() && !missing.contains(&"user.email") {
                missing.push("user.email");
            }
            let variable = format!("GIT_{}_DATE", role.to_uppercase());
            let time = date.as_deref().and_then(|d| {
                let parsed = parse_git_date(d);
                if parsed.is_none() {
                    warnings.push(format!(
                        "{variable}={d:?} is not a date lore understands (seconds and offset, \
                     RFC 2822, or ISO 8601 with an offset); lore's commits carry the current time"
                    ));
                }
                parsed
            });
            Person {
                name: name.unwrap_or_else(|| PLACEHOLDER_NAME.to_string()),
                email: email.unwrap_or_else(|| PLACEHOLDER_EMAIL.to_string()),
                time,
            }
        };
    let author = person(
        "author",
        &env.author_name,
        &env.author_email,
        &env.author_date,
    );
    let committer = person(
        "committer",
        &env.committer_name,
        &env.committer_email,
        &env.committer_date,
    );
    if !missing.is_empty() {
        warnings.push(format!(
            "no git identity ({} not set): lore signs its commits as {PLACEHOLDER_NAME} \
             <{PLACEHOLDER_EMAIL}>; set it with `git config --global user.name \"Your Name\"` \
             and `git config --global user.email you@example.com`",
            missing.join(" and ")
        ));
    }
    Identity {
        author,
        committer,
        warnings,
    }
}

/// Parses a date as git accepts it in `GIT_AUTHOR_DATE`: its internal format (`[@]<seconds>
/// <±hhmm>`), RFC 2822 (`Thu, 07 Apr 2005 22:13:13 +0200`) or ISO 8601 with an offset
/// (`2005-04-07T22:13:13+02:00`, `2005-04-07 22:13:13 +0200`). Returns seconds and the offset in
/// minutes.
pub fn parse_git_date(text: &str) -> Option<(i64, i32)> {
    let text = text.trim();
    let internal = text.strip_prefix('@').unwrap_or(text);
    let mut parts = internal.split_whitespace();
    if let (Some(seconds), offset, None) = (parts.next(), parts.next(), parts.next())
        && let Ok(seconds) = seconds.parse::<i64>()
        && (text.starts_with('@') || seconds >= 100_000_000)
    {
        let offset = match offset {
            Some(o) => parse_offset(o)?,
            None => 0,
        };
        return Some((seconds, offset));
    }
    if let Ok(zoned) = jiff::fmt::rfc2822::parse(text) {
        return Some((zoned.timestamp().as_second(), zoned.offset().seconds() / 60));
    }
    // ISO 8601: a space may separate date and time, and the offset may follow a space.
    let iso = iso_with_offset(text)?;
    let stamp: jiff::Timestamp = iso.parse().ok()?;
    let offset = iso
        .get(iso.len().saturating_sub(6)..)
        .and_then(|o| parse_offset(&o.replace(':', "")))
        .unwrap_or(0);
    Some((stamp.as_second(), offset))
}

/// `2005-04-07 22:13:13 +0200` → `2005-04-07T22:13:13+02:00`; `None` without an offset.
fn iso_with_offset(text: &str) -> Option<String> {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    let zone = if words.len() >= 2 && parse_offset(words[words.len() - 1]).is_some() {
        let o = words.pop()?;
        Some(format!("{}:{}", &o[..3], &o[3..]))
    } else {
        None
    };
    let joined = words.join("T");
    if joined.ends_with('Z') {
        return Some(format!("{}+00:00", joined.trim_end_matches('Z')));
    }
    match zone {
        Some(z) => Some(format!("{joined}{z}")),
        None => {
            let tail = joined.get(joined.len().saturating_sub(6)..)?;
            let has_offset = (tail.starts_with('+') || tail.starts_with('-'))
                && tail.as_bytes().get(3) == Some(&b':');
            has_offset.then_some(joined)
        }
    }
}

/// `+0200` → 120, `-0730` → -450.
fn parse_offset(text: &str) -> Option<i32> {
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    (minutes < 60).then_some(sign * (hours * 60 + minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_the_forms_git_accepts() {
        let want = Some((1_112_911_993, 120));
        assert_eq!(parse_git_date("1112911993 +0200"), want);
        assert_eq!(parse_git_date("@1112911993 +0200"), want);
        assert_eq!(parse_git_date("Fri, 08 Apr 2005 00:13:13 +0200"), want);
        assert_eq!(parse_git_date("2005-04-08T00:13:13+02:00"), want);
        assert_eq!(parse_git_date("2005-04-08 00:13:13 +0200"), want);
        assert_eq!(
            parse_git_date("2005-04-07T22:13:13Z"),
            Some((1_112_911_993, 0))
        );
        assert_eq!(parse_git_date("@1112911993"), Some((1_112_911_993, 0)));
        assert_eq!(parse_git_date("next tuesday"), None);
        assert_eq!(parse_git_date("2005-04-07 22:13:13"), None, "no offset");
    }

    #[test]
    fn the_user_files_follow_git_config_global_and_nosystem() {
        let env = GitEnv {
            home: Some("/h".into()),
            ..GitEnv::default()
        };
        let files: Vec<_> = env.config_files().into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            files,
            [
                PathBuf::from(SYSTEM_CONFIG),
                "/h/.config/git/config".into(),
                "/h/.gitconfig".into()
            ]
        );
        let env = GitEnv {
            home: Some("/h".into()),
            xdg_config_home: Some("/x".into()),
            config_system: Some("/s".into()),
            ..GitEnv::default()
        };
        let files: Vec<_> = env.config_files().into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            files,
            [
                PathBuf::from("/s"),
                "/x/git/config".into(),
                "/h/.gitconfig".into()
            ]
        );
        let env = GitEnv {
            home: Some("/h".into()),
            config_global: Some("/g".into()),
            config_nosystem: true,
            ..GitEnv::default()
        };
        let files: Vec<_> = env.config_files().into_iter().map(|(p, _)| p).collect();
        assert_eq!(files, [PathBuf::from("/g")]);
        assert!(GitEnv::repository_only().config_files().is_empty());
    }
}
