//! `lore recall`: hybrid search (BM25 + vectors) with recency, namespace and status weights.

use clap::Args;
use lore::index::{Fusion, RankOptions};
use lore::{Hit, Lore};

use super::common;
use super::list::FilterArgs;
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
    pub filter: FilterArgs,
    /// At most this many results.
    #[arg(long, short = 'l', default_value_t = 10)]
    pub limit: usize,
    #[command(flatten)]
    pub rank: RankArgs,
    /// Show each hit's ranking components (BM25, cosine, ranks, weights).
    #[arg(long)]
    pub explain: bool,
}

/// Ranking options shared by `recall`, `context` and `eval`.
#[derive(Args, Debug, Clone)]
pub struct RankArgs {
    /// How BM25 and vector rankings are combined: rrf (reciprocal rank) or score (calibrated
    /// scores).
    #[arg(long, default_value = "score", value_parser = ["rrf", "score"])]
    pub fusion: String,
    /// Weight of BM25 in score fusion (the vector part gets the rest).
    #[arg(long, value_name = "W", default_value_t = 0.5)]
    pub lexical_weight: f64,
    /// Share of the score that decays with age (0 turns recency off).
    #[arg(long, value_name = "W", default_value_t = 0.2)]
    pub recency_weight: f64,
    /// Recency half-life in days (0 turns recency off).
    #[arg(long, value_name = "DAYS", default_value_t = 90.0)]
    pub half_life: f64,
    /// Namespace weight, e.g. decisions=1.2 (repeatable; default 1).
    #[arg(long = "ns-weight", value_name = "NS=W")]
    pub ns_weight: Vec<String>,
    /// Keep near-duplicate memories as separate hits.
    #[arg(long)]
    pub no_collapse: bool,
}

impl RankArgs {
    /// The ranking options these flags ask for.
    pub fn options(&self) -> CmdResult<RankOptions> {
        let defaults = RankOptions::default();
        let fusion = match self.fusion.as_str() {
            "rrf" => Fusion::Rrf { k: 60.0 },
            _ => Fusion::Score {
                lexical: self.lexical_weight,
            },
        };
        for (name, w) in [
            ("--lexical-weight", self.lexical_weight),
            ("--recency-weight", self.recency_weight),
        ] {
            if !(0.0..=1.0).contains(&w) {
                return Err(CommandError::usage(format!(
                    "{name} {w}: expected a number from 0 to 1"
                )));
            }
        }
        if !(self.half_life.is_finite() && self.half_life >= 0.0) {
            return Err(CommandError::usage(format!(
                "--half-life {}: expected a number of days, 0 or more",
                self.half_life
            )));
        }
        let mut namespace_weights = Vec::new();
        for w in &self.ns_weight {
            let parsed = w
                .split_once('=')
                .and_then(|(ns, v)| v.trim().parse::<f64>().ok().map(|v| (ns.trim(), v)))
                .filter(|(ns, v)| !ns.is_empty() && v.is_finite() && *v >= 0.0);
            match parsed {
                Some((ns, v)) => namespace_weights.push((ns.to_string(), v)),
                None => {
                    return Err(CommandError::usage(format!(
                        "--ns-weight {w:?}: expected NAMESPACE=WEIGHT, e.g. decisions=1.2"
                    )));
                }
            }
        }
        Ok(RankOptions {
            fusion,
            half_life_days: (self.half_life > 0.0).then_some(self.half_life),
            recency_weight: self.recency_weight,
            namespace_weights,
            collapse: !self.no_collapse,
            ..defaults
        })
    }
}

pub fn run(ui: &mut Ui, lore: &mut Lore, args: &RecallArgs) -> CmdResult {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(CommandError::usage(
            "give something to recall: lore recall <words>",
        ));
    }
    let mut filter = args.filter.to_filter()?;
    filter.limit = Some(args.limit.max(1));
    let options = args.rank.options()?;
    let hits: Vec<Hit> = lore.search(&query, &filter, &options, args.explain)?;
    ui.emit(&hits, |s| {
        if hits.is_empty() {
            s.push_str("Nothing relevant found.\n");
        }
        for h in &hits {
            let mark = if h.near_duplicate { "≈" } else { " " };
            s.push_str(&format!("{:>7.4}{mark} ", h.score));
            common::memory_line(s, &h.memory);
            if let Some(reason) = &h.stale {
                s.push_str(&format!("          stale: {reason}\n"));
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
                    "          bm25 {} (#{}), cosine {} (#{}), fused {:.4} × recency {:.3} × namespace {:.2} × status {:.2}\n",
                    part(x.bm25.map(|v| format!("{v:.3}"))),
                    part(x.bm25_rank.map(|v| v.to_string())),
                    part(x.cosine.map(|v| format!("{v:.3}"))),
                    part(x.vector_rank.map(|v| v.to_string())),
                    x.fused,
                    x.recency,
                    x.namespace,
                    x.status
                ));
            }
        }
    });
    Ok(())
}
