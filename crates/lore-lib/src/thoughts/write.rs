//! Writing reasoning trees: a thought commit on its parent thought, recorded on the session's
//! ledger by compare-and-swap; scores as versions ([`super::scores`]); outcomes as marks
//! ([`super::marks`]); finishing a session (the best path merged into the ledger, the best
//! ref, the lesson as a keyed memory).

use git2::{FileMode, Oid, Signature, Time};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{
    LESSONS_NAMESPACE, Outcome, Scores, SessionInfo, ThoughtMeta, check_session, json_error, marks,
    outcome_ref, read, scores, session_ref, short,
};
use crate::error::{Error, Result};
use crate::memory::{Lore, NewMemory, WriteContext, Written};
use crate::model::{Key, to_millis};
use crate::secrets::{self, SecretReport};
use crate::store::{Edit, Message, RefWrite, Store};

/// The file a session's ledger holds from its first commit.
pub const SESSION_FILE: &str = "session.json";
/// The file a finished session's ledger holds.
pub const DONE_FILE: &str = "done.json";
/// The trailer naming the thought a ledger commit records.
pub const THOUGHT_TRAILER: &str = "Lore-Thought";

/// A thought to write.
#[derive(Clone, Debug, Default)]
pub struct NewThought {
    /// The reasoning session (created by its first thought).
    pub session: String,
    /// The parent thought's full id (none: a root thought).
    pub parent: Option<Oid>,
    /// The text.
    pub text: String,
    /// Its scores.
    pub scores: Scores,
    /// The tool calls and observations that led to it.
    pub trace: Vec<serde_json::Value>,
    /// The model behind the agent.
    pub model: Option<String>,
    /// The sequential-thinking number.
    pub number: Option<u32>,
    /// The sequential-thinking branch id.
    pub branch: Option<String>,
    /// The thought it revises.
    pub revises: Option<Oid>,
    /// How long producing it took.
    pub elapsed_ms: Option<u64>,
}

/// What writing a thought made.
#[derive(Clone, Debug)]
pub struct AddedThought {
    /// The thought's commit.
    pub id: Oid,
    /// Its metadata as written.
    pub metadata: ThoughtMeta,
    /// The ledger commit that recorded it.
    pub ledger: Oid,
    /// What the secret scanner found in its text, model, branch and trace, and did.
    pub secrets: Option<SecretReport>,
}

/// What `done.json` records.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finished {
    /// The best thought.
    pub best: String,
    /// The final answer, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The lesson's memory path (`lessons/<topic>`), if one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// When the session was finished.
    pub finished: Timestamp,
}

fn signature(store: &Store, now: Timestamp) -> Result<Signature<'static>> {
    let (name, email) = store.identity();
    let time = Time::new(now.as_second(), 0);
    Ok(Signature::new(name, email, &time)?)
}

fn trailers(ctx: &WriteContext, action: &str, session: &str) -> Vec<(String, String)> {
    let mut t = vec![
        ("Lore-Action".to_string(), action.to_string()),
        ("Lore-Thought-Session".to_string(), session.to_string()),
    ];
    if let Some(a) = &ctx.agent {
        t.push(("Lore-Agent".into(), crate::secrets::unsecret(a)));
    }
    t
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn to_json(value: &impl Serialize, what: &str) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| json_error(what, e))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Creates the session's ledger (with `session.json`) unless it exists.
fn ensure_session(store: &Store, session: &str, now: Timestamp, ctx: &WriteContext) -> Result<()> {
    let info = SessionInfo {
        session: session.to_string(),
        project: project_of(store)?,
        created: now,
    };
    let content = to_json(&info, SESSION_FILE)?;
    store.transact_ref(&session_ref(session), |snap| {
        if snap.commit().is_some() {
            return Ok((RefWrite::default(), ()));
        }
        let message = Message {
            subject: format!("start reasoning session {session}"),
            body: None,
            trailers: trailers(ctx, "session", session),
        };
        let edits = vec![Edit::Upsert {
            path: SESSION_FILE.into(),
            content: content.clone(),
        }];
        Ok((RefWrite::on_tip(edits, message), ()))
    })?;
    Ok(())
}

/// The project identity sessions record: the store's recorded one, else the repository's.
pub fn project_of(store: &Store) -> Result<String> {
    let recorded = store.meta(store.tip()?)?.and_then(|m| m.project);
    Ok(recorded.unwrap_or_else(|| store.project_identity()))
}

/// Writes a thought: its commit on its parent thought, recorded on the session's ledger, and its
/// scores as a note. An unknown parent, a parent of another session or bad scores write nothing.
pub fn add_thought(store: &Store, new: &NewThought, ctx: &WriteContext) -> Result<AddedThought> {
    check_session(&new.session)?;
    let mut new = new.clone();
    let secrets = screen_thought(store, &mut new)?;
    let new = &new;
    new.scores.validate()?;
    if new.text.trim().is_empty() {
        return Err(Error::Invalid {
            what: "thought",
            value: String::new(),
            reason: "a thought needs text".into(),
        });
    }
    let depth = match new.parent {
        Some(parent) => {
            let meta = read::metadata(store, parent)?;
            if meta.session != new.session {
                return Err(Error::ThoughtNotFound(format!(
                    "thought {} belongs to session {:?}, not {:?}",
                    short(&parent.to_string()),
                    meta.session,
                    new.session
                )));
            }
            meta.depth + 1
        }
        None => 0,
    };
    if let Some(revised) = new.revises {
        read::metadata(store, revised)?;
    }
    let now = to_millis(ctx.now.unwrap_or_else(Timestamp::now));
    let metadata = ThoughtMeta {
        session: new.session.clone(),
        depth,
        agent: ctx.agent.as_deref().map(crate::secrets::unsecret),
        model: new.model.clone(),
        number: new.number,
        branch: new.branch.clone(),
        revises: new.revises.map(|r| r.to_string()),
        created: now,
        elapsed_ms: new.elapsed_ms,
    };
    let id = write_thought_commit(store, new, &metadata, ctx, now)?;
    ensure_session(store, &new.session, now, ctx)?;
    let message = Message {
        subject: format!(
            "record thought {} (depth {depth}): {}",
            short(&id.to_string()),
            first_line(&new.text)
        ),
        body: None,
        trailers: {
            let mut t = trailers(ctx, "thought", &new.session);
            t.push((THOUGHT_TRAILER.into(), id.to_string()));
            t
        },
    };
    let (_, ledger) = store.transact_ref(&session_ref(&new.session), |_| {
        let write = RefWrite {
            merge_parent: Some(id),
            ..RefWrite::on_tip(Vec::new(), message.clone())
        };
        Ok((write, ()))
    })?;
    write_scores_note(store, &new.session, id, &new.scores, ctx)?;
    Ok(AddedThought {
        id,
        metadata,
        ledger: ledger
            .ok_or_else(|| Error::ThoughtNotFound("the ledger was not written".into()))?,
        secrets,
    })
}

/// Screens a thought's free text (its text, model, branch id and every string of its trace)
/// under the store's secret policy: redacted in place, or refused under block.
fn screen_thought(store: &Store, new: &mut NewThought) -> Result<Option<SecretReport>> {
    let policy = store.secret_policy()?;
    let mut trace = Vec::new();
    for event in new.trace.iter_mut() {
        json_strings(event, &mut trace);
    }
    let mut fields: Vec<(&str, &mut String)> = vec![("text", &mut new.text)];
    if let Some(model) = new.model.as_mut() {
        fields.push(("model", model));
    }
    if let Some(branch) = new.branch.as_mut() {
        fields.push(("branch", branch));
    }
    fields.extend(trace.into_iter().map(|s| ("trace", s)));
    secrets::screen(&mut fields, policy)
}

/// Every string value in a JSON value (object keys are not values: the store's guard refuses
/// a secret in one).
fn json_strings<'a>(value: &'a mut serde_json::Value, out: &mut Vec<&'a mut String>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}

fn write_thought_commit(
    store: &Store,
    new: &NewThought,
    metadata: &ThoughtMeta,
    ctx: &WriteContext,
    now: Timestamp,
) -> Result<Oid> {
    let repo = store.repo();
    let mut text = new.text.trim_end().to_string();
    text.push('\n');
    let mut trace = String::new();
    for event in &new.trace {
        trace.push_str(&serde_json::to_string(event).map_err(|e| json_error("trace", e))?);
        trace.push('\n');
    }
    let files: [(&str, Vec<u8>); 4] = [
        ("metadata.json", to_json(metadata, "metadata.json")?),
        ("scores.json", to_json(&new.scores, "scores.json")?),
        ("thought.md", text.into_bytes()),
        ("trace.jsonl", trace.into_bytes()),
    ];
    let mut builder = repo.treebuilder(None)?;
    for (name, content) in &files {
        builder.insert(
            name,
            store.write_blob(name, content)?,
            FileMode::Blob.into(),
        )?;
    }
    let tree = repo.find_tree(builder.write()?)?;
    let parent = new.parent.map(|p| repo.find_commit(p)).transpose()?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let message = Message {
        subject: format!("thought: {}", first_line(&new.text)),
        body: None,
        trailers: {
            let mut t = trailers(ctx, "thought", &new.session);
            t.push(("Lore-Score".into(), format!("{:.4}", new.scores.combined)));
            t
        },
    };
    let sig = signature(store, now)?;
    let message = message.render();
    store.guard("the thought's commit message", message.as_bytes())?;
    Ok(repo.commit(None, &sig, &sig, &message, &tree, &parents)?)
}

fn write_scores_note(
    store: &Store,
    session: &str,
    id: Oid,
    scores: &Scores,
    ctx: &WriteContext,
) -> Result<Oid> {
    scores::write_version(
        store,
        session,
        id,
        scores,
        ctx,
        trailers(ctx, "score", session),
    )
}

/// Replaces a thought's current scores (a new scored version; `scores.json` keeps the first).
/// Returns the thought's metadata.
pub fn rescore(store: &Store, id: Oid, scores: &Scores, ctx: &WriteContext) -> Result<ThoughtMeta> {
    scores.validate()?;
    let meta = read::metadata(store, id)?;
    write_scores_note(store, &meta.session, id, scores, ctx)?;
    Ok(meta)
}

/// Marks a thought's outcome (success or failed): a new mark, newer than the opposite one,
/// which stays as history and no longer counts. Returns the ref.
pub fn mark_outcome(store: &Store, id: Oid, outcome: Outcome) -> Result<(String, ThoughtMeta)> {
    mark_outcome_by(store, id, outcome, &WriteContext::default())
}

/// [`mark_outcome`] by a writer (its agent in the mark's trailers, its clock).
pub fn mark_outcome_by(
    store: &Store,
    id: Oid,
    outcome: Outcome,
    ctx: &WriteContext,
) -> Result<(String, ThoughtMeta)> {
    let opposite = match outcome {
        Outcome::Success => Outcome::Failed,
        Outcome::Failed => Outcome::Success,
        Outcome::Best => {
            return Err(Error::Invalid {
                what: "outcome",
                value: "best".into(),
                reason: "the best thought is chosen by finishing the session".into(),
            });
        }
    };
    let meta = read::metadata(store, id)?;
    let hex = id.to_string();
    let name = outcome_ref(&meta.session, outcome, &hex);
    let now = to_millis(ctx.now.unwrap_or_else(Timestamp::now)).as_millisecond();
    let other = outcome_ref(&meta.session, opposite, &hex);
    marks::set(
        store,
        &name,
        id,
        now,
        &[other],
        trailers(ctx, "outcome", &meta.session),
    )?;
    Ok((name, meta))
}

/// A lesson to keep after a session: answer-free advice under a topic.
#[derive(Clone, Debug)]
pub struct Lesson {
    /// The topic (a key: `a-z 0-9 -`), one memory per topic.
    pub topic: String,
    /// The lesson.
    pub text: String,
}

/// Finishes a session: the lesson (if any) is written as the keyed memory `lessons/<topic>`
/// (a new version when the topic has one), then the best thought is merged into the ledger with
/// `done.json`, and `best` points at it. A lesson that contains the answer is refused before
/// anything is written.
pub fn finish(
    lore: &mut Lore,
    session: &str,
    best: Oid,
    answer: Option<&str>,
    lesson: Option<&Lesson>,
    ctx: &WriteContext,
) -> Result<(Finished, Option<Written>)> {
    check_finish(lore.store(), session, best, answer, lesson)?;
    let written = match lesson {
        Some(lesson) => Some(write_lesson(lore, session, best, lesson, ctx)?),
        None => None,
    };
    let store = lore.store();
    let mut answer = answer.map(str::to_string);
    if let Some(text) = answer.as_mut()
        && let Some(report) = secrets::screen(&mut [("answer", text)], store.secret_policy()?)?
    {
        store.warn(format!("the answer: {}", report.describe()));
    }
    let best_ref = outcome_ref(session, Outcome::Best, "");
    let stamp = marks::set(
        store,
        &best_ref,
        best,
        to_millis(ctx.now.unwrap_or_else(Timestamp::now)).as_millisecond(),
        &[],
        trailers(ctx, "done", session),
    )?;
    let now = Timestamp::from_millisecond(stamp).map_err(|e| json_error(DONE_FILE, e))?;
    let finished = Finished {
        best: best.to_string(),
        answer,
        lesson: written.as_ref().map(|w| w.path.clone()),
        finished: now,
    };
    merge_done(store, session, best, &finished, ctx)?;
    Ok((finished, written))
}

/// What [`finish`] checks before writing anything: `best` is a thought of `session`, and the
/// lesson has a valid topic and does not contain the answer.
fn check_finish(
    store: &Store,
    session: &str,
    best: Oid,
    answer: Option<&str>,
    lesson: Option<&Lesson>,
) -> Result<()> {
    check_session(session)?;
    let meta = read::metadata(store, best)?;
    if meta.session != session {
        return Err(Error::ThoughtNotFound(format!(
            "thought {} belongs to session {:?}, not {session:?}",
            short(&best.to_string()),
            meta.session
        )));
    }
    if let Some(lesson) = lesson {
        Key::parse(&lesson.topic)?;
        if let Some(answer) = answer.map(str::trim).filter(|a| !a.is_empty())
            && lesson.text.to_lowercase().contains(&answer.to_lowercase())
        {
            return Err(Error::Invalid {
                what: "lesson",
                value: lesson.topic.clone(),
                reason: "a lesson must not contain the answer; say what to do, not what came out"
                    .into(),
            });
        }
    }
    Ok(())
}

/// Merges the best path into the session's ledger with `done.json` (the ledger's merge commit
/// has `best` as its second parent).
fn merge_done(
    store: &Store,
    session: &str,
    best: Oid,
    finished: &Finished,
    ctx: &WriteContext,
) -> Result<()> {
    let content = to_json(finished, DONE_FILE)?;
    let message = Message {
        subject: format!(
            "done {session}: merge best path ending at {}",
            short(&best.to_string())
        ),
        body: None,
        trailers: {
            let mut t = trailers(ctx, "done", session);
            t.push((THOUGHT_TRAILER.into(), best.to_string()));
            t
        },
    };
    store.transact_ref(&session_ref(session), |snap| {
        if snap.commit().is_none() {
            return Err(Error::ThoughtNotFound(format!(
                "no reasoning session {session:?}"
            )));
        }
        let edits = vec![Edit::Upsert {
            path: DONE_FILE.into(),
            content: content.clone(),
        }];
        let write = RefWrite {
            merge_parent: Some(best),
            ..RefWrite::on_tip(edits, message.clone())
        };
        Ok((write, ()))
    })?;
    Ok(())
}

fn write_lesson(
    lore: &mut Lore,
    session: &str,
    best: Oid,
    lesson: &Lesson,
    ctx: &WriteContext,
) -> Result<Written> {
    lore.add_namespace(
        LESSONS_NAMESPACE,
        "answer-free lessons from reasoning sessions, one per topic",
        ctx,
    )?;
    let summary: String = first_line(&lesson.text).chars().take(100).collect();
    let body = format!(
        "{}\n\nFrom reasoning session `{session}`, best thought `{}`.\n",
        lesson.text.trim_end(),
        short(&best.to_string())
    );
    let key = format!("{LESSONS_NAMESPACE}/{}", lesson.topic);
    match lore.resolve(&key) {
        Ok(_) => {
            let patch = crate::memory::Patch {
                summary: Some(summary),
                body: Some(body),
                ..Default::default()
            };
            lore.update(&key, &patch, ctx)
        }
        Err(Error::NotFound(_)) => lore.remember(
            &NewMemory {
                namespace: LESSONS_NAMESPACE.into(),
                key: Some(lesson.topic.clone()),
                summary,
                body,
                tags: vec!["lesson".into()],
                ..Default::default()
            },
            ctx,
        ),
        Err(e) => Err(e),
    }
}
