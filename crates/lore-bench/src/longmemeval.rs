//! `eval_longmemeval`: the LongMemEval retrieval benchmark (official session-level protocol),
//! run through lore's own store, index and ranking: each question gets a fresh repository whose
//! memories are its haystack sessions, and the question is answered by the same search `recall`
//! runs.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jiff::Timestamp;
use lore::embed::SharedEmbedder;
use lore::index::RankOptions;
use lore::ops::memory::Ranking;
use lore::ops::{Effect, Env, Operation};
use lore::progress::Throttle;
use lore::{Error, ListFilter, NewMemory, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{PROGRESS_STEPS, embedder_name, percentile, require_dir, scratch_handle};

/// Measure retrieval on LongMemEval: each question's haystack sessions (user turns) become
/// memories in a fresh store, and the question is recalled against them.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalLongMemEval {
    /// The questions: a JSON list in the official format, optionally gzip-compressed (an
    /// absolute path).
    pub file: PathBuf,
    /// Only the first N questions.
    #[serde(default)]
    pub questions: Option<usize>,
    /// Ranking knobs, as `recall` takes them.
    #[serde(default, flatten)]
    pub ranking: Ranking,
    /// Where the per-question repositories are made (emptied as it goes): set by the front
    /// end, never taken from a client's arguments.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Operation for EvalLongMemEval {
    const NAME: &'static str = "eval_longmemeval";
    const TITLE: &'static str = "Evaluate on LongMemEval";
    const DESCRIPTION: &'static str = "Measure retrieval quality on LongMemEval (official \
        session-level protocol): recall_any, recall_all and NDCG at k = 1, 3, 5, 10, per \
        question type, with indexing time and query latency, using this handle's embedder.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = EvalReport;

    fn run(self, env: &mut Env<'_>) -> Result<EvalReport> {
        let work = require_dir("work directory", &self.work_dir)?;
        let options = self.ranking.options()?;
        env.progress.phase("reading questions", None);
        let questions = read_questions_file(&self.file)?;
        let questions = match self.questions {
            Some(n) => &questions[..n.min(questions.len())],
            None => &questions[..],
        };
        let embedder = env.lore.embedder().cloned();
        let mut progress = Throttle::new(
            &*env.progress,
            "questions evaluated",
            questions.len() as u64,
            PROGRESS_STEPS,
        );
        longmemeval(questions, embedder, &options, work, |done| {
            progress.advance(done as u64)
        })
    }
}

/// One LongMemEval question (the fields retrieval needs).
#[derive(Clone, Debug, Deserialize)]
pub struct Question {
    /// Id; `_abs` at the end marks an abstention question.
    pub question_id: String,
    /// Category.
    #[serde(default)]
    pub question_type: String,
    /// The question.
    pub question: String,
    /// When it is asked.
    #[serde(default)]
    pub question_date: String,
    /// Sessions holding the answer.
    #[serde(default)]
    pub answer_session_ids: Vec<String>,
    /// The haystack's session ids.
    pub haystack_session_ids: Vec<String>,
    /// The haystack's session dates.
    #[serde(default)]
    pub haystack_dates: Vec<String>,
    /// The sessions.
    pub haystack_sessions: Vec<Vec<Turn>>,
}

/// One turn of a session.
#[derive(Clone, Debug, Deserialize)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    /// What was said.
    pub content: String,
    /// Whether this turn holds (part of) the answer.
    #[serde(default)]
    pub has_answer: bool,
}

/// Metrics at one cut-off.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct AtK {
    /// k.
    pub k: usize,
    /// Share of questions with a gold session in the top k.
    pub recall_any: f64,
    /// Share of questions with every gold session in the top k.
    pub recall_all: f64,
    /// Binary-relevance NDCG over the top k.
    pub ndcg_any: f64,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EvalReport {
    /// The embedder (`none` for lexical only).
    pub embedder: String,
    /// Fusion and recency settings, as text.
    pub ranking: String,
    /// Questions scored by the official protocol.
    pub questions: usize,
    /// Questions skipped (abstention, or no gold session with a user answer turn).
    pub skipped: usize,
    /// Metrics at k = 1, 3, 5, 10.
    pub at: Vec<AtK>,
    /// The looser "R@5" (gold = `answer_session_ids` as given, over all non-abstention
    /// questions).
    pub loose_recall_any_at_5: f64,
    /// Questions in the loose metric.
    pub loose_questions: usize,
    /// Seconds spent writing and indexing haystacks (embedding included), in total.
    pub indexing_seconds: f64,
    /// Query latency percentiles, milliseconds.
    pub query_ms_p50: f64,
    /// 95th percentile.
    pub query_ms_p95: f64,
    /// Per question type: (type, questions, recall_all@5).
    pub by_type: Vec<(String, usize, f64)>,
}

/// Reads the benchmark file: a JSON list of questions, optionally gzip-compressed.
pub fn read_questions_file(path: &Path) -> Result<Vec<Question>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::Invalid {
            what: "questions file",
            value: path.display().to_string(),
            reason: format!("cannot read it: {e}"),
        })?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        read_questions(flate2::read::GzDecoder::new(&bytes[..]))
    } else {
        read_questions(&bytes[..])
    }
}

/// Reads a JSON list of questions.
pub fn read_questions(reader: impl Read) -> Result<Vec<Question>> {
    serde_json::from_reader(std::io::BufReader::new(reader)).map_err(|e| Error::Parse {
        context: "reading LongMemEval questions".into(),
        message: e.to_string(),
    })
}

/// A session's document: its user turns.
fn user_text(session: &[Turn]) -> String {
    session
        .iter()
        .filter(|t| t.role == "user")
        .map(|t| t.content.trim())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Parses LongMemEval dates such as `2023/05/20 (Sat) 02:21`.
fn parse_date(text: &str) -> Option<Timestamp> {
    let mut parts = text.split_whitespace();
    let date = parts.next()?;
    let time = parts.find(|p| p.contains(':')).unwrap_or("00:00");
    let iso = format!("{}T{time}:00Z", date.replace('/', "-"));
    iso.parse().ok()
}

/// Runs the benchmark; `work` is a directory for the per-question repositories (emptied as it
/// goes). `progress` is told how many questions are done.
pub fn longmemeval(
    questions: &[Question],
    embedder: Option<SharedEmbedder>,
    options: &RankOptions,
    work: &Path,
    mut progress: impl FnMut(usize),
) -> Result<EvalReport> {
    let ks = [1usize, 3, 5, 10];
    let mut sums = vec![(0f64, 0f64, 0f64); ks.len()];
    let (mut scored, mut skipped, mut loose_n, mut loose_hits) = (0usize, 0usize, 0usize, 0f64);
    let mut latencies = Vec::new();
    let mut indexing = 0f64;
    let mut by_type: HashMap<String, (usize, f64)> = HashMap::new();
    for (done, q) in questions.iter().enumerate() {
        progress(done);
        if q.question_id.ends_with("_abs") {
            skipped += 1;
            continue;
        }
        let gold: HashSet<&str> = q
            .answer_session_ids
            .iter()
            .map(String::as_str)
            .filter(|id| {
                q.haystack_session_ids
                    .iter()
                    .position(|h| h == id)
                    .and_then(|i| q.haystack_sessions.get(i))
                    .is_some_and(|s| s.iter().any(|t| t.role == "user" && t.has_answer))
            })
            .collect();
        let loose: HashSet<&str> = q.answer_session_ids.iter().map(String::as_str).collect();

        // A fresh repository holding this question's haystack.
        let dir = work.join(format!("q{done}"));
        let mut lore = scratch_handle(&dir, embedder.clone())?;
        let now = parse_date(&q.question_date).unwrap_or_else(Timestamp::now);
        let mut memories = Vec::new();
        let mut session_of: HashMap<String, String> = HashMap::new();
        for (i, session) in q.haystack_sessions.iter().enumerate() {
            let Some(sid) = q.haystack_session_ids.get(i) else {
                continue;
            };
            let body = user_text(session);
            if body.is_empty() {
                continue;
            }
            let when = q
                .haystack_dates
                .get(i)
                .and_then(|d| parse_date(d))
                .unwrap_or(now);
            let memory = lore.prepare(
                &NewMemory {
                    namespace: "research".into(),
                    summary: format!("Conversation on {}", when.strftime("%Y-%m-%d")),
                    body,
                    ..NewMemory::default()
                },
                &WriteContext {
                    now: Some(when),
                    ..WriteContext::default()
                },
            )?;
            session_of.insert(memory.id.to_string(), sid.clone());
            memories.push(memory);
        }
        let started = Instant::now();
        lore.write_batch(
            &memories,
            "longmemeval haystack",
            false,
            &WriteContext::default(),
        )?;
        lore.index()?;
        indexing += started.elapsed().as_secs_f64();

        let filter = ListFilter {
            limit: Some(memories.len().max(1)),
            ..ListFilter::default()
        };
        let options = RankOptions {
            now: Some(now),
            ..options.clone()
        };
        let started = Instant::now();
        let hits = lore.search(&q.question, &filter, &options, false)?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        // Folded near-duplicates count right after the hit they were folded into.
        let ranking: Vec<&str> = hits
            .iter()
            .flat_map(|h| std::iter::once(h.memory.id.to_string()).chain(h.duplicates.clone()))
            .filter_map(|id| session_of.get(&id).map(String::as_str))
            .collect();
        drop(lore);
        let _ = std::fs::remove_dir_all(&dir);

        loose_n += 1;
        if ranking.iter().take(5).any(|s| loose.contains(s)) {
            loose_hits += 1.0;
        }
        if gold.is_empty() {
            skipped += 1;
            continue;
        }
        scored += 1;
        for (slot, &k) in ks.iter().enumerate() {
            let top = &ranking[..k.min(ranking.len())];
            let found = top.iter().filter(|s| gold.contains(*s)).count();
            let dcg: f64 = top
                .iter()
                .enumerate()
                .filter(|(_, s)| gold.contains(*s))
                .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
                .sum();
            let ideal: f64 = (0..gold.len().min(k))
                .map(|i| 1.0 / ((i + 2) as f64).log2())
                .sum();
            sums[slot].0 += (found > 0) as u8 as f64;
            sums[slot].1 += (found == gold.len()) as u8 as f64;
            sums[slot].2 += dcg / ideal;
            if k == 5 {
                let entry = by_type.entry(q.question_type.clone()).or_default();
                entry.0 += 1;
                entry.1 += (found == gold.len()) as u8 as f64;
            }
        }
    }
    progress(questions.len());
    latencies.sort_by(f64::total_cmp);
    let n = scored.max(1) as f64;
    let mut by_type: Vec<(String, usize, f64)> = by_type
        .into_iter()
        .map(|(t, (c, s))| (t, c, s / c.max(1) as f64))
        .collect();
    by_type.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(EvalReport {
        embedder: embedder_name(embedder.as_ref()),
        ranking: format!(
            "{:?}, half-life {:?} days, recency weight {}",
            options.fusion, options.half_life_days, options.recency_weight
        ),
        questions: scored,
        skipped,
        at: ks
            .iter()
            .zip(&sums)
            .map(|(&k, s)| AtK {
                k,
                recall_any: s.0 / n,
                recall_all: s.1 / n,
                ndcg_any: s.2 / n,
            })
            .collect(),
        loose_recall_any_at_5: loose_hits / loose_n.max(1) as f64,
        loose_questions: loose_n,
        indexing_seconds: indexing,
        query_ms_p50: percentile(&latencies, 0.5),
        query_ms_p95: percentile(&latencies, 0.95),
        by_type,
    })
}
