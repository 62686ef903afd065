//! The full all-MiniLM-L6-v2 transformer via candle (the `minilm` feature).
//!
//! Reads `config.json`, `tokenizer.json` and `model.safetensors` from a model directory, and
//! embeds as sentence-transformers does: tokens truncated to 256, mean pooling over the
//! attention mask, L2 normalisation.

use std::path::Path;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

use super::{ChunkPolicy, Embedder, EmbedderId, content_hash, normalize};
use crate::error::{Error, Result};

/// sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;
/// Transformer cosine from which texts count as related (unrelated pairs in
/// `assets/calibration-pairs.tsv` score below 0.1, related ones 0.17–0.48).
pub const RELATED: f32 = 0.25;
/// Texts per forward pass.
const BATCH: usize = 32;

/// The loaded transformer.
pub struct MiniLm {
    id: EmbedderId,
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Embedder {
        message: format!("minilm: {what}: {e}"),
    }
}

impl MiniLm {
    /// Loads the model from a directory holding `config.json`, `tokenizer.json` and
    /// `model.safetensors`.
    pub fn load(dir: &Path) -> Result<MiniLm> {
        let read = |name: &str| {
            std::fs::read(dir.join(name))
                .map_err(|e| failed(&format!("reading {}", dir.join(name).display()), e))
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| failed("parsing config.json", e))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| failed("reading tokenizer.json", e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| failed("configuring the tokenizer", e))?;
        tokenizer.with_padding(None);
        let weights = read("model.safetensors")?;
        let revision = content_hash(&weights);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| failed("reading model.safetensors", e))?;
        let model = BertModel::load(vb, &config).map_err(|e| failed("loading the model", e))?;
        Ok(MiniLm {
            id: EmbedderId {
                tier: "minilm".into(),
                model: "all-MiniLM-L6-v2".into(),
                revision,
                dims: config.hidden_size,
            },
            model,
            tokenizer,
            device,
        })
    }

    /// The reference tokenizer (for checking the static embedder's own).
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Token ids of `text` with `[CLS]`/`[SEP]`, truncated as the model expects.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| failed("tokenizing", e))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Mean-pooled (not normalised) outputs for sequences of token ids, one forward pass.
    pub fn pooled(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        super::bert::pooled(batch, 0, &self.device, |ids, mask| {
            self.model.forward(ids, &ids.zeros_like()?, Some(mask))
        })
        .map_err(|e| failed("running the model", e))
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let seqs = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<Vec<_>>>()?;
        let mut out =
            super::bert::by_length(&seqs, BATCH, BATCH * MAX_TOKENS, |batch| self.pooled(batch))?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }

    fn chunking(&self) -> ChunkPolicy {
        super::bert::CHUNKING
    }

    fn near_duplicate(&self) -> f32 {
        // GitOfThoughts' copyability threshold, measured with this model.
        0.8
    }

    fn relevance_floor(&self) -> f32 {
        RELATED
    }
}
