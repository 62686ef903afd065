//! Five memory substrates behind one interface, each storing and retrieving the same cases:
//! none, one markdown file, git (lore's reasoning trees), vectors, and a graph searched by
//! spreading activation.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use lore::embed::SharedEmbedder;
use lore::ops::Env;
use lore::ops::thoughts::{ThinkAdd, ThinkSearch};
use lore::thoughts::search::similarities;
use lore::{Error, Lore, Result, WriteContext};
use schemars::JsonSchema;
use serde::Serialize;

use crate::bench::process::dir_size;

/// What a substrate can do beyond store and retrieve.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Capabilities {
    /// Rebuild the full state at an earlier point.
    pub replay: bool,
    /// Compare two versions line by line.
    pub diff: bool,
    /// How two agents' stores combine.
    pub merge: &'static str,
    /// Whether two contradictory entries on one topic surface as a conflict.
    pub contradiction: bool,
}

/// A memory substrate.
pub trait Substrate {
    /// Its name in reports.
    fn name(&self) -> &'static str;
    /// Stores one case.
    fn put(&mut self, text: &str) -> Result<()>;
    /// The best stored case for a query (its index in storing order) and its similarity.
    fn get(&mut self, query: &str) -> Result<Option<(usize, f64)>>;
    /// Bytes on disk (or in memory) for what is stored.
    fn bytes(&self) -> u64;
    /// What it can do.
    fn capabilities(&self) -> Capabilities;
}

/// Stores nothing: the floor every other substrate is measured against.
pub struct Nothing;

impl Substrate for Nothing {
    fn name(&self) -> &'static str {
        "none"
    }
    fn put(&mut self, _text: &str) -> Result<()> {
        Ok(())
    }
    fn get(&mut self, _query: &str) -> Result<Option<(usize, f64)>> {
        Ok(None)
    }
    fn bytes(&self) -> u64 {
        0
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            replay: false,
            diff: false,
            merge: "nothing to merge",
            contradiction: false,
        }
    }
}

fn best_of(
    query: &str,
    texts: &[&str],
    embedder: Option<&SharedEmbedder>,
) -> Result<Option<(usize, f64)>> {
    if texts.is_empty() {
        return Ok(None);
    }
    let sims = similarities(query, texts, embedder)?;
    Ok(sims
        .into_iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1)))
}

/// One markdown file, appended to and read whole (the MEMORY.md pattern).
pub struct MarkdownFile {
    path: PathBuf,
}

impl MarkdownFile {
    /// A new, empty file at `path`.
    pub fn new(path: &Path) -> Result<MarkdownFile> {
        std::fs::write(path, "# memory\n").map_err(|e| io(path, e))?;
        Ok(MarkdownFile {
            path: path.to_path_buf(),
        })
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        context: path.display().to_string(),
        source: e,
    }
}

impl Substrate for MarkdownFile {
    fn name(&self) -> &'static str {
        "markdown file"
    }
    fn put(&mut self, text: &str) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| io(&self.path, e))?;
        writeln!(f, "\n- {}", text.replace('\n', " ")).map_err(|e| io(&self.path, e))
    }
    fn get(&mut self, query: &str) -> Result<Option<(usize, f64)>> {
        let all = std::fs::read_to_string(&self.path).map_err(|e| io(&self.path, e))?;
        let entries: Vec<&str> = all.lines().filter_map(|l| l.strip_prefix("- ")).collect();
        best_of(query, &entries, None)
    }
    fn bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            replay: false,
            diff: false,
            merge: "concatenation (contradictions kept silently)",
            contradiction: false,
        }
    }
}

/// lore's reasoning trees: each case a thought commit, retrieval through the index.
pub struct GitThoughts<'a> {
    lore: &'a mut Lore,
    dir: PathBuf,
    ids: HashMap<String, usize>,
    stored: usize,
}

impl<'a> GitThoughts<'a> {
    /// Over a handle on a fresh repository at `dir`.
    pub fn new(lore: &'a mut Lore, dir: &Path) -> GitThoughts<'a> {
        GitThoughts {
            lore,
            dir: dir.to_path_buf(),
            ids: HashMap::new(),
            stored: 0,
        }
    }
}

impl Substrate for GitThoughts<'_> {
    fn name(&self) -> &'static str {
        "git (lore)"
    }
    fn put(&mut self, text: &str) -> Result<()> {
        let added = Env::new(self.lore, WriteContext::default()).run(ThinkAdd {
            session: Some("cases".into()),
            text: text.into(),
            score: Some(0.8),
            ..ThinkAdd::default()
        })?;
        self.ids.insert(added.id, self.stored);
        self.stored += 1;
        Ok(())
    }
    fn get(&mut self, query: &str) -> Result<Option<(usize, f64)>> {
        let out = Env::new(self.lore, WriteContext::default()).run(ThinkSearch {
            query: Some(query.into()),
            limit: 10,
            ..ThinkSearch::default()
        })?;
        // The case the query is closest to among the ρ-ranked hits.
        Ok(out
            .hits
            .iter()
            .filter_map(|h| Some((*self.ids.get(&h.id)?, h.similarity.unwrap_or(0.0))))
            .max_by(|a, b| a.1.total_cmp(&b.1)))
    }
    fn bytes(&self) -> u64 {
        dir_size(&self.dir.join(".git").join("objects"))
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            replay: true,
            diff: true,
            merge: "git merge (keyed lessons conflict)",
            contradiction: true,
        }
    }
}

/// Vectors in memory, searched exhaustively by cosine.
pub struct Vectors {
    embedder: Option<SharedEmbedder>,
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

impl Vectors {
    /// With `embedder` (none: word-count vectors).
    pub fn new(embedder: Option<SharedEmbedder>) -> Vectors {
        Vectors {
            embedder,
            texts: Vec::new(),
            vectors: Vec::new(),
        }
    }
}

impl Substrate for Vectors {
    fn name(&self) -> &'static str {
        "vector"
    }
    fn put(&mut self, text: &str) -> Result<()> {
        if let Some(e) = &self.embedder {
            self.vectors.extend(e.embed(&[text])?);
        }
        self.texts.push(text.to_string());
        Ok(())
    }
    fn get(&mut self, query: &str) -> Result<Option<(usize, f64)>> {
        let Some(e) = &self.embedder else {
            let texts: Vec<&str> = self.texts.iter().map(String::as_str).collect();
            return best_of(query, &texts, None);
        };
        let q = e.embed_queries(&[query])?.remove(0);
        Ok(self
            .vectors
            .iter()
            .map(|v| f64::from(lore::embed::dot(&q, v)).clamp(0.0, 1.0))
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1)))
    }
    fn bytes(&self) -> u64 {
        let floats: usize = self.vectors.iter().map(Vec::len).sum();
        (floats * 4 + self.texts.iter().map(String::len).sum::<usize>()) as u64
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            replay: false,
            diff: false,
            merge: "union (contradictions kept silently)",
            contradiction: false,
        }
    }
}

/// A graph of cases and the words they contain, searched by spreading activation: the query's
/// words activate the cases holding them, which pass part of it on through their other words.
pub struct ActivationGraph {
    texts: Vec<String>,
    word_cases: BTreeMap<String, Vec<usize>>,
    case_words: Vec<Vec<String>>,
}

/// How much activation survives one hop.
const DECAY: f64 = 0.5;

fn words(text: &str) -> Vec<String> {
    let mut w: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect();
    w.sort();
    w.dedup();
    w
}

impl ActivationGraph {
    /// An empty graph.
    pub fn new() -> ActivationGraph {
        ActivationGraph {
            texts: Vec::new(),
            word_cases: BTreeMap::new(),
            case_words: Vec::new(),
        }
    }
}

impl Default for ActivationGraph {
    fn default() -> Self {
        ActivationGraph::new()
    }
}

impl Substrate for ActivationGraph {
    fn name(&self) -> &'static str {
        "graph (spreading activation)"
    }
    fn put(&mut self, text: &str) -> Result<()> {
        let id = self.texts.len();
        let w = words(text);
        for word in &w {
            self.word_cases.entry(word.clone()).or_default().push(id);
        }
        self.case_words.push(w);
        self.texts.push(text.to_string());
        Ok(())
    }
    fn get(&mut self, query: &str) -> Result<Option<(usize, f64)>> {
        let mut activation: HashMap<usize, f64> = HashMap::new();
        let fan = |n: usize| 1.0 / (n as f64).sqrt();
        for word in words(query) {
            if let Some(cases) = self.word_cases.get(&word) {
                for c in cases {
                    *activation.entry(*c).or_default() += fan(cases.len());
                }
            }
        }
        // One more hop: each active case spreads to its neighbours through shared words.
        let first: Vec<(usize, f64)> = activation.iter().map(|(c, a)| (*c, *a)).collect();
        for (case, a) in first {
            for word in &self.case_words[case] {
                let cases = &self.word_cases[word];
                for c in cases {
                    if *c != case {
                        *activation.entry(*c).or_default() += a * DECAY * fan(cases.len()) / 8.0;
                    }
                }
            }
        }
        let Some((best, _)) = activation
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        else {
            return Ok(None);
        };
        let sim = similarities(query, &[self.texts[best].as_str()], None)?[0];
        Ok(Some((best, sim)))
    }
    fn bytes(&self) -> u64 {
        let text: usize = self.texts.iter().map(String::len).sum();
        let edges: usize = self.case_words.iter().map(Vec::len).sum();
        let words: usize = self.word_cases.keys().map(String::len).sum();
        (text + words + edges * 2 * std::mem::size_of::<usize>()) as u64
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            replay: false,
            diff: false,
            merge: "union of nodes and edges (contradictions kept silently)",
            contradiction: false,
        }
    }
}
