//! `lore recall`: hybrid search (BM25 + vectors) with recency, namespace and status weights.

use clap::Args;
use lore::ops::memory as ops;

use super::common::{self, Session};
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Find memories relevant to a query: BM25 (summary ×3, tags ×2, body ×1) fused with vector
/// similarity from the embedder, weighted by recency, namespace and status. Near-duplicates of
/// one another are folded together; hits that nearly repeat the query are flagged.
#[derive(Args, Debug)]
pub struct RecallArgs {
    /// What to look for, in plain words.
    pub query: Vec<String>,
    #[command(flatten)]
    pub filter: common::FilterArgs,
    /// At most this many results.
    #[arg(long, short = 'l', default_value_t = 10)]
    pub limit: usize,
    #[command(flatten)]
    pub rank: common::RankArgs,
    /// Show each hit's ranking components (BM25, cosine, ranks, weights).
    #[arg(long)]
    pub explain: bool,
    /// Include each memory's body in --json output (default: summaries only).
    #[arg(long)]
    pub bodies: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &RecallArgs) -> CmdResult {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(CommandError::usage(
            "give something to recall: lore recall <words>",
        ));
    }
    let out = session.run(
        ui,
        ops::Recall {
            query,
            filter: args.filter.filter(),
            limit: Some(args.limit),
            ranking: args.rank.ranking()?,
            explain: args.explain,
            bodies: args.bodies,
            scope: None,
        },
    )?;
    let hits = &out.hits;
    ui.emit(&out, |s| {
        if let Some(w) = &out.time_window {
            let how = match w.usage {
                lore::index::time_window::WindowUse::Filter => "only memories written then",
                lore::index::time_window::WindowUse::Boost => "memories written near then first",
            };
            s.push_str(&format!(
                "time: {:?} read as {} .. {}: {how}\n",
                lore::agent_text::neutralize_controls(&w.phrase),
                local_time(w.start),
                local_time(w.end)
            ));
        }
        if hits.is_empty() {
            s.push_str("Nothing relevant found.\n");
        }
        for h in hits {
            let mark = if h.near_duplicate { "≈" } else { " " };
            s.push_str(&format!("{:>7.4}{mark} ", h.score));
            if out.scopes.len() > 1 {
                let label = match &h.project {
                    Some(p) => format!("project {p}"),
                    None => h.scope.clone(),
                };
                s.push_str(&format!("[{}] ", lore::agent_text::neutralize_controls(&label)));
            }
            common::memory_line(s, &h.memory);
            if let Some(reason) = &h.stale {
                s.push_str(&format!("          stale: {reason}\n"));
            }
            if let Some(name) = &h.contradicted {
                s.push_str(&format!(
                    "          contradicted: another version exists (`lore conflicts`, {name})\n"
                ));
            }
            if !h.duplicates.is_empty() {
                s.push_str(&format!(
                    "          near-duplicates folded in: {}\n",
                    h.duplicates.join(", ")
                ));
            }
            if let Some(x) = &h.explain {
                let part = |v: Option<String>| v.unwrap_or_else(|| "-".into());
                s.push_str(&format!(
                    "          bm25 {} (#{}), cosine {} (#{}), fused {:.4} × recency {:.3} × namespace {:.2} × status {:.2}{}{}{}\n",
                    part(x.bm25.map(|v| format!("{v:.3}"))),
                    part(x.bm25_rank.map(|v| v.to_string())),
                    part(x.cosine.map(|v| format!("{v:.3}"))),
                    part(x.vector_rank.map(|v| v.to_string())),
                    x.fused,
                    x.recency,
                    x.namespace,
                    x.status,
                    x.time.map(|t| format!(" × time {t:.2}")).unwrap_or_default(),
                    x.supersedes
                        .as_ref()
                        .map(|old| format!(" (raised above {old}, which it supersedes)"))
                        .unwrap_or_default(),
                    x.beside
                        .as_ref()
                        .map(|hit| format!(" (written beside {hit}, a strong hit in its session)"))
                        .unwrap_or_default()
                ));
            }
        }
    });
    Ok(())
}

/// A window's edge in the user's time zone ("the beginning" for an open start).
fn local_time(t: jiff::Timestamp) -> String {
    if t == jiff::Timestamp::MIN {
        return "the beginning".into();
    }
    t.to_zoned(jiff::tz::TimeZone::system())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}
