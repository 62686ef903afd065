//! The thoughts index: SQLite derived from the session ledgers, the scores notes and the outcome
//! refs (`<git common dir>/lore/thoughts.sqlite3`). It records the tips it was built from per
//! session and catches up when they move: new ledger commits are read back to the recorded tip
//! (a ledger that no longer contains it is read whole again), changed notes by a tree diff,
//! outcome refs by comparing their list. Delete the file at will: it is rebuilt.

use std::collections::BTreeMap;
use std::path::PathBuf;

use git2::Oid;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{OUTCOME_REF_PREFIX, SCORES_NOTES_PREFIX, SESSION_REF_PREFIX, Scores, read, short};
use crate::error::{Error, Result};
use crate::store::Store;

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE sessions(
  session TEXT PRIMARY KEY,
  ledger TEXT NOT NULL,
  notes TEXT,
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
  text TEXT NOT NULL
);
CREATE INDEX thoughts_session ON thoughts(session, number);
CREATE INDEX thoughts_parent ON thoughts(parent);
CREATE VIRTUAL TABLE thoughts_fts USING fts5(text, content='thoughts', content_rowid='rowid',
  tokenize='porter unicode61');
";

/// The thoughts index.
pub struct ThoughtIndex {
    pub(crate) conn: Connection,
}

/// Where the thoughts index lives.
pub fn index_path(store: &Store) -> PathBuf {
    store.common_dir().join("lore").join("thoughts.sqlite3")
}

fn open_connection(path: &std::path::Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
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
                 ORDER BY outcome IS NULL, score DESC, rowid DESC LIMIT 1",
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
            for table in ["thoughts_fts", "thoughts", "sessions"] {
                tx.execute_batch(&format!("DROP TABLE IF EXISTS {table};"))?;
            }
            tx.execute_batch(SCHEMA)?;
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
    outcomes: String,
}

fn catch_up(conn: &mut Connection, store: &Store) -> Result<()> {
    let ledgers = refs_under(store, SESSION_REF_PREFIX)?;
    let notes = refs_under(store, SCORES_NOTES_PREFIX)?;
    let mut outcomes: BTreeMap<String, Vec<(String, Oid)>> = BTreeMap::new();
    for (rest, target) in refs_under(store, OUTCOME_REF_PREFIX)? {
        if let Some((session, name)) = rest.split_once('/') {
            outcomes
                .entry(session.to_string())
                .or_default()
                .push((name.to_string(), target));
        }
    }
    let digest = |session: &str| -> String {
        outcomes
            .get(session)
            .map(|list| {
                list.iter()
                    .map(|(n, t)| format!("{n}={t}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    // Fast path: nothing moved since the last catch-up.
    let recorded = read_recorded(conn)?;
    let unchanged = recorded.len() == ledgers.len()
        && ledgers.iter().all(|(session, tip)| {
            recorded.get(session).is_some_and(|r| {
                r.ledger == tip.to_string()
                    && r.notes == notes.get(session).map(|n| n.to_string())
                    && r.outcomes == digest(session)
            })
        });
    if unchanged {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let recorded = read_recorded(&tx)?;
    for session in recorded.keys() {
        if !ledgers.contains_key(session) {
            delete_session(&tx, session)?;
            tx.execute("DELETE FROM sessions WHERE session = ?1", [session])?;
        }
    }
    for (session, tip) in &ledgers {
        let rec = recorded.get(session);
        let mut notes_from = rec.and_then(|r| r.notes.as_deref()).map(str::to_string);
        let mut outcomes_changed = rec.is_none_or(|r| r.outcomes != digest(session));
        if rec.is_none_or(|r| r.ledger != tip.to_string()) {
            let known = rec.and_then(|r| Oid::from_str(&r.ledger).ok());
            let rebuilt = apply_ledger(&tx, store, session, *tip, known)?;
            if rebuilt {
                notes_from = None;
                outcomes_changed = true;
            }
        }
        let notes_tip = notes.get(session).copied();
        if notes_tip.map(|n| n.to_string()) != notes_from {
            let from = notes_from
                .and_then(|n| Oid::from_str(&n).ok())
                .filter(|n| store.has_commit(*n));
            apply_notes(&tx, store, from, notes_tip)?;
        }
        if outcomes_changed {
            apply_outcomes(&tx, session, outcomes.get(session).map(Vec::as_slice))?;
        }
        tx.execute(
            "INSERT INTO sessions(session, ledger, notes, outcomes) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(session) DO UPDATE SET ledger = ?2, notes = ?3, outcomes = ?4",
            params![
                session,
                tip.to_string(),
                notes_tip.map(|n| n.to_string()),
                digest(session)
            ],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn read_recorded(conn: &Connection) -> Result<BTreeMap<String, Recorded>> {
    let mut stmt = conn.prepare_cached("SELECT session, ledger, notes, outcomes FROM sessions")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Recorded {
                ledger: r.get(1)?,
                notes: r.get(2)?,
                outcomes: r.get(3)?,
            },
        ))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

fn delete_session(conn: &Connection, session: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO thoughts_fts(thoughts_fts, rowid, text)
         SELECT 'delete', rowid, text FROM thoughts WHERE session = ?1",
        [session],
    )?;
    conn.execute("DELETE FROM thoughts WHERE session = ?1", [session])?;
    Ok(())
}

/// Reads the ledger from `tip` back to `known`; returns whether the session was read whole
/// (its recorded tip is not on the ledger any more).
fn apply_ledger(
    conn: &Connection,
    store: &Store,
    session: &str,
    tip: Oid,
    known: Option<Oid>,
) -> Result<bool> {
    let repo = store.repo();
    let mut records = Vec::new();
    let mut finished = false;
    let mut found_known = false;
    let mut at = Some(repo.find_commit(tip)?);
    while let Some(commit) = at {
        if Some(commit.id()) == known {
            found_known = true;
            break;
        }
        if commit.parent_count() == 2 {
            let message = commit.message_raw().unwrap_or("");
            if message.contains("\nLore-Action: done") {
                finished = true;
            } else {
                records.push(commit.parent_id(1)?);
            }
        }
        at = commit.parent(0).ok();
    }
    let rebuilt = !found_known;
    if rebuilt {
        delete_session(conn, session)?;
    }
    records.reverse();
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO thoughts(id, session, parent, depth, number, branch, created,
           score, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut fts = conn.prepare_cached("INSERT INTO thoughts_fts(rowid, text) VALUES (?1, ?2)")?;
    let mut parents = Vec::new();
    for id in records {
        let s = read::stored(store, id)?;
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
            fts.execute(params![conn.last_insert_rowid(), s.text])?;
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
    if finished || rebuilt {
        conn.execute(
            "INSERT INTO sessions(session, ledger, finished) VALUES (?1, '', ?2)
             ON CONFLICT(session) DO UPDATE SET finished = ?2",
            params![session, finished],
        )?;
    }
    Ok(rebuilt)
}

fn apply_notes(conn: &Connection, store: &Store, from: Option<Oid>, to: Option<Oid>) -> Result<()> {
    let mut update = conn.prepare_cached("UPDATE thoughts SET score = ?2 WHERE id = ?1")?;
    for change in store.diff(from, to)? {
        let hex: String = change.path.chars().filter(|c| *c != '/').collect();
        let Some(blob) = change.new else { continue };
        let scores = match serde_json::from_slice::<Scores>(&store.read_blob(blob)?) {
            Ok(scores) => scores,
            Err(e) => {
                store.warn(format!(
                    "the score note {} is not readable ({e}); its thought keeps the score it \
                     was written with",
                    change.path
                ));
                continue;
            }
        };
        update.execute(params![hex, scores.combined])?;
    }
    Ok(())
}

fn apply_outcomes(conn: &Connection, session: &str, refs: Option<&[(String, Oid)]>) -> Result<()> {
    conn.execute(
        "UPDATE thoughts SET outcome = NULL, best = 0 WHERE session = ?1",
        [session],
    )?;
    for (name, target) in refs.unwrap_or_default() {
        let id = target.to_string();
        if name == "best" {
            conn.execute("UPDATE thoughts SET best = 1 WHERE id = ?1", [&id])?;
        } else if let Some((kind, _)) = name.split_once('_')
            && matches!(kind, "success" | "failed")
        {
            conn.execute(
                "UPDATE thoughts SET outcome = ?2 WHERE id = ?1",
                params![id, kind],
            )?;
        }
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
