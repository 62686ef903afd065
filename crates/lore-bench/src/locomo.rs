//! `eval_locomo`: evidence retrieval on LoCoMo (the official `locomo10.json` schema), through
//! lore's own store, index and ranking: each conversation's turns become memories in one fresh
//! store, and each of its questions is recalled against it and scored by the turns (`dia_id`s)
//! its evidence names.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use jiff::Timestamp;
use jiff::civil::DateTime;
use lore::embed::SharedEmbedder;
use lore::index::RankOptions;
use lore::ops::memory::Ranking;
use lore::ops::{Effect, Env, Operation};
use lore::progress::Progress;
use lore::{Error, ListFilter, NewMemory, Result, WriteContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::retrieval::{
    AtK, CUTOFFS, CategoryMetrics, Tally, default_threads, run_parallel, score_ranking,
};
use crate::{embedder_name, percentile, require_dir, scratch_handle};

/// Measure evidence retrieval on LoCoMo: each conversation's turns become memories in a fresh
/// store, and its questions are recalled against them.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalLoCoMo {
    /// The conversations: `locomo10.json` or a file in its schema, optionally gzip-compressed
    /// (an absolute path).
    pub file: PathBuf,
    /// Conversations evaluated at once (default: one per core).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Ranking knobs, as `recall` takes them.
    #[serde(default, flatten)]
    pub ranking: Ranking,
    /// Where the per-conversation repositories are made (each removed when done): set by the
    /// front end, never taken from a client's arguments.
    #[serde(skip)]
    pub work_dir: PathBuf,
}

impl Operation for EvalLoCoMo {
    const NAME: &'static str = "eval_locomo";
    const TITLE: &'static str = "Evaluate on LoCoMo";
    const DESCRIPTION: &'static str = "Measure evidence retrieval on LoCoMo: every turn of a \
        conversation is a memory, one store per conversation; for each question (adversarial \
        category 5 skipped) recall and NDCG of its evidence turns at k = 1, 3, 5, 10, per \
        category, with indexing time and query latency, using this handle's embedder.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = LoCoMoReport;

    fn run(self, env: &mut Env<'_>) -> Result<LoCoMoReport> {
        let work = require_dir("work directory", &self.work_dir)?;
        let options = self.ranking.options()?;
        env.progress.phase("reading conversations", None);
        let samples = read_samples_file(&self.file)?;
        let embedder = env.lore.embedder().cloned();
        let threads = self.threads.unwrap_or_else(default_threads);
        locomo(&samples, embedder, &options, work, threads, &*env.progress)
    }
}

/// One conversation of the file with its questions.
#[derive(Clone, Debug, Deserialize)]
pub struct Sample {
    /// Its id (`conv-26`, ...).
    #[serde(default)]
    pub sample_id: String,
    /// `speaker_a`, `speaker_b`, `session_N` (a list of turns) and `session_N_date_time`.
    pub conversation: serde_json::Map<String, serde_json::Value>,
    /// The questions.
    #[serde(default)]
    pub qa: Vec<QuestionAnswer>,
}

/// One turn of a session.
#[derive(Clone, Debug, Deserialize)]
pub struct Turn {
    /// Who speaks.
    #[serde(default)]
    pub speaker: String,
    /// The turn's id, `D<session>:<turn>`.
    pub dia_id: String,
    /// What was said.
    #[serde(default)]
    pub text: String,
    /// The caption of an image shared in the turn, if any.
    #[serde(default)]
    pub blip_caption: Option<String>,
}

/// One question.
#[derive(Clone, Debug, Deserialize)]
pub struct QuestionAnswer {
    /// The question.
    pub question: String,
    /// The turns holding the answer (`dia_id`s; some entries name several, separated by `;`).
    #[serde(default)]
    pub evidence: Vec<String>,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    #[serde(default)]
    pub category: u8,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LoCoMoReport {
    /// The embedder (`none` for lexical only).
    pub embedder: String,
    /// Fusion and recency settings, as text.
    pub ranking: String,
    /// Conversations (one store each).
    pub conversations: usize,
    /// Turns stored as memories, in all.
    pub turns: usize,
    /// Questions scored.
    pub questions: usize,
    /// Questions skipped: adversarial (category 5), or no evidence turn found in the
    /// conversation.
    pub skipped: usize,
    /// Metrics over every scored question at k = 1, 3, 5, 10 (`recall` is the share of the
    /// evidence turns found).
    pub at: Vec<AtK>,
    /// The same per category.
    pub by_category: Vec<CategoryMetrics>,
    /// Seconds spent writing and indexing conversations (embedding included), summed over
    /// threads.
    pub indexing_seconds: f64,
    /// Query latency percentiles, milliseconds.
    pub query_ms_p50: f64,
    /// 95th percentile.
    pub query_ms_p95: f64,
    /// Conversations evaluated at once.
    pub threads: usize,
}

/// Reads a LoCoMo file: a JSON list of conversations, optionally gzip-compressed.
pub fn read_samples_file(path: &Path) -> Result<Vec<Sample>> {
    let bytes = crate::longmemeval::read_maybe_gzip(path, "conversations file")?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Parse {
        context: "reading LoCoMo conversations".into(),
        message: e.to_string(),
    })
}

/// The name of a LoCoMo question category.
pub fn category_name(category: u8) -> String {
    let name = match category {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    };
    format!("{category} {name}")
}

/// Parses LoCoMo session dates such as `1:56 pm on 8 May, 2023`.
fn parse_date(text: &str) -> Option<Timestamp> {
    let text = text.trim().replace(',', "");
    let dt = DateTime::strptime("%I:%M %p on %d %B %Y", &text)
        .or_else(|_| DateTime::strptime("%I:%M %p on %d %b %Y", &text))
        .ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// Evidence entries as single `dia_id`s (entries such as `D8:6; D9:17` name several).
fn evidence_ids(evidence: &[String]) -> impl Iterator<Item = &str> {
    evidence
        .iter()
        .flat_map(|e| e.split([';', ',', ' ']))
        .map(str::trim)
        .filter(|e| !e.is_empty())
}

/// One session of a conversation: its number, its date if it parses, its turns.
type Session = (u32, Option<Timestamp>, Vec<Turn>);

/// A conversation's sessions in order.
fn sessions(sample: &Sample) -> Result<Vec<Session>> {
    let mut out = Vec::new();
    for (key, value) in &sample.conversation {
        let Some(n) = key
            .strip_prefix("session_")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let turns: Vec<Turn> = serde_json::from_value(value.clone()).map_err(|e| Error::Parse {
            context: format!("reading LoCoMo {} {key}", sample.sample_id),
            message: e.to_string(),
        })?;
        let date = sample
            .conversation
            .get(&format!("{key}_date_time"))
            .and_then(|d| d.as_str())
            .and_then(parse_date);
        out.push((n, date, turns));
    }
    out.sort_by_key(|s| s.0);
    Ok(out)
}

/// What one conversation's run found.
struct Outcome {
    turns: usize,
    /// Per scored question: its category and scores.
    scored: Vec<(u8, crate::retrieval::QueryScores)>,
    skipped: usize,
    indexing: f64,
    latencies: Vec<f64>,
}

/// Runs the benchmark on `threads` threads; `work` is a directory for the per-conversation
/// repositories. Progress is reported per conversation.
pub fn locomo(
    samples: &[Sample],
    embedder: Option<SharedEmbedder>,
    options: &RankOptions,
    work: &Path,
    threads: usize,
    progress: &dyn Progress,
) -> Result<LoCoMoReport> {
    let outcomes = run_parallel(
        samples,
        threads,
        progress,
        "conversations evaluated",
        |i, sample| {
            evaluate(
                sample,
                &work.join(format!("c{i}")),
                embedder.clone(),
                options,
            )
        },
    )?;
    let mut tally = Tally::default();
    let mut by_category = Tally::default();
    let (mut turns, mut skipped, mut indexing) = (0, 0, 0.0);
    let mut latencies = Vec::new();
    for o in &outcomes {
        turns += o.turns;
        skipped += o.skipped;
        indexing += o.indexing;
        latencies.extend(&o.latencies);
        for (category, scores) in &o.scored {
            tally.add("all", scores);
            by_category.add(&category_name(*category), scores);
        }
    }
    latencies.sort_by(f64::total_cmp);
    Ok(LoCoMoReport {
        embedder: embedder_name(embedder.as_ref()),
        ranking: format!(
            "{:?}, half-life {:?} days, recency weight {}",
            options.fusion, options.half_life_days, options.recency_weight
        ),
        conversations: samples.len(),
        turns,
        questions: tally.count(),
        skipped,
        at: tally.overall().at,
        by_category: by_category.by_category(),
        indexing_seconds: indexing,
        query_ms_p50: percentile(&latencies, 0.5),
        query_ms_p95: percentile(&latencies, 0.95),
        threads,
    })
}

/// The conversation's turns as memories (not yet written), each a few seconds after the one
/// before it from its session's date; a session whose date does not read takes the one before
/// it (else the first that reads), so results never depend on when the evaluation runs.
fn conversation(lore: &lore::Lore, sample: &Sample, sessions: &[Session]) -> Result<Conversation> {
    let mut memories = Vec::new();
    let mut turn_of: HashMap<String, String> = HashMap::new();
    let mut latest = None;
    let first_dated = sessions
        .iter()
        .find_map(|(_, d, _)| *d)
        .ok_or_else(|| Error::Parse {
            context: format!("reading LoCoMo {}", sample.sample_id),
            message: "no session has a date that reads (session_N_date_time)".into(),
        })?;
    let mut previous = first_dated;
    for (number, date, turns) in sessions {
        let start = date.unwrap_or(previous);
        previous = start;
        for (t, turn) in turns.iter().enumerate() {
            let mut body = format!("{}: {}", turn.speaker, turn.text.trim());
            if let Some(caption) = turn.blip_caption.as_deref().filter(|c| !c.is_empty()) {
                body.push_str(&format!(" [shares a photo: {caption}]"));
            }
            // Turns of a session a few seconds apart, in order.
            let when = start
                .checked_add(jiff::SignedDuration::from_secs(t as i64 * 10))
                .unwrap_or(start);
            latest = latest.max(Some(when));
            let memory = lore.prepare(
                &NewMemory {
                    namespace: "research".into(),
                    summary: format!("{} on {}", turn.speaker, when.strftime("%Y-%m-%d")),
                    body,
                    ..NewMemory::default()
                },
                // The session's turns are one agent session: recall can expand around a hit.
                &WriteContext {
                    now: Some(when),
                    session: Some(format!("{}-session-{number}", sample.sample_id)),
                    ..WriteContext::default()
                },
            )?;
            turn_of.insert(memory.id.to_string(), turn.dia_id.clone());
            memories.push(memory);
        }
    }
    Ok(Conversation {
        memories,
        turn_of,
        latest,
    })
}

/// A conversation's turns as memories, the dialogue id each holds, and the latest time.
struct Conversation {
    memories: Vec<lore::Memory>,
    turn_of: HashMap<String, String>,
    latest: Option<Timestamp>,
}

/// One conversation: its turns written to a fresh repository at `dir` (removed afterwards),
/// each question recalled against it and scored.
fn evaluate(
    sample: &Sample,
    dir: &Path,
    embedder: Option<SharedEmbedder>,
    options: &RankOptions,
) -> Result<Outcome> {
    let sessions = sessions(sample)?;
    let mut lore = scratch_handle(dir, embedder)?;
    let Conversation {
        memories,
        turn_of,
        latest,
    } = conversation(&lore, sample, &sessions)?;
    let started = Instant::now();
    lore.write_batch(
        &memories,
        &lore::BatchWrite::import("locomo conversation"),
        &WriteContext::default(),
    )?;
    lore.index()?;
    let indexing = started.elapsed().as_secs_f64();

    let known: HashSet<&str> = turn_of.values().map(String::as_str).collect();
    let deepest = CUTOFFS[CUTOFFS.len() - 1];
    let filter = ListFilter {
        limit: Some(deepest),
        ..ListFilter::default()
    };
    let options = RankOptions {
        now: latest,
        ..options.clone()
    };
    let mut outcome = Outcome {
        turns: memories.len(),
        scored: Vec::new(),
        skipped: 0,
        indexing,
        latencies: Vec::new(),
    };
    for qa in &sample.qa {
        let gold: HashSet<&str> = evidence_ids(&qa.evidence)
            .filter(|id| known.contains(id))
            .collect();
        if qa.category == 5 || gold.is_empty() {
            outcome.skipped += 1;
            continue;
        }
        let started = Instant::now();
        let hits = lore.search(&qa.question, &filter, &options, false)?;
        outcome
            .latencies
            .push(started.elapsed().as_secs_f64() * 1000.0);
        // Folded near-duplicates count right after the hit they were folded into.
        let ranking: Vec<&str> = hits
            .iter()
            .flat_map(|h| std::iter::once(h.memory.id.to_string()).chain(h.duplicates.clone()))
            .filter_map(|id| turn_of.get(&id).map(String::as_str))
            .collect();
        outcome
            .scored
            .push((qa.category, score_ranking(&ranking, &gold)));
    }
    drop(lore);
    let _ = std::fs::remove_dir_all(dir);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_dates_and_evidence_lists_parse() {
        let t = parse_date("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(t.to_string(), "2023-05-08T13:56:00Z");
        assert!(parse_date("10:37 am on 27 June, 2023").is_some());
        assert!(parse_date("someday").is_none());
        let evidence = vec!["D8:6; D9:17".to_string(), "D1:3".to_string()];
        let ids: Vec<&str> = evidence_ids(&evidence).collect();
        assert_eq!(ids, ["D8:6", "D9:17", "D1:3"]);
    }
}
