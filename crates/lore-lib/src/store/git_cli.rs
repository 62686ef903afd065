//! The git command line, run on the store's repository: the network side of sync (so that
//! credentials, ssh agents, proxies and URL rewrites work exactly as they do for the user's own
//! `git fetch`/`git push`) and packing.
//! Every call has a time limit, never prompts (`GIT_TERMINAL_PROMPT=0`) and reports git's own
//! words when it fails.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git2::Oid;

use crate::error::{Error, Result};

/// The git command line, run on one repository.
pub(crate) struct GitCli {
    git_dir: PathBuf,
    timeout: Duration,
}

/// How git says an atomic push's other refs failed because one ref was refused (by version).
const COLLATERAL: &[&str] = &["atomic transaction failed", "atomic push failed"];

/// Whether every refusal of a push (its `--porcelain` `!` lines) says the remote moved or was
/// being written, which is worth a new round; any other refusal (a hook, a permission, a
/// protected ref) is the remote's answer.
fn remote_moved(rejected: &[&str]) -> bool {
    const MOVED: &[&str] = &[
        "stale info",
        "fetch first",
        "non-fast-forward",
        "failed to lock",
        "cannot lock",
        "incorrect old value",
    ];
    rejected
        .iter()
        .all(|l| MOVED.iter().chain(COLLATERAL).any(|m| l.contains(m)))
}

/// One ref a push updates.
#[derive(Clone, Debug)]
pub(crate) struct PushUpdate {
    /// The local ref (`refs/lore/memory`).
    pub local_ref: String,
    /// The commit pushed.
    pub commit: Oid,
    /// The value the remote must still have (as last fetched; none: it must not exist).
    pub lease: Option<Oid>,
    /// Whether the commit may replace the remote's history rather than extend it (after a
    /// purge).
    pub replace: bool,
}

/// How a push ended.
pub(crate) enum PushOutcome {
    /// Every ref was updated.
    Pushed,
    /// The remote refused (a lease no longer held, or a ref moved): fetch and merge again.
    Rejected(String),
}

impl GitCli {
    pub(crate) fn new(git_dir: &Path, timeout: Duration) -> GitCli {
        GitCli {
            git_dir: git_dir.to_path_buf(),
            timeout,
        }
    }

    /// Fetches every lore ref of `remote` into its tracking namespace (forced, so a remote
    /// that was rewritten or diverged never makes the fetch fail; pruned, so deleted refs go).
    pub(crate) fn fetch(
        &self,
        remote: &str,
        remote_prefix: &str,
        tracking_prefix: &str,
    ) -> Result<()> {
        let refspec = format!("+{remote_prefix}*:{tracking_prefix}*");
        let out = self.run(
            &[
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "--prune",
                "--quiet",
                remote,
                &refspec,
            ],
            remote,
        )?;
        if out.success {
            Ok(())
        } else {
            Err(unreachable(remote, &out.stderr))
        }
    }

    /// Pushes `updates` in one atomic push with an explicit lease per ref; each local
    /// `refs/lore/X` goes to `<remote_prefix>X`.
    pub(crate) fn push(
        &self,
        remote: &str,
        remote_prefix: &str,
        updates: &[PushUpdate],
    ) -> Result<PushOutcome> {
        let remote_name = |local: &str| {
            format!(
                "{remote_prefix}{}",
                local
                    .strip_prefix(crate::store::LORE_REF_PREFIX)
                    .unwrap_or(local)
            )
        };
        let mut args: Vec<String> = vec![
            "push".into(),
            "--atomic".into(),
            "--porcelain".into(),
            "--no-verify".into(),
        ];
        for u in updates {
            let expect = u.lease.map(|o| o.to_string()).unwrap_or_default();
            args.push(format!(
                "--force-with-lease={}:{expect}",
                remote_name(&u.local_ref)
            ));
        }
        args.push(remote.into());
        for u in updates {
            // Only a purge replaces the remote's history; the lease still guards it.
            let plus = if u.replace { "+" } else { "" };
            args.push(format!("{plus}{}:{}", u.commit, remote_name(&u.local_ref)));
        }
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.run(&arg_refs, remote)?;
        if out.success {
            return Ok(PushOutcome::Pushed);
        }
        let rejected: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('!')).collect();
        if rejected.is_empty() {
            Err(unreachable(remote, &out.stderr))
        } else if remote_moved(&rejected) {
            Ok(PushOutcome::Rejected(rejected.join("; ")))
        } else {
            let refused: Vec<&str> = rejected
                .iter()
                .filter(|l| !COLLATERAL.iter().any(|c| l.contains(c)))
                .map(|l| l.trim_start_matches('!').trim())
                .collect();
            Err(Error::Remote {
                remote: remote.to_string(),
                message: format!(
                    "the remote refused the push: {}{}",
                    refused.join("; "),
                    stderr_hint(&out.stderr)
                ),
            })
        }
    }

    /// Runs a local maintenance command (`pack-refs`, `repack`); fails unless it succeeds.
    pub(crate) fn maintain(&self, args: &[&str]) -> Result<()> {
        let out = self.run(args, "(local)")?;
        if out.success {
            Ok(())
        } else {
            Err(Error::io(
                format!("git {}", args.join(" ")),
                std::io::Error::other(out.stderr.trim().to_string()),
            ))
        }
    }

    fn run(&self, args: &[&str], remote: &str) -> Result<Output> {
        let mut child = git_command()
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io("running git", e))?;
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let out_reader = std::thread::spawn(move || read_all(stdout.as_mut()));
        let err_reader = std::thread::spawn(move || read_all(stderr.as_mut()));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child
                .try_wait()
                .map_err(|e| Error::io("waiting for git", e))?
            {
                break status;
            }
            if started.elapsed() > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::Remote {
                    remote: remote.to_string(),
                    message: format!(
                        "git {} took longer than {} s and was stopped",
                        args[0],
                        self.timeout.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Ok(Output {
            success: status.success(),
            stdout: out_reader.join().unwrap_or_default(),
            stderr: err_reader.join().unwrap_or_default(),
        })
    }
}

/// The command that runs git. Where util-linux's `setpriv` can set a parent-death signal, git
/// runs through it (`setpriv --pdeathsig KILL -- git …`), so a git that lore started dies with
/// lore even when lore is killed outright; elsewhere git runs directly and outlives a killed
/// lore by at most its time limit.
fn git_command() -> Command {
    static SETPRIV: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    let setpriv = SETPRIV.get_or_init(|| {
        ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .filter(|p| Path::new(p).exists())
            .find(|p| {
                // An older setpriv without --pdeathsig refuses the flag: then git runs directly.
                Command::new(p)
                    .args(["--pdeathsig", "KILL", "--", "true"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
    });
    match setpriv {
        Some(path) => {
            let mut command = Command::new(path);
            command.args(["--pdeathsig", "KILL", "--", "git"]);
            command
        }
        None => Command::new("git"),
    }
}

struct Output {
    success: bool,
    stdout: String,
    stderr: String,
}

fn read_all(pipe: Option<&mut impl Read>) -> String {
    let mut text = String::new();
    if let Some(pipe) = pipe {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    text
}

fn stderr_hint(stderr: &str) -> String {
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" (the remote said: {})", said.join(" "))
    }
}

fn unreachable(remote: &str, stderr: &str) -> Error {
    let message = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Error::Remote {
        remote: remote.to_string(),
        message: if message.is_empty() {
            "git could not reach it".into()
        } else {
            message
        },
    }
}

#[cfg(test)]
mod tests {
    use super::remote_moved;

    #[test]
    fn a_stale_lease_with_its_atomic_collateral_is_worth_a_new_round() {
        // As git 2.47 prints a lease that no longer holds in an atomic push of several refs.
        let lines = [
            "!\t573ddd02:refs/lore/memory\t[rejected] (stale info)",
            "!\t3abd1ad2:refs/lore/outcomes/a/best\t[rejected] (atomic push failed)",
            "!\t787b290c:refs/lore/thoughts/a\t[rejected] (atomic push failed)",
        ];
        assert!(remote_moved(&lines));
        let older = ["!\tx:refs/lore/memory\t[rejected] (atomic transaction failed)"];
        assert!(remote_moved(&older));
        // A hook's refusal is the remote's answer, whatever else failed with it.
        let hook = [
            "!\tx:refs/lore/memory\t[remote rejected] (pre-receive hook declined)",
            "!\ty:refs/lore/ctx/main\t[rejected] (atomic push failed)",
        ];
        assert!(!remote_moved(&hook));
    }
}
