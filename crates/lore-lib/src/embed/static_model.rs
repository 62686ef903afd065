//! The static embedder: a token-embedding table (distilled from all-MiniLM-L6-v2) compiled in.
//!
//! A text's vector is the mean of its WordPiece tokens' rows, normalised. The rows already carry
//! the distillation's token weights, so no model runs at query time: no download, no load pause.
//!
//! File format (little-endian): the magic `LORESTE1`; a `u32` length and a JSON header
//! ([`StaticHeader`]); the vocabulary as `u16` length + UTF-8 bytes per token in id order; one
//! `f32` scale per token; then `vocab × dims` `i8` components (row `t` ≈ values × scale); then,
//! optionally, the tokenizer's lookup tables ([`wordpiece::stored_tables`]), so a process reads
//! them in place instead of building them. The revision hashes the file without the tables.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::wordpiece::{self, ModelBytes, WordPiece};
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
/// are read in place when the file stores them (the built-in model does), else built on the
/// first text embedded (commands that embed nothing never pay for them).
pub struct StaticEmbedder {
    id: EmbedderId,
    header: StaticHeader,
    bytes: ModelBytes,
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

    /// A model file made by `lore embedder distill` (to measure one before it is compiled in).
    pub fn load(path: &std::path::Path) -> Result<StaticEmbedder> {
        let bytes = std::fs::read(path).map_err(|e| Error::Embedder {
            message: format!("cannot read the static model {}: {e}", path.display()),
        })?;
        Self::parse(Cow::Owned(bytes))
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
        let builtin = matches!(bytes, Cow::Borrowed(b) if std::ptr::eq(b, BUILTIN));
        let bytes = match bytes {
            Cow::Borrowed(b) => ModelBytes::Builtin(b),
            Cow::Owned(v) => ModelBytes::Loaded(v.into()),
        };
        let table_len = header
            .vocab
            .checked_mul(
                header
                    .dims
                    .checked_add(4)
                    .ok_or_else(|| bad("impossible sizes"))?,
            )
            .ok_or_else(|| bad("impossible sizes"))?;
        let stored = WordPiece::stored(bytes.clone(), header.vocab);
        let values_end = stored.as_ref().map_or(bytes.len(), |(_, at)| *at);
        let scales_at = values_end
            .checked_sub(table_len)
            .filter(|&at| at >= vocab_at)
            .ok_or_else(|| bad("table size does not match the header"))?;
        // The compiled-in model's tables are checked by its tests; any other file's are checked
        // here against its vocabulary.
        if !builtin || stored.is_none() {
            let mut unknown = false;
            let mut at = vocab_at;
            let mut starts = Vec::with_capacity(header.vocab);
            let mut tokens = Vec::with_capacity(header.vocab);
            for token in vocabulary(&bytes, vocab_at, header.vocab) {
                let (token, next) = token.ok_or_else(|| bad("vocabulary cut short"))?;
                unknown |= token == "[UNK]";
                starts.push((next - token.len()) as u32);
                tokens.push(token);
                at = next;
            }
            if !unknown {
                return Err(bad("no [UNK] token"));
            }
            if at != scales_at {
                return Err(bad("table size does not match the header"));
            }
            if stored.is_some() && bytes[values_end..] != wordpiece::stored_tables(&tokens, &starts)
            {
                return Err(bad("its tokenizer tables do not match its vocabulary"));
            }
        }
        let values_at = scales_at + 4 * header.vocab;
        let tokenizer = OnceLock::new();
        if let Some((pieces, _)) = stored {
            let _ = tokenizer.set(pieces);
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
            tokenizer,
        })
    }

    /// Writes a model file, the tokenizer's lookup tables included.
    pub fn write(header: &StaticHeader, tokens: &[String], rows: &[Vec<f32>]) -> Result<Vec<u8>> {
        let (mut out, starts) = Self::write_table(header, tokens, rows)?;
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        out.extend(wordpiece::stored_tables(&tokens, &starts));
        Ok(out)
    }

    /// A model file without the tokenizer's lookup tables: what the revision hashes.
    pub fn write_rows(
        header: &StaticHeader,
        tokens: &[String],
        rows: &[Vec<f32>],
    ) -> Result<Vec<u8>> {
        Ok(Self::write_table(header, tokens, rows)?.0)
    }

    /// The file up to the tables, with the offset of each token's bytes.
    fn write_table(
        header: &StaticHeader,
        tokens: &[String],
        rows: &[Vec<f32>],
    ) -> Result<(Vec<u8>, Vec<u32>)> {
        let mut out = MAGIC.to_vec();
        let json = serde_json::to_vec(header).map_err(|e| Error::Embedder {
            message: e.to_string(),
        })?;
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        let mut starts = Vec::with_capacity(tokens.len());
        for t in tokens {
            out.extend_from_slice(&(t.len() as u16).to_le_bytes());
            starts.push(out.len() as u32);
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
        Ok((out, starts))
    }

    /// The model's header.
    pub fn header(&self) -> &StaticHeader {
        &self.header
    }

    /// The vocabulary, in id order.
    pub fn tokens(&self) -> impl Iterator<Item = &str> {
        vocabulary(&self.bytes, self.vocab_at, self.header.vocab)
            .map(|t| t.expect("checked when the model was opened").0)
    }

    /// The tokenizer (read in place, or built on first use).
    pub fn tokenizer(&self) -> &WordPiece {
        self.tokenizer.get_or_init(|| {
            WordPiece::new(self.tokens()).expect("[UNK] checked when the model was opened")
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

    /// The vocabulary of a model file, each token with the offset of its bytes.
    fn tokens_of(e: &StaticEmbedder) -> (Vec<&str>, Vec<u32>) {
        vocabulary(&e.bytes, e.vocab_at, e.header.vocab)
            .map(|t| {
                let (t, next) = t.unwrap();
                (t, (next - t.len()) as u32)
            })
            .unzip()
    }

    #[test]
    fn the_builtin_model_carries_tables_that_match_its_vocabulary() {
        let e = StaticEmbedder::builtin().unwrap();
        assert!(
            e.tokenizer.get().is_some(),
            "the tables are read in place, not built"
        );
        // Read as any other file, the tables are checked against the vocabulary.
        StaticEmbedder::parse(Cow::Owned(BUILTIN.to_vec())).unwrap();
        let (tokens, starts) = tokens_of(&e);
        let tables = wordpiece::stored_tables(&tokens, &starts);
        assert_eq!(&BUILTIN[BUILTIN.len() - tables.len()..], &tables[..]);
    }

    #[test]
    fn stored_and_built_tables_tokenize_alike() {
        let e = StaticEmbedder::builtin().unwrap();
        let (tokens, _) = tokens_of(&e);
        let built = WordPiece::new(tokens.iter().copied()).unwrap();
        let stored = e.tokenizer();
        let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
        let alphabet: Vec<char> =
            "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 .,;:-_'\"()#@!?\n\té数日本èüßçñ🙂—«»"
                .chars()
                .collect();
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..rng.usize(0..40) {
                if rng.u8(0..5) == 0 {
                    text.push_str(tokens[rng.usize(0..tokens.len())].trim_start_matches("##"));
                } else {
                    text.push(alphabet[rng.usize(0..alphabet.len())]);
                }
            }
            assert_eq!(stored.encode(&text), built.encode(&text), "{text:?}");
        }
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
        // A slot of the stored tables pointing at the wrong token.
        let e = StaticEmbedder::builtin().unwrap();
        let (tokens, starts) = tokens_of(&e);
        let tables_at = BUILTIN.len() - wordpiece::stored_tables(&tokens, &starts).len();
        let mut bytes = BUILTIN.to_vec();
        let slot = (tables_at + 8..BUILTIN.len())
            .step_by(4)
            .find(|&at| bytes[at..at + 4] != [0xff; 4])
            .unwrap();
        bytes[slot] ^= 1;
        let err = StaticEmbedder::parse(Cow::Owned(bytes)).err().unwrap();
        assert!(err.to_string().contains("tokenizer tables"), "{err}");
    }
}
