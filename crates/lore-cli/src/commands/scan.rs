//! `lore scan`: audit stored memories, context branches and reasoning sessions for secrets and
//! point at `forget --purge`.

use clap::Args;
use lore::ops::store as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Audit stored memories for secrets (keys, tokens, private keys, passwords, <private> spans).
///
/// Scans every memory as it is now; with --history also every earlier version and every
/// forgotten memory still in lore's history. `--json` gives `clean: true|false` for scripts.
/// Remove what it finds with `lore forget --purge ID` (after rotating the secret).
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Also scan earlier versions and forgotten memories in lore's history.
    #[arg(long)]
    pub history: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ScanArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Scan {
            history: args.history,
        },
    )?;
    ui.emit(&out, |s| {
        if out.clean {
            s.push_str(if out.history {
                "No secrets in stored memories or their history, context branches or reasoning sessions.\n"
            } else {
                "No secrets in stored memories, context branches or reasoning sessions (add --history to scan earlier versions of memories).\n"
            });
            return;
        }
        for m in &out.memories {
            let when = match &m.commit {
                Some(c) => format!(" (earlier version, commit {})", common::short(c)),
                None => String::new(),
            };
            s.push_str(&format!("{} {}{when}: {}\n", m.id, m.path, m.summary));
            for f in &m.findings {
                s.push_str(&format!("  {}\n", f.describe()));
            }
        }
        for r in &out.refs {
            s.push_str(&format!(
                "{} {} (commit {}):\n",
                r.refname,
                r.path,
                common::short(&r.commit)
            ));
            for f in &r.findings {
                s.push_str(&format!("  {}\n", f.describe()));
            }
        }
        if !out.memories.is_empty() {
            s.push_str(
                "Next: rotate each secret, then `lore forget --purge ID` for each memory listed.\n",
            );
        }
        if !out.refs.is_empty() {
            s.push_str(
                "Next: rotate each secret found in a context branch or reasoning session; their \
                 history keeps it until the ref is deleted or rewritten.\n",
            );
        }
    });
    Ok(())
}
