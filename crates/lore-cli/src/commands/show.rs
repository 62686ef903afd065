//! `lore show`: one memory, hydrated to the level asked for.

use clap::{Args, ValueEnum};
use lore::ops::memory as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// How much of a memory to show.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Level {
    /// The summary line and metadata.
    Summary,
    /// Also the body.
    Full,
    /// Also the cited files at their blobs (or the files the anchor commit changed).
    Files,
}

/// Show a memory by id (or unique id prefix of 4+ characters), `namespace/key`, or key.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// Hydration level.
    #[arg(long, value_enum, default_value_t = Level::Full)]
    pub level: Level,
    /// With `--level files`: at most this many files.
    #[arg(long, default_value_t = 10)]
    pub max_files: usize,
    /// With `--level files`: at most this many bytes per file.
    #[arg(long, default_value_t = 16 * 1024)]
    pub max_bytes: usize,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ShowArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Show {
            memory: args.memory.clone(),
            level: match args.level {
                Level::Summary => ops::Level::Summary,
                Level::Full => ops::Level::Full,
                Level::Files => ops::Level::Files,
            },
            max_files: Some(args.max_files),
            max_bytes: Some(args.max_bytes),
        },
    )?;
    ui.emit(&out, |s| {
        common::memory_header(s, &out.memory);
        if out.level != ops::Level::Summary && !out.memory.body.is_empty() {
            s.push('\n');
            s.push_str(&lore::agent_text::neutralize(&out.memory.body));
            if !out.memory.body.ends_with('\n') {
                s.push('\n');
            }
        }
        for f in out.files.iter().flatten() {
            let lines = f.lines.map(|l| format!(":{l}")).unwrap_or_default();
            s.push_str(&format!("\n--- {}{lines} ({})\n", f.path, f.source));
            match (&f.content, &f.note) {
                (Some(c), _) => {
                    s.push_str(c);
                    if !c.ends_with('\n') {
                        s.push('\n');
                    }
                    if f.truncated {
                        s.push_str("[… truncated]\n");
                    }
                }
                (None, Some(n)) => s.push_str(&format!("[{n}]\n")),
                (None, None) => {}
            }
        }
    });
    Ok(())
}
