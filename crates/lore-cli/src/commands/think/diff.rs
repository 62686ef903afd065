//! `lore think diff`: compares two thoughts' reasoning line by line.

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first thought.
    pub from: String,
    /// The second thought.
    pub to: String,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &DiffArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkDiff {
            from: args.from.clone(),
            to: args.to.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "--- {} score {:.2}\n+++ {} score {:.2}\n",
            short(&out.from),
            out.from_scores.combined,
            short(&out.to),
            out.to_scores.combined
        ));
        for line in &out.lines {
            match line.origin {
                '@' => s.push_str(&format!("{}\n", line.text)),
                o => s.push_str(&format!("{o}{}\n", line.text)),
            }
        }
    });
    Ok(())
}
