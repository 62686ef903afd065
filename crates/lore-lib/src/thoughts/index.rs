//! The thoughts index: SQLite derived from the session ledgers, the scored versions (and the
//! scores notes of the older layout) and the outcome refs (`<git common dir>/lore/thoughts.sqlite3`).
//! It records the tips it was built from per session and catches up when they move: the ledger
//! commits new since the recorded tip (both sides of a ledger merge; a ledger that no longer
//! contains it is read whole again), changed versions and notes by a tree diff, outcome refs by
//! comparing their list. The texts' BM25 postings are kept beside FTS5 by the memory index's
//! postings code ([`crate::index::postings`], a thought's text as its one weighted column), so a
//! free-text search scores every match in one pass. Delete the file at will: it is rebuilt.

use std::collections::BTreeMap;
use std::path::PathBuf;

use git2::Oid;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::write::DONE_FILE;
use super::{
    OUTCOME_REF_PREFIX, SCORES_NOTES_PREFIX, SCORES_REF_PREFIX, SESSION_REF_PREFIX, Scores, marks,
    read, scores, short,
};
use crate::error::{Error, Result};
use crate::index::postings::PendingPostings;
use crate::store::Store;

const SCHEMA_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE sessions(
  session TEXT PRIMARY KEY,
  ledger TEXT NOT NULL,
  notes TEXT,
  scores TEXT,
  outcomes TEXT NOT NULL DEFAULT '',
  finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE thoughts(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session TEXT NOT NULL,
  parent TEXT,
  depth INTEGER NOT NULL,
  number INTEGER,
  branch TEXT,
  created INTEGER NOT NULL,
  score REAL NOT NULL,
  outcome TEXT,
  best INTEGER NOT NULL DEFAULT 0,
  children INTEGER NOT NULL DEFAULT 0,
  text TEXT NOT NULL,
  outcome_value REAL GENERATED ALWAYS AS (CASE WHEN best = 1 OR outcome = 'success' THEN 1.0
    WHEN outcome = 'failed' THEN 0.0 ELSE 0.5 END) VIRTUAL
);
CREATE INDEX thoughts_session ON thoughts(session, number);
CREATE INDEX thoughts_parent ON thoughts(parent);
CREATE INDEX thoughts_score ON thoughts(outcome_value, score);
CREATE INDEX thoughts_created ON thoughts(outcome_value, created);
CREATE VIRTUAL TABLE thoughts_fts USING fts5(text, content='thoughts', content_rowid='rowid',
  tokenize='porter unicode61 remove_diacritics 2');
";

/// The thoughts index.
pub struct ThoughtIndex {
    pub(crate) conn: Connection,
}

/// Where the thoughts index lives.
pub fn index_path(store: &Store) -> PathBuf {
    store.common_dir().join("lore").join("thoughts.sqlite3")
}

pub(crate) fn open_connection(path: &std::path::Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    crate::sqlite_plans::keep_plans(&conn)?;
    Ok(conn)
}

impl ThoughtIndex {
    /// Opens (creating or rebuilding as needed) and catches up the index of `store`.
    /// Where the file may not be written (a read-only `.git`), the index is caught up in a
    /// copy in memory and nothing is written.
    pub fn open(store: &Store) -> Result<ThoughtIndex> {
        let path = index_path(store);
        let opened = match path.parent() {
            Some(dir) => std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e)),
            None => Ok(()),
        }
        .and_then(|()| open_connection(&path))
        .and_then(prepare_schema);
        let mut conn = match opened {
            Ok(conn) => conn,
            Err(e) if crate::index::is_write_refusal(&path, &e) => {
                prepare_schema(crate::index::copy_into_memory(&path)?)?
            }
            // A file that is not a database (or is damaged) is derived data: start again.
            Err(e) if crate::index::is_corruption(&e) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(PathBuf::from(p));
                }
                prepare_schema(open_connection(&path)?)?
            }
            Err(e) => return Err(e),
        };
        catch_up(&mut conn, store)?;
        Ok(ThoughtIndex { conn })
    }

    /// Brings the index up to the refs again (after this process wrote).
    pub fn refresh(&mut self, store: &Store) -> Result<()> {
        catch_up(&mut self.conn, store)
    }

    /// The full id of the one thought whose id starts with `prefix` (≥ 4 hex digits).
    pub fn resolve(&self, prefix: &str) -> Result<Oid> {
        let p = prefix.trim().to_lowercase();
        if p.len() < 4 || p.len() > 40 || !p.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::ThoughtNotFound(format!(
                "no thought {prefix:?}: give at least 4 hex digits of its id"
            )));
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM thoughts WHERE id >= ?1 AND id < ?2 LIMIT 3")?;
        let found: Vec<String> = stmt
            .query_map(params![p, format!("{p}g")], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        match found.as_slice() {
            [one] => super::parse_oid(one),
            [] => Err(Error::ThoughtNotFound(format!("no thought {prefix:?}"))),
            _ => Err(Error::Ambiguous {
                query: prefix.to_string(),
                candidates: found.iter().map(|f| short(f).to_string()).collect(),
            }),
        }
    }

    /// How many thoughts a session has, and its branch ids.
    pub fn session_shape(&self, session: &str) -> Result<(usize, Vec<String>)> {
        let count: i64 = self.conn.query_row(
            "SELECT count(*) FROM thoughts WHERE session = ?1",
            [session],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT branch FROM thoughts WHERE session = ?1 AND branch IS NOT NULL
             ORDER BY branch",
        )?;
        let branches = stmt
            .query_map([session], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        Ok((count as usize, branches))
    }

    /// The thought a finished session should keep when none is named: the best-scored thought
    /// marked success, else the best-scored leaf.
    pub fn best_candidate(&self, session: &str) -> Result<Option<Oid>> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM thoughts WHERE session = ?1
                   AND (outcome = 'success' OR (children = 0 AND outcome IS NULL))
                 ORDER BY outcome IS NULL, score DESC, created DESC, id DESC LIMIT 1",
                [session],
                |r| r.get(0),
            )
            .optional()?;
        id.map(|i| super::parse_oid(&i)).transpose()
    }

    /// How many thoughts the index holds.
    pub fn count(&self) -> Result<usize> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM thoughts", [], |r| r.get(0))?;
        Ok(n as usize)
    }
}

fn prepare_schema(mut conn: Connection) -> Result<Connection> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version != SCHEMA_VERSION {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            for table in [
                "thoughts_fts",
                "thoughts",
                "sessions",
                "meta",
                "postings",
                "postings_tail",
            ] {
                tx.execute_batch(&format!("DROP TABLE IF EXISTS {table};"))?;
            }
            tx.execute_batch(SCHEMA)?;
            tx.execute_batch(crate::index::schema::META)?;
            tx.execute_batch(crate::index::postings::TABLES)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        tx.commit()?;
    }
    Ok(conn)
}

/// The refs under `prefix`, by the rest of their name.
fn refs_under(store: &Store, prefix: &str) -> Result<BTreeMap<String, Oid>> {
    let mut out = BTreeMap::new();
    for r in store.repo().references_glob(&format!("{prefix}*"))? {
        let r = r?;
        if let (Ok(name), Some(target)) = (r.name(), r.target()) {
            out.insert(name[prefix.len()..].to_string(), target);
        }
    }
    Ok(out)
}

struct Recorded {
    ledger: String,
    notes: Option<String>,
    scores: Option<String>,
    outcomes: String,
}

/// The tips of every ref of reasoning sessions, by session.
struct Tips {
    ledgers: BTreeMap<String, Oid>,
    notes: BTreeMap<String, Oid>,
    scores: BTreeMap<String, Oid>,
    outcomes: BTreeMap<String, Vec<(String, Oid)>>,
}

impl Tips {
    fn read(store: &Store) -> Result<Tips> {
        let mut outcomes: BTreeMap<String, Vec<(String, Oid)>> = BTreeMap::new();
        for (rest, target) in refs_under(store, OUTCOME_REF_PREFIX)? {
            if let Some((session, name)) = rest.split_once('/') {
                outcomes
                    .entry(session.to_string())
                    .or_default()
                    .push((name.to_string(), target));
            }
        }
        Ok(Tips {
            ledgers: refs_under(store, SESSION_REF_PREFIX)?,
            notes: refs_under(store, SCORES_NOTES_PREFIX)?,
            scores: refs_under(store, SCORES_REF_PREFIX)?,
            outcomes,
        })
    }

    fn digest(&self, session: &str) -> String {
        self.outcomes
            .get(session)
            .map(|list| {
                list.iter()
                    .map(|(n, t)| format!("{n}={t}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    }

    fn notes(&self, session: &str) -> Option<String> {
        self.notes.get(session).map(Oid::to_string)
    }

    fn scores(&self, session: &str) -> Option<String> {
        self.scores.get(session).map(Oid::to_string)
    }

    fn unchanged(&self, recorded: &BTreeMap<String, Recorded>) -> bool {
        recorded.len() == self.ledgers.len()
            && self.ledgers.iter().all(|(session, tip)| {
                recorded.get(session).is_some_and(|r| {
                    r.ledger == tip.to_string()
                        && r.notes == self.notes(session)
                        && r.scores == self.scores(session)
                        && r.outcomes == self.digest(session)
                })
            })
    }
}

fn catch_up(conn: &mut Connection, store: &Store) -> Result<()> {
    let tips = Tips::read(store)?;
    // Fast path: nothing moved since the last catch-up.
    if tips.unchanged(&read_recorded(conn)?) {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let recorded = read_recorded(&tx)?;
    let mut postings = PendingPostings::default();
    for session in recorded.keys() {
        if !tips.ledgers.contains_key(session) {
            delete_session(&tx, session, &mut postings)?;
            tx.execute("DELETE FROM sessions WHERE session = ?1", [session])?;
        }
    }
    for (session, tip) in &tips.ledgers {
        let rec = recorded.get(session);
        let mut notes_from = rec.and_then(|r| r.notes.clone());
        let mut scores_from = rec.and_then(|r| r.scores.clone());
        let mut outcomes_changed = rec.is_none_or(|r| r.outcomes != tips.digest(session));
        if rec.is_none_or(|r| r.ledger != tip.to_string()) {
            let known = rec.and_then(|r| Oid::from_str(&r.ledger).ok());
            let rebuilt = apply_ledger(&tx, store, (session, *tip), known, &mut postings)?;
            if rebuilt {
                notes_from = None;
                scores_from = None;
                outcomes_changed = true;
            }
        }
        let known = |from: Option<String>| {
            from.and_then(|n| Oid::from_str(&n).ok())
                .filter(|n| store.has_commit(*n))
        };
        let versions_tip = tips.scores.get(session).copied();
        let versions = store.snapshot(versions_tip)?;
        if tips.notes(session) != notes_from {
            let to = tips.notes.get(session).copied();
            apply_notes(&tx, store, &versions, known(notes_from), to)?;
        }
        if tips.scores(session) != scores_from {
            apply_versions(&tx, store, &versions, known(scores_from))?;
        }
        if outcomes_changed {
            apply_outcomes(&tx, store, session, tips.outcomes.get(session))?;
        }
        tx.execute(
            "INSERT INTO sessions(session, ledger, notes, scores, outcomes)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(session) DO UPDATE SET ledger = ?2, notes = ?3, scores = ?4, outcomes = ?5",
            params![
                session,
                tip.to_string(),
                tips.notes(session),
                tips.scores(session),
                tips.digest(session)
            ],
        )?;
    }
    postings.apply(&tx)?;
    tx.commit()?;
    Ok(())
}

fn read_recorded(conn: &Connection) -> Result<BTreeMap<String, Recorded>> {
    let mut stmt =
        conn.prepare_cached("SELECT session, ledger, notes, scores, outcomes FROM sessions")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Recorded {
                ledger: r.get(1)?,
                notes: r.get(2)?,
                scores: r.get(3)?,
                outcomes: r.get(4)?,
            },
        ))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

fn delete_session(conn: &Connection, session: &str, postings: &mut PendingPostings) -> Result<()> {
    let mut stmt = conn.prepare_cached("SELECT rowid, text FROM thoughts WHERE session = ?1")?;
    let mut rows = stmt.query([session])?;
    while let Some(r) = rows.next()? {
        postings.remove(r.get(0)?, r.get(1)?, String::new(), String::new());
    }
    conn.execute(
        "INSERT INTO thoughts_fts(thoughts_fts, rowid, text)
         SELECT 'delete', rowid, text FROM thoughts WHERE session = ?1",
        [session],
    )?;
    conn.execute("DELETE FROM thoughts WHERE session = ?1", [session])?;
    Ok(())
}

/// The thoughts a ledger recorded since `known` (every ledger commit reachable from `tip` and
/// not from `known`: both sides of a merge), and whether the whole ledger was read (`known` is
/// not on it any more).
fn ledger_records(store: &Store, tip: Oid, known: Option<Oid>) -> Result<(Vec<Oid>, bool)> {
    let repo = store.repo();
    let known = match known {
        Some(k) if k == tip || (store.has_commit(k) && repo.graph_descendant_of(tip, k)?) => {
            Some(k)
        }
        _ => None,
    };
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    if let Some(k) = known {
        walk.hide(k)?;
    }
    let mut records = Vec::new();
    for id in walk {
        let commit = repo.find_commit(id?)?;
        if commit.parent_count() == 2
            && commit
                .message_raw()
                .is_ok_and(|m| m.contains("\nLore-Action: thought"))
        {
            records.push(commit.parent_id(1)?);
        }
    }
    Ok((records, known.is_none()))
}

/// Reads the ledger's thoughts new since `known` into the index (in the order they were
/// written: time, then id); returns whether the session was read whole.
fn apply_ledger(
    conn: &Connection,
    store: &Store,
    (session, tip): (&str, Oid),
    known: Option<Oid>,
    postings: &mut PendingPostings,
) -> Result<bool> {
    let (ids, rebuilt) = ledger_records(store, tip, known)?;
    let finished = store.snapshot(Some(tip))?.blob_id(DONE_FILE)?.is_some();
    if rebuilt {
        delete_session(conn, session, postings)?;
    }
    let mut records = Vec::new();
    for id in ids {
        records.push((id, read::stored(store, id)?));
    }
    records.sort_by_key(|(id, s)| (s.metadata.created, *id));
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO thoughts(id, session, parent, depth, number, branch, created,
           score, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut fts = conn.prepare_cached("INSERT INTO thoughts_fts(rowid, text) VALUES (?1, ?2)")?;
    let mut parents = Vec::new();
    for (id, s) in records {
        let parent = s.parent.map(|p| p.to_string());
        let added = insert.execute(params![
            id.to_string(),
            session,
            parent,
            s.metadata.depth,
            s.metadata.number,
            s.metadata.branch,
            s.metadata.created.as_millisecond(),
            s.scores.combined,
            s.text,
        ])?;
        if added == 1 {
            let rowid = conn.last_insert_rowid();
            fts.execute(params![rowid, s.text])?;
            postings.add(rowid, &s.text, "", "");
            parents.extend(parent);
        }
    }
    parents.sort();
    parents.dedup();
    let mut count = conn.prepare_cached(
        "UPDATE thoughts SET children = (SELECT count(*) FROM thoughts c WHERE c.parent = ?1)
         WHERE id = ?1",
    )?;
    for p in parents {
        count.execute([p])?;
    }
    conn.execute(
        "INSERT INTO sessions(session, ledger, finished) VALUES (?1, '', ?2)
         ON CONFLICT(session) DO UPDATE SET finished = ?2",
        params![session, finished],
    )?;
    Ok(rebuilt)
}

fn read_scores(store: &Store, blob: Oid, what: &str) -> Result<Option<Scores>> {
    match serde_json::from_slice::<Scores>(&store.read_blob(blob)?) {
        Ok(scores) => Ok(Some(scores)),
        Err(e) => {
            store.warn(format!(
                "the score {what} is not readable ({e}); its thought keeps the score it was \
                 written with"
            ));
            Ok(None)
        }
    }
}

/// Scores notes of the older layout: each counts only for a thought with no scored version.
fn apply_notes(
    conn: &Connection,
    store: &Store,
    versions: &crate::store::Snapshot<'_>,
    from: Option<Oid>,
    to: Option<Oid>,
) -> Result<()> {
    let mut update = conn.prepare_cached("UPDATE thoughts SET score = ?2 WHERE id = ?1")?;
    for change in store.diff(from, to)? {
        let hex: String = change.path.chars().filter(|c| *c != '/').collect();
        let Some(blob) = change.new else { continue };
        let Ok(id) = Oid::from_str(&hex) else {
            continue;
        };
        if scores::current_in(versions, id)?.is_some() {
            continue;
        }
        if let Some(scores) = read_scores(store, blob, &format!("note {}", change.path))? {
            update.execute(params![hex, scores.combined])?;
        }
    }
    Ok(())
}

/// Scored versions: each thought with a new version takes its current one.
fn apply_versions(
    conn: &Connection,
    store: &Store,
    versions: &crate::store::Snapshot<'_>,
    from: Option<Oid>,
) -> Result<()> {
    let mut update = conn.prepare_cached("UPDATE thoughts SET score = ?2 WHERE id = ?1")?;
    let mut touched: Vec<String> = Vec::new();
    for change in store.diff(from, versions.commit())? {
        let mut parts = change.path.split('/');
        if let (Some(a), Some(b)) = (parts.next(), parts.next()) {
            touched.push(format!("{a}{b}"));
        }
    }
    touched.sort();
    touched.dedup();
    for hex in touched {
        let Ok(id) = Oid::from_str(&hex) else {
            continue;
        };
        let Some((name, blob)) = versions.files_in(&scores::thought_dir(id))?.pop() else {
            continue;
        };
        // A damaged newest version is reported; the newest readable one counts.
        read_scores(store, blob, &format!("version {hex}/{name}"))?;
        if let Some(scores) = scores::current_in(versions, id)? {
            update.execute(params![hex, scores.combined])?;
        }
    }
    Ok(())
}

fn apply_outcomes(
    conn: &Connection,
    store: &Store,
    session: &str,
    refs: Option<&Vec<(String, Oid)>>,
) -> Result<()> {
    conn.execute(
        "UPDATE thoughts SET outcome = NULL, best = 0 WHERE session = ?1",
        [session],
    )?;
    let refs = refs.map(Vec::as_slice).unwrap_or_default();
    let (current, best) = marks::outcomes(store.repo(), refs)?;
    for (id, kind) in current {
        conn.execute(
            "UPDATE thoughts SET outcome = ?2 WHERE id = ?1",
            params![id.to_string(), kind],
        )?;
    }
    if let Some(best) = best {
        conn.execute(
            "UPDATE thoughts SET best = 1 WHERE id = ?1",
            [best.to_string()],
        )?;
    }
    Ok(())
}

impl ThoughtIndex {
    /// The parent of an indexed thought.
    pub fn parent_of(&self, id: Oid) -> Result<Option<Oid>> {
        let parent: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT parent FROM thoughts WHERE id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        match parent {
            None => Err(Error::ThoughtNotFound(format!(
                "no thought {}",
                short(&id.to_string())
            ))),
            Some(p) => p.map(|p| super::parse_oid(&p)).transpose(),
        }
    }
}

/// One thought of a session as the index holds it: enough to draw the tree.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct IndexedThought {
    /// The thought's id.
    pub id: String,
    /// Its parent thought (none for a root).
    pub parent: Option<String>,
    /// Distance from the root.
    pub depth: u32,
    /// The current combined score.
    pub score: f64,
    /// `success` or `failed`, when marked.
    pub outcome: Option<String>,
    /// Whether it is the session's best thought (`done`).
    pub best: bool,
    /// The thought's text.
    pub text: String,
}

impl ThoughtIndex {
    /// Every thought of a session, in the order they were written.
    pub fn session_thoughts(&self, session: &str) -> Result<Vec<IndexedThought>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, parent, depth, score, outcome, best, text FROM thoughts
             WHERE session = ?1 ORDER BY rowid",
        )?;
        let rows = stmt
            .query_map([session], |r| {
                Ok(IndexedThought {
                    id: r.get(0)?,
                    parent: r.get(1)?,
                    depth: r.get::<_, i64>(2)?.max(0) as u32,
                    score: r.get(3)?,
                    outcome: r.get(4)?,
                    best: r.get::<_, i64>(5)? != 0,
                    text: r.get(6)?,
                })
            })?
            .collect::<std::result::Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
impl ThoughtIndex {
    /// An empty index in memory, for tests that fill its tables directly.
    pub(crate) fn empty_in_memory() -> Result<ThoughtIndex> {
        Ok(ThoughtIndex {
            conn: prepare_schema(Connection::open_in_memory()?)?,
        })
    }
}
