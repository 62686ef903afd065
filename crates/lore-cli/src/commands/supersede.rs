//! `lore supersede`: replace a memory by a new one, linking both.

use clap::Args;
use lore::ops::memory as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Replace a memory with a new one, linking both.
///
/// The old one is marked superseded (and points to the new); the new one records what it
/// supersedes. A keyed memory's key passes to the new memory. What is not given (body, tags,
/// citations, confidence) is carried over from the old memory.
#[derive(Args, Debug)]
pub struct SupersedeArgs {
    /// The memory to replace: id, id prefix, `namespace/key` or key.
    pub memory: String,
    #[command(flatten)]
    pub message: common::MessageArgs,
    /// Namespace of the new memory (default: the old one's).
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Tags of the new memory.
    #[arg(long = "tag", short = 't', value_name = "TAG")]
    pub tags: Vec<String>,
    /// Citations of the new memory.
    #[arg(long = "cite", value_name = "PATH[:LINES]")]
    pub cites: Vec<String>,
    /// Confidence of the new memory.
    #[arg(long)]
    pub confidence: Option<f64>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &SupersedeArgs) -> CmdResult {
    let (summary, body) = args.message.read()?;
    let request = ops::Supersede {
        memory: args.memory.clone(),
        summary,
        body: Some(body).filter(|b| !b.is_empty()),
        namespace: args.namespace.clone(),
        tags: args.tags.clone(),
        cites: common::cite_specs(&session.lore, &args.cites)?,
        confidence: args.confidence,
    };
    let result = session.run(ui, request)?;
    common::report_secrets(ui, result.new.secrets.as_ref());
    ui.emit(&result, |s| {
        s.push_str(&format!(
            "Superseded {} by {} ({}) at {}\n",
            result.old.memory.id,
            result.new.memory.id,
            result.new.path,
            common::short(&result.new.commit)
        ));
    });
    Ok(())
}
