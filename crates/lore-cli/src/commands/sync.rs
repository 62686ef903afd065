//! `lore sync`: fetch, merge and push lore's refs with a remote; `--setup` prepares a remote.

use clap::Args;
use lore::ops::sync as ops;
use lore::sync::RefAction;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Sync memory and context with a remote: fetch, merge, push.
///
/// Fetches refs/lore/* into refs/lore-remotes/REMOTE/*, merges each lore ref (memories by id and
/// field; a keyed memory both sides changed differently becomes an open contradiction, listed by
/// `lore conflicts`), then pushes with a lease in one atomic push, retrying if the remote moved.
/// The network is git's own (credentials, ssh agents), so a remote that `git fetch` can reach
/// works. Your branches, tags and `remote.*.push` are never touched.
#[derive(Args, Debug)]
pub struct SyncArgs {
    /// The remote (default: the current branch's upstream remote, else origin).
    pub remote: Option<String>,
    /// Fetch and merge; push nothing.
    #[arg(long, conflicts_with_all = ["push_only", "setup"])]
    pub fetch_only: bool,
    /// Push what is ahead; fetch and merge nothing.
    #[arg(long, conflicts_with = "setup")]
    pub push_only: bool,
    /// Print the plan (what would be merged, pushed, contradicted) and change nothing.
    #[arg(long, conflicts_with = "setup")]
    pub dry_run: bool,
    /// Time limit of each network call, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = ops::DEFAULT_SYNC_TIMEOUT_SECS)]
    pub timeout: u64,
    /// Instead of syncing: add a fetch refspec so a plain `git fetch` brings lore's refs along.
    #[arg(long)]
    pub setup: bool,
    /// With --setup: also install a pre-push hook that syncs lore (it never fails your push).
    #[arg(long, requires = "setup")]
    pub hook: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &SyncArgs) -> CmdResult {
    if args.setup {
        return setup(ui, session, args);
    }
    let out = session.run(
        ui,
        ops::Sync {
            remote: args.remote.clone(),
            fetch_only: args.fetch_only,
            push_only: args.push_only,
            dry_run: args.dry_run,
            timeout_secs: Some(args.timeout),
        },
    )?;
    if args.quiet && !ui.json() {
        return Ok(());
    }
    ui.emit(&out, |s| report(s, &out));
    Ok(())
}

/// `lore sync --setup`: the fetch refspec, and with `--hook` the pre-push hook.
fn setup(ui: &mut Ui, session: &mut Session, args: &SyncArgs) -> CmdResult {
    let command = if args.hook {
        Some(
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "lore".into()),
        )
    } else {
        None
    };
    let out = session.run(
        ui,
        ops::SyncSetup {
            remote: args.remote.clone(),
            hook_command: command,
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "{} fetch refspec {} for {} (a plain `git fetch {}` now brings lore's refs along)\n",
            if out.refspec_added {
                "Added"
            } else {
                "Already had"
            },
            out.refspec,
            out.remote,
            out.remote
        ));
        if let Some(hook) = &out.hook {
            s.push_str(&format!(
                "{} the pre-push hook {}\n",
                if out.hook_added {
                    "Installed"
                } else {
                    "Already had"
                },
                hook.display()
            ));
        }
    });
    Ok(())
}

/// What a sync did (or would do): the counts, each ref that moved, and what needs a person.
fn report(s: &mut String, out: &ops::Synced) {
    let r = &out.report;
    let m = &r.memories;
    let verb = if r.dry_run { "Would sync" } else { "Synced" };
    s.push_str(&format!(
        "{verb} with {}: {} new, {} updated, {} forgotten, {}; {} pushed\n",
        r.remote,
        m.new,
        m.updated,
        m.forgotten,
        common::count(m.conflicts, "contradiction", "contradictions"),
        common::count(r.pushed, "ref", "refs"),
    ));
    for rf in &r.refs {
        if rf.action == RefAction::UpToDate && !rf.pushed {
            continue;
        }
        let action = match rf.action {
            RefAction::UpToDate => "up to date",
            RefAction::Created => "created from the remote",
            RefAction::FastForwarded => "fast-forwarded",
            RefAction::Merged => "merged",
            RefAction::Ahead => "ahead",
            RefAction::Parked => "not mergeable: the remote's version is parked beside it",
        };
        let pushed = if rf.pushed {
            if r.dry_run {
                ", would push"
            } else {
                ", pushed"
            }
        } else {
            ""
        };
        s.push_str(&format!("  {}: {action}{pushed}\n", rf.name));
    }
    if r.open_conflicts > 0 {
        s.push_str(&format!(
            "{} open: `lore conflicts` lists them, `lore resolve NAME --ours|--theirs|--both|--edit` settles one\n",
            common::count(r.open_conflicts, "contradiction is", "contradictions are")
        ));
    }
    if r.rounds > 1 {
        s.push_str(&format!(
            "(the remote moved meanwhile: took {} rounds)\n",
            r.rounds
        ));
    }
    if !r.purged.is_empty() {
        let verb = if r.dry_run { "would remove" } else { "removed" };
        s.push_str(&format!(
            "The remote's purge records {verb} {} from this clone's history: {}\n",
            common::count(r.purged.len(), "memory", "memories"),
            r.purged.join(", ")
        ));
    }
    if r.replaced_remote_history {
        let verb = if r.dry_run {
            "would replace"
        } else {
            "replaced"
        };
        s.push_str(&format!(
            "The remote's memory history held purged memories: {verb} it with the purged one (with a lease)\n"
        ));
    }
    for step in &out.next_steps {
        s.push_str(&format!("Next: {step}\n"));
    }
}
