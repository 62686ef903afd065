//! `lore embedder`: show the active embedder, and reproduce the static model's distillation.

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::location;
use crate::ui::Ui;

/// Inspect the embedder, or distil the static model from a transformer.
#[derive(Args, Debug)]
pub struct EmbedderArgs {
    #[command(subcommand)]
    pub action: EmbedderAction,
}

#[derive(Subcommand, Debug)]
pub enum EmbedderAction {
    /// Show the embedder in use: tier, model, revision, dimensions, near-duplicate threshold.
    Info,
    /// Cosine similarity of two texts under the embedder (for calibrating thresholds).
    Similarity {
        /// First text.
        a: String,
        /// Second text.
        b: String,
    },
    /// Rebuild the static model from a transformer (needs a build with the teacher's feature,
    /// --features e5 or minilm; the model is found as --embedder e5 or minilm finds it).
    Distill(DistillArgs),
}

/// Options of `lore embedder distill`.
#[derive(Args, Debug)]
pub struct DistillArgs {
    /// Where to write the model file.
    #[arg(long, value_name = "FILE")]
    pub out: std::path::PathBuf,
    /// The transformer to distil from: minilm (all-MiniLM-L6-v2, the teacher of the built-in
    /// model) or e5 (multilingual-e5-small).
    #[arg(long, default_value = "minilm", value_name = "TIER")]
    pub teacher: String,
    /// Principal components to keep.
    #[arg(long, default_value_t = 256)]
    pub dims: usize,
    /// SIF coefficient a in a/(a+p).
    #[arg(long, default_value_t = 1e-5)]
    pub sif: f64,
    /// Leading principal components to drop.
    #[arg(long, default_value_t = 0)]
    pub skip_components: usize,
    /// Tab-separated sentence pairs for calibrating the near-duplicate threshold.
    #[arg(long, value_name = "FILE")]
    pub pairs: Option<std::path::PathBuf>,
}

#[derive(Serialize)]
struct Info {
    tier: String,
    model: Option<String>,
    revision: Option<String>,
    dims: Option<usize>,
    near_duplicate: Option<f32>,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &EmbedderArgs) -> CmdResult {
    match &args.action {
        EmbedderAction::Info => {
            let embedder = location::embedder(global)?;
            let info = match &embedder {
                None => Info {
                    tier: "none".into(),
                    model: None,
                    revision: None,
                    dims: None,
                    near_duplicate: None,
                },
                Some(e) => Info {
                    tier: e.id().tier.clone(),
                    model: Some(e.id().model.clone()),
                    revision: Some(e.id().revision.clone()),
                    dims: Some(e.id().dims),
                    near_duplicate: Some(e.near_duplicate()),
                },
            };
            ui.emit(&info, |s| match &embedder {
                None => s.push_str("none (lexical recall only)\n"),
                Some(e) => s.push_str(&format!(
                    "{}\nnear-duplicate at cosine >= {:.3}\n",
                    e.id(),
                    e.near_duplicate()
                )),
            });
            Ok(())
        }
        EmbedderAction::Similarity { a, b } => {
            let Some(embedder) = location::embedder(global)? else {
                return Err(crate::error::CommandError::usage(
                    "the none tier has no vectors; pick --embedder static, minilm or e5",
                ));
            };
            let v = embedder.embed(&[a.as_str(), b.as_str()])?;
            let cosine = lore::embed::dot(&v[0], &v[1]);
            let near = cosine >= embedder.near_duplicate() && lore::novelty::same_specifics(a, b);
            #[derive(Serialize)]
            struct Similarity {
                cosine: f32,
                near_duplicate: bool,
            }
            ui.emit(
                &Similarity {
                    cosine,
                    near_duplicate: near,
                },
                |s| {
                    s.push_str(&format!(
                        "{cosine:.4}{}\n",
                        if near { " (near-duplicate)" } else { "" }
                    ))
                },
            );
            Ok(())
        }
        EmbedderAction::Distill(d) => distill(ui, global, d),
    }
}

#[cfg(any(feature = "minilm", feature = "e5"))]
fn distill(ui: &mut Ui, global: &GlobalArgs, args: &DistillArgs) -> CmdResult {
    use crate::error::CommandError;
    use lore::embed::distill::{DistillOptions, distill};

    let teacher = teacher(global, &args.teacher)?;
    let pairs = match &args.pairs {
        None => Vec::new(),
        Some(path) => super::common::read_text(&path.to_string_lossy())?
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                l.split_once('\t')
                    .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                    .ok_or_else(|| {
                        CommandError::usage(format!(
                            "{}: expected two tab-separated sentences per line, got {l:?}",
                            path.display()
                        ))
                    })
            })
            .collect::<CmdResult<Vec<_>>>()?,
    };
    let report = distill(
        teacher.as_ref(),
        &DistillOptions {
            dims: args.dims,
            sif: args.sif,
            skip: args.skip_components,
            pairs,
        },
    )?;
    std::fs::write(&args.out, &report.bytes)
        .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", args.out.display())))?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "wrote {} ({} bytes): {} tokens x {} dims, revision {}\n\
             explained variance {:.3}; near-duplicate threshold {:.3}, relevance floor {:.3} \
             (static vs transformer cosine r = {:.3} on {} pairs)\n",
            args.out.display(),
            report.bytes.len(),
            report.header.vocab,
            report.header.dims,
            report.header.revision,
            report.explained_variance,
            report.header.near_duplicate,
            report.header.relevance_floor,
            report.pair_correlation,
            report.pairs,
        ))
    });
    Ok(())
}

/// The transformer named by `--teacher`, loaded.
#[cfg(any(feature = "minilm", feature = "e5"))]
fn teacher(global: &GlobalArgs, name: &str) -> CmdResult<Box<dyn lore::embed::distill::Teacher>> {
    use crate::error::CommandError;
    // Used by the arm of a feature this build lacks.
    #[allow(dead_code)]
    fn unavailable(feature: &str) -> CommandError {
        CommandError::usage(format!(
            "this lore was built without the {feature} transformer"
        ))
        .hint(format!("cargo build --release --features {feature}"))
    }
    match name {
        #[cfg(feature = "e5")]
        "e5" => Ok(Box::new(lore::embed::e5::E5::load(&location::e5_dir(
            global,
        )?)?)),
        #[cfg(not(feature = "e5"))]
        "e5" => Err(unavailable("e5")),
        #[cfg(feature = "minilm")]
        "minilm" => Ok(Box::new(lore::embed::minilm::MiniLm::load(
            &location::minilm_dir(global)?,
        )?)),
        #[cfg(not(feature = "minilm"))]
        "minilm" => Err(unavailable("minilm")),
        other => Err(CommandError::usage(format!(
            "--teacher {other}: expected e5 or minilm"
        ))),
    }
}

#[cfg(not(any(feature = "minilm", feature = "e5")))]
fn distill(_: &mut Ui, _: &GlobalArgs, _: &DistillArgs) -> CmdResult {
    Err(crate::error::CommandError::usage(
        "this lore was built without a transformer; distilling needs one",
    )
    .hint("cargo build --release --features minilm"))
}
