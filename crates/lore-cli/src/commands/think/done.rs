//! `lore think done`: finishes a session — merges the best path, sets `best`, keeps a lesson.

use clap::Args;
use lore::ops::thoughts as ops;
use lore::thoughts::short;

use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct DoneArgs {
    /// The session (default: --session, else `default`).
    #[arg(long = "in", value_name = "SESSION")]
    pub in_session: Option<String>,
    /// The best thought (default: the best-scored success, else the best-scored leaf).
    #[arg(long)]
    pub best: Option<String>,
    /// The final answer (kept in done.json, refused inside the lesson).
    #[arg(long)]
    pub answer: Option<String>,
    /// The lesson's topic (a key: a-z, 0-9, '-').
    #[arg(long, requires = "lesson")]
    pub topic: Option<String>,
    /// The lesson: answer-free advice for next time.
    #[arg(long, requires = "topic")]
    pub lesson: Option<String>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &DoneArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkDone {
            session: args.in_session.clone(),
            best: args.best.clone(),
            answer: args.answer.clone(),
            topic: args.topic.clone(),
            lesson: args.lesson.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Finished {}: best thought {}\n",
            out.session,
            short(&out.best)
        ));
        if let Some(lesson) = &out.lesson {
            s.push_str(&format!("Lesson kept at {}\n", lesson.path));
        }
    });
    Ok(())
}
