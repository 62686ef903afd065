//! `lore scan`: audit stored memories for secrets and point at `forget --purge`.

use clap::Args;
use lore::{Lore, StoredSecret};
use serde::Serialize;

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

#[derive(Serialize)]
struct ScanOutput<'a> {
    clean: bool,
    memories: &'a [StoredSecret],
    next_step: Option<String>,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, args: &ScanArgs) -> CmdResult {
    let found = lore.scan_secrets(args.history)?;
    let next_step = (!found.is_empty()).then(|| {
        "rotate each secret, then `lore forget --purge ID` for each memory listed".to_string()
    });
    let out = ScanOutput {
        clean: found.is_empty(),
        memories: &found,
        next_step: next_step.clone(),
    };
    ui.emit(&out, |s| {
        if found.is_empty() {
            s.push_str(if args.history {
                "No secrets in stored memories or their history.\n"
            } else {
                "No secrets in stored memories (add --history to scan earlier versions).\n"
            });
            return;
        }
        for m in &found {
            let when = match &m.commit {
                Some(c) => format!(" (earlier version, commit {})", &c[..c.len().min(12)]),
                None => String::new(),
            };
            s.push_str(&format!("{} {}{when}: {}\n", m.id, m.path, m.summary));
            for f in &m.findings {
                s.push_str(&format!("  {}\n", f.describe()));
            }
        }
        if let Some(step) = &next_step {
            s.push_str(&format!("Next: {step}.\n"));
        }
    });
    Ok(())
}
