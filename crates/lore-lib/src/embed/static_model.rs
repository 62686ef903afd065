//! The static embedder: a token-embedding table (distilled from all-MiniLM-L6-v2) compiled in.
//!
//! A text's vector is the mean of its WordPiece tokens' rows, normalised. The rows already carry
//! the distillation's token weights, so no model runs at query time: no download, no load pause.
//!
//! File format (little-endian): the magic `LORESTE1`; a `u32` length and a JSON header
//! ([`StaticHeader`]); the vocabulary as `u16` length + UTF-8 bytes per token in id order; one
//! `f32` scale per token; then `vocab × dims` `i8` components (row `t` ≈ values × scale).

use std::borrow::Cow;
use std::sync::OnceLock;

use super::wordpiece::WordPiece;
use super::{ChunkPolicy, Embedder, EmbedderId, normalize};
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"LORESTE1";

/// The distilled model shipped with lore (see `assets/README.md` for its provenance).
static BUILTIN: &[u8] = include_bytes!("../../assets/static-minilm-l6-v2.bin");

/// What a static model file says about itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StaticHeader {
    /// The model it was distilled from.
    pub model: String,
    /// A hash of the table's contents.
    pub revision: String,
    /// Vector length.
    pub dims: usize,
    /// Number of tokens.
    pub vocab: usize,
    /// Copyability threshold for this model's cosines (calibrated at distillation).
    pub near_duplicate: f32,
    /// Cosine below which a text is unrelated to a query (the static cosine the calibration
    /// maps to a transformer cosine of 0.25).
    pub relevance_floor: f32,
    /// How the table was made (for people reading the header).
    pub recipe: String,
}

/// The vocabulary's tokens in id order, each with the offset after it (`None`: cut short).
fn vocabulary(
    bytes: &[u8],
    mut at: usize,
    count: usize,
) -> impl Iterator<Item = Option<(&str, usize)>> {
    (0..count).map(move |_| {
        let len = bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)?;
        let token = std::str::from_utf8(bytes.get(at + 2..at + 2 + len)?).ok()?;
        at += 2 + len;
        Some((token, at))
    })
}

/// A loaded static model. Opening one only checks the file's structure; the tokenizer's tables
/// are built on the first text embedded (commands that embed nothing never pay for them).
pub struct StaticEmbedder {
    id: EmbedderId,
    header: StaticHeader,
    bytes: Cow<'static, [u8]>,
    vocab_at: usize,
    scales_at: usize,
    values_at: usize,
    tokenizer: OnceLock<WordPiece>,
}

impl StaticEmbedder {
    /// The model compiled into lore.
    pub fn builtin() -> Result<StaticEmbedder> {
        Self::parse(Cow::Borrowed(BUILTIN)).map_err(|e| Error::Embedder {
            message: format!("the built-in static model is unusable: {e}"),
        })
    }

    /// Reads a model file's bytes.
    pub fn parse(bytes: Cow<'static, [u8]>) -> Result<StaticEmbedder> {
        let bad = |what: &str| Error::Embedder {
            message: format!("not a static model file: {what}"),
        };
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(bad("wrong magic"));
        }
        let header_len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let vocab_at = 12 + header_len;
        let header: StaticHeader = bytes
            .get(12..vocab_at)
            .and_then(|h| serde_json::from_slice(h).ok())
            .ok_or_else(|| bad("unreadable header"))?;
        let mut unknown = false;
        let mut at = vocab_at;
        for token in vocabulary(&bytes, vocab_at, header.vocab) {
            let (token, next) = token.ok_or_else(|| bad("vocabulary cut short"))?;
            unknown |= token == "[UNK]";
            at = next;
        }
        if !unknown {
            return Err(bad("no [UNK] token"));
        }
        let scales_at = at;
        let values_at = scales_at + 4 * header.vocab;
        if bytes.len() != values_at + header.vocab * header.dims {
            return Err(bad("table size does not match the header"));
        }
        Ok(StaticEmbedder {
            id: EmbedderId {
                tier: "static".into(),
                model: header.model.clone(),
                revision: header.revision.clone(),
                dims: header.dims,
            },
            header,
            bytes,
            vocab_at,
            scales_at,
            values_at,
            tokenizer: OnceLock::new(),
        })
    }

    /// Writes a model file.
    pub fn write(header: &StaticHeader, tokens: &[String], rows: &[Vec<f32>]) -> Result<Vec<u8>> {
        let mut out = MAGIC.to_vec();
        let json = serde_json::to_vec(header).map_err(|e| Error::Embedder {
            message: e.to_string(),
        })?;
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        for t in tokens {
            out.extend_from_slice(&(t.len() as u16).to_le_bytes());
            out.extend_from_slice(t.as_bytes());
        }
        let quantized: Vec<super::Quantized> =
            rows.iter().map(|r| super::Quantized::new(r)).collect();
        for q in &quantized {
            out.extend_from_slice(&q.scale.to_le_bytes());
        }
        for q in &quantized {
            out.extend(q.values.iter().map(|&x| x as u8));
        }
        Ok(out)
    }

    /// The model's header.
    pub fn header(&self) -> &StaticHeader {
        &self.header
    }

    /// The tokenizer (built on first use).
    pub fn tokenizer(&self) -> &WordPiece {
        self.tokenizer.get_or_init(|| {
            let tokens = vocabulary(&self.bytes, self.vocab_at, self.header.vocab)
                .map(|t| t.expect("checked when the model was opened").0);
            WordPiece::new(tokens).expect("[UNK] checked when the model was opened")
        })
    }

    /// Embeds one text into `out` (which must be `dims` long); returns how many tokens it had.
    pub fn embed_into(&self, text: &str, ids: &mut Vec<u32>, out: &mut [f32]) -> usize {
        ids.clear();
        self.tokenizer().encode_into(text, ids);
        out.fill(0.0);
        let dims = self.header.dims;
        for &id in ids.iter() {
            let id = id as usize;
            let at = self.scales_at + 4 * id;
            let scale = f32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"));
            let start = self.values_at + id * dims;
            let row = &self.bytes[start..start + dims];
            for (acc, &q) in out.iter_mut().zip(row) {
                *acc += (q as i8) as f32 * scale;
            }
        }
        normalize(out);
        ids.len()
    }
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut ids = Vec::new();
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.header.dims];
                self.embed_into(t, &mut ids, &mut v);
                v
            })
            .collect())
    }

    fn chunking(&self) -> ChunkPolicy {
        ChunkPolicy {
            words: 48,
            overlap: 16,
            max_chunks: 64,
        }
    }

    fn near_duplicate(&self) -> f32 {
        self.header.near_duplicate
    }

    fn relevance_floor(&self) -> f32 {
        self.header.relevance_floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_model_opens_and_embeds_unit_vectors() {
        let e = StaticEmbedder::builtin().unwrap();
        assert_eq!(e.id().dims, e.header().dims);
        let v = e
            .embed(&["Use PostgreSQL for the main datastore", ""])
            .unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
        assert!(v[1].iter().all(|&x| x == 0.0), "no tokens, no direction");
    }

    #[test]
    fn damaged_model_files_are_refused() {
        for bytes in [
            b"not a model".to_vec(),
            BUILTIN[..BUILTIN.len() - 1].to_vec(),
            BUILTIN[..5000].to_vec(),
        ] {
            let err = StaticEmbedder::parse(Cow::Owned(bytes)).err().unwrap();
            assert!(err.to_string().contains("not a static model file"), "{err}");
        }
    }
}
