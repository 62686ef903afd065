//! `lore conflicts` and `lore resolve`: the open contradictions sync found, and settling one.

use clap::Args;
use lore::ConflictVersion;
use lore::ops::sync as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// List open contradictions: memories two clones or agents changed in contradicting ways.
///
/// The version in force stays live (recall and context flag it as contradicted); every other
/// version is shown with its author, agent, session, date and commit.
#[derive(Args, Debug)]
pub struct ConflictsArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &ConflictsArgs) -> CmdResult {
    let out = session.run(ui, ops::Conflicts {})?;
    ui.emit(&out, |s| {
        if out.conflicts.is_empty() {
            s.push_str("No open contradictions.\n");
            return;
        }
        for c in &out.conflicts {
            s.push_str(&format!(
                "{} — {} (found {})\n",
                c.name,
                c.description,
                short_date(&c.detected)
            ));
            match &c.live {
                Some(v) => version(s, "in force", v),
                None => s.push_str("  in force: nothing (forgotten)\n"),
            }
            for v in &c.others {
                version(s, "other", v);
            }
            if let Some(b) = &c.base {
                version(s, "base", b);
            }
            s.push_str(&format!(
                "  settle: lore resolve {} --ours | --theirs | --both | --edit --summary …\n\n",
                c.name
            ));
        }
    });
    Ok(())
}

fn version(s: &mut String, label: &str, v: &ConflictVersion) {
    let mut who: Vec<String> = Vec::new();
    who.extend(v.author.clone());
    who.extend(v.agent.as_ref().map(|a| format!("agent {a}")));
    who.extend(v.session.as_ref().map(|x| format!("session {x}")));
    who.extend(v.date.as_deref().map(short_date));
    who.extend(
        v.commit
            .as_deref()
            .map(|c| format!("commit {}", common::short(c))),
    );
    let what = if v.forgotten {
        "forgot it".to_string()
    } else {
        v.summary.clone().unwrap_or_default()
    };
    s.push_str(&format!(
        "  {label} [{}]: {what}\n    ({})\n",
        v.id,
        who.join(", ")
    ));
    if let Some(body) = v.body.as_deref().filter(|b| !b.trim().is_empty()) {
        for line in body.lines().take(6) {
            s.push_str(&format!("    | {line}\n"));
        }
    }
}

fn short_date(d: &str) -> String {
    d.get(..16).unwrap_or(d).replace('T', " ")
}

/// Settle an open contradiction (recorded as one commit; sync carries it to every clone).
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("keep").required(true).args(["ours", "theirs", "both", "edit"])))]
pub struct ResolveArgs {
    /// The contradiction: its name (decisions/db-engine), key, or the id of any version.
    pub conflict: String,
    /// Keep the version in force; the others are recorded as superseded by it.
    #[arg(long)]
    pub ours: bool,
    /// Take the other version (ID picks one when there are several); the one in force is superseded.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub theirs: Option<String>,
    /// Keep both: the other memory stays beside it without the key.
    #[arg(long)]
    pub both: bool,
    /// Replace the version in force with --summary and/or --body.
    #[arg(long)]
    pub edit: bool,
    /// With --edit: the new summary.
    #[arg(long, requires = "edit")]
    pub summary: Option<String>,
    /// With --edit: the new body.
    #[arg(long, requires = "edit")]
    pub body: Option<String>,
}

pub fn run_resolve(ui: &mut Ui, session: &mut Session, args: &ResolveArgs) -> CmdResult {
    let keep = if args.ours {
        ops::Keep::Ours
    } else if args.theirs.is_some() {
        ops::Keep::Theirs
    } else if args.both {
        ops::Keep::Both
    } else {
        ops::Keep::Edit
    };
    let out = session.run(
        ui,
        ops::Resolve {
            conflict: args.conflict.clone(),
            keep,
            id: args.theirs.clone().filter(|t| !t.is_empty()),
            summary: args.summary.clone(),
            body: args.body.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        let now = match &out.memory {
            Some(m) => format!("in force: [{}] {}", m.id, m.summary),
            None => "the memory is forgotten".into(),
        };
        s.push_str(&format!(
            "Resolved {} ({}) at {}; {now}\n",
            out.name,
            out.resolution,
            common::short(&out.commit)
        ));
    });
    Ok(())
}
