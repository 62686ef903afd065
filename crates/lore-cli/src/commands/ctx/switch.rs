//! `lore ctx switch`: makes another context branch current, warning about uncommitted steps
//! left behind.

use clap::Args;
use lore::ops::ctx as ops;

use crate::commands::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct SwitchArgs {
    /// The branch.
    pub name: String,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &SwitchArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxSwitch {
            name: args.name.clone(),
        },
    )?;
    if out.uncommitted_left > 0 {
        ui.warn(&format!(
            "the branch left behind has {} (kept in its journal)",
            common::count(
                out.uncommitted_left,
                "uncommitted step",
                "uncommitted steps"
            )
        ));
    }
    ui.emit(&out, |s| {
        s.push_str(&format!("now on branch {}\n", out.branch))
    });
    Ok(())
}
