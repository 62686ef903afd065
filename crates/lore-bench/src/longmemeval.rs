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
use lore::progress::Progress;
use lore::{Error, ListFilter, NewMemory, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::retrieval::{AtK, CategoryMetrics};
use crate::retrieval::{QueryScores, Tally, default_threads, run_parallel, score_ranking};
use crate::{embedder_name, percentile, require_dir, scratch_handle};

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
    /// Questions evaluated at once (default: one per core).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Ranking knobs, as `recall` takes them.
    #[serde(default, flatten)]
    pub ranking: Ranking,
    /// List the questions whose gold sessions are not all in the top 5, with the place of each
    /// gold session.
    #[serde(default)]
    pub misses: bool,
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
        let threads = self.threads.unwrap_or_else(default_threads);
        let mut report = longmemeval(questions, embedder, &options, work, threads, &*env.progress)?;
        if !self.misses {
            report.misses.clear();
        }
        Ok(report)
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
    /// Seconds spent writing and indexing haystacks (embedding included), summed over threads.
    pub indexing_seconds: f64,
    /// Query latency percentiles, milliseconds.
    pub query_ms_p50: f64,
    /// 95th percentile.
    pub query_ms_p95: f64,
    /// Questions evaluated at once.
    pub threads: usize,
    /// The same metrics per question type.
    pub by_type: Vec<CategoryMetrics>,
    /// Questions whose gold sessions are not all in the top 5 (when asked for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<Miss>,
}

/// A question whose gold sessions are not all in the top 5.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Miss {
    /// The question's id.
    pub question_id: String,
    /// Its type.
    pub question_type: String,
    /// The question.
    pub question: String,
    /// When it was asked.
    pub question_date: String,
    /// The place of each gold session in the ranking (1 = first; `None`: not ranked).
    pub gold_places: Vec<Option<usize>>,
}

/// Reads the benchmark file: a JSON list of questions, optionally gzip-compressed.
pub fn read_questions_file(path: &Path) -> Result<Vec<Question>> {
    read_questions(&read_maybe_gzip(path, "questions file")?[..])
}

/// A file's bytes, decompressed if it is gzip; `what` names it in the error.
pub(crate) fn read_maybe_gzip(path: &Path, what: &'static str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::Invalid {
            what,
            value: path.display().to_string(),
            reason: format!("cannot read it: {e}"),
        })?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut plain)
        .map_err(|e| Error::Parse {
            context: format!("decompressing {}", path.display()),
            message: e.to_string(),
        })?;
    Ok(plain)
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

/// What one question's run found.
struct Outcome {
    /// The question's type.
    question_type: String,
    /// Scores against the strict gold (`None`: no gold session with a user answer turn).
    scores: Option<QueryScores>,
    /// Whether a session of `answer_session_ids` is in the top 5.
    loose_hit: bool,
    /// Writing and indexing the haystack, seconds.
    indexing: f64,
    /// The query, milliseconds.
    latency: f64,
    /// The question, when its gold sessions are not all in the top 5.
    miss: Option<Miss>,
}

/// Runs the benchmark on `threads` threads; `work` is a directory for the per-question
/// repositories (each removed once its question is done). Progress is reported per question.
pub fn longmemeval(
    questions: &[Question],
    embedder: Option<SharedEmbedder>,
    options: &RankOptions,
    work: &Path,
    threads: usize,
    progress: &dyn Progress,
) -> Result<EvalReport> {
    let outcomes = run_parallel(
        questions,
        threads,
        progress,
        "questions evaluated",
        |i, q| {
            if q.question_id.ends_with("_abs") {
                return Ok(None);
            }
            evaluate(q, &work.join(format!("q{i}")), embedder.clone(), options).map(Some)
        },
    )?;
    let mut tally = Tally::default();
    let mut by_type = Tally::default();
    let (mut skipped, mut loose_n, mut loose_hits, mut indexing) = (0usize, 0usize, 0usize, 0f64);
    let mut latencies = Vec::new();
    let mut misses = Vec::new();
    for outcome in &outcomes {
        let Some(o) = outcome else {
            skipped += 1;
            continue;
        };
        loose_n += 1;
        loose_hits += o.loose_hit as usize;
        indexing += o.indexing;
        latencies.push(o.latency);
        misses.extend(o.miss.clone());
        match &o.scores {
            Some(scores) => {
                tally.add("all", scores);
                by_type.add(&o.question_type, scores);
            }
            None => skipped += 1,
        }
    }
    latencies.sort_by(f64::total_cmp);
    Ok(EvalReport {
        embedder: embedder_name(embedder.as_ref()),
        ranking: format!(
            "{:?}, half-life {:?} days, recency weight {}",
            options.fusion, options.half_life_days, options.recency_weight
        ),
        questions: tally.count(),
        skipped,
        at: tally.overall().at,
        loose_recall_any_at_5: loose_hits as f64 / loose_n.max(1) as f64,
        loose_questions: loose_n,
        indexing_seconds: indexing,
        query_ms_p50: percentile(&latencies, 0.5),
        query_ms_p95: percentile(&latencies, 0.95),
        threads,
        by_type: by_type.by_category(),
        misses,
    })
}

/// The answer sessions that hold evidence: a user turn marked `has_answer` (the sessions the
/// official retrieval metric counts).
fn gold_sessions(q: &Question) -> HashSet<&str> {
    q.answer_session_ids
        .iter()
        .map(String::as_str)
        .filter(|id| {
            q.haystack_session_ids
                .iter()
                .position(|h| h == id)
                .and_then(|i| q.haystack_sessions.get(i))
                .is_some_and(|s| s.iter().any(|t| t.role == "user" && t.has_answer))
        })
        .collect()
}

/// The question's haystack as memories (one per session with user text, dated by the session,
/// "now" when its date does not read), not yet written, and the session each memory holds.
fn haystack<'q>(
    lore: &lore::Lore,
    q: &'q Question,
    now: Timestamp,
) -> Result<(Vec<lore::Memory>, HashMap<String, &'q str>)> {
    let mut memories = Vec::new();
    let mut session_of: HashMap<String, &str> = HashMap::new();
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
        session_of.insert(memory.id.to_string(), sid);
        memories.push(memory);
    }
    Ok((memories, session_of))
}

/// One question: its haystack written to a fresh repository at `dir` (removed afterwards), the
/// question recalled against it, the ranking scored.
fn evaluate(
    q: &Question,
    dir: &Path,
    embedder: Option<SharedEmbedder>,
    options: &RankOptions,
) -> Result<Outcome> {
    let gold = gold_sessions(q);
    let loose: HashSet<&str> = q.answer_session_ids.iter().map(String::as_str).collect();

    let mut lore = scratch_handle(dir, embedder)?;
    // "Now" is the question's date: a date that does not read is an error, never the clock.
    let now = parse_date(&q.question_date).ok_or_else(|| Error::Parse {
        context: format!("LongMemEval question {}", q.question_id),
        message: format!("question_date {:?} is not a date", q.question_date),
    })?;
    let (memories, session_of) = haystack(&lore, q, now)?;
    let started = Instant::now();
    lore.write_batch(
        &memories,
        &lore::BatchWrite::import("longmemeval haystack"),
        &WriteContext::default(),
    )?;
    lore.index()?;
    let indexing = started.elapsed().as_secs_f64();

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
    let latency = started.elapsed().as_secs_f64() * 1000.0;
    // Folded near-duplicates count right after the hit they were folded into.
    let ranking: Vec<&str> = hits
        .iter()
        .flat_map(|h| std::iter::once(h.memory.id.to_string()).chain(h.duplicates.clone()))
        .filter_map(|id| session_of.get(&id).copied())
        .collect();
    drop(lore);
    let _ = std::fs::remove_dir_all(dir);
    let mut gold_places: Vec<Option<usize>> = gold
        .iter()
        .map(|g| ranking.iter().position(|s| s == g).map(|p| p + 1))
        .collect();
    gold_places.sort_by_key(|p| p.unwrap_or(usize::MAX));
    let miss = gold_places
        .iter()
        .any(|p| p.is_none_or(|p| p > 5))
        .then(|| Miss {
            question_id: q.question_id.clone(),
            question_type: q.question_type.clone(),
            question: q.question.clone(),
            question_date: q.question_date.clone(),
            gold_places,
        });
    Ok(Outcome {
        miss,
        question_type: q.question_type.clone(),
        scores: (!gold.is_empty()).then(|| score_ranking(&ranking, &gold)),
        loose_hit: ranking.iter().take(5).any(|s| loose.contains(s)),
        indexing,
        latency,
    })
}
