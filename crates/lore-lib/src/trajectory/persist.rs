//! The index kept in a SQLite file, so a process can read back what an earlier one built
//! instead of embedding every step and joining it to its units again, and read only what a
//! query needs. One row per kept index (`built`: its stamp, a core blob, the summary tree) holds
//! what every query reads — each step's tokens, vector, terms and units, the units, the
//! similarity history, the document frequencies and the vector total; each step's id, JSON and
//! line is a row of `step`, read only for the steps a query returns; each word's term id and
//! postings is a row of `term`, read only for the query's words; the tree is read only by the
//! `tree` strategy. Read back, the index answers as the one that was kept; pushing more steps
//! onto it first reads the rest (words, postings, tree, texts), and then gives what pushing
//! them onto a fresh build gives.
//!
//! A kept index is read inside one read transaction, held while the index lives, so a writer
//! replacing it meanwhile is not seen half-way. Whatever does not read back as written (a
//! damaged row, an id out of range) is an error, never a panic.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::Params;
use super::index::{Indexed, StepEntry, TrajectoryIndex};
use super::units::{Unit, View};
use crate::embed::SharedEmbedder;
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"LORETRJ4";
/// The file's layout (`PRAGMA user_version`); a file of another is emptied and made again.
const SCHEMA_VERSION: i64 = 4;

/// Whether `e` is a kept file failing to read back (damaged, or SQLite failing), not a failure
/// of the query itself.
pub fn is_kept_file_failure(e: &Error) -> bool {
    match e {
        Error::Index(_) => true,
        Error::Parse { context, .. } => context == DAMAGED,
        _ => false,
    }
}

/// What a part that does not read back is said to be.
const DAMAGED: &str = "a persisted trajectory index";

fn damaged(what: &str) -> Error {
    Error::Parse {
        context: DAMAGED.into(),
        message: format!("damaged or truncated at {what}"),
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(n as u32);
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn u32s(&mut self, v: &[u32]) {
        self.len(v.len());
        self.raw_u32s(v);
    }
    fn raw_u32s(&mut self, v: &[u32]) {
        for x in v {
            self.u32(*x);
        }
    }
    fn f32s(&mut self, v: &[f32]) {
        self.len(v.len());
        self.raw_f32s(v);
    }
    fn raw_f32s(&mut self, v: &[f32]) {
        for x in v {
            self.f32(*x);
        }
    }
    fn i8s(&mut self, v: &[i8]) {
        self.0.extend(v.iter().map(|&x| x as u8));
    }
}

/// Reads a blob of `left` bytes from its start, in chunks, without copying it whole first: a
/// field is decoded from the buffered chunk itself when the chunk holds it.
struct Reader<R: BufRead> {
    source: R,
    left: usize,
    scratch: Vec<u8>,
}

impl<R: BufRead> Reader<R> {
    fn new(source: R, left: usize) -> Self {
        Reader {
            source,
            left,
            scratch: Vec::new(),
        }
    }
    /// Decodes the next `n` bytes with `f`.
    fn read<T>(&mut self, n: usize, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
        // A damaged length never asks for more than the blob holds.
        if n > self.left {
            return Err(damaged("a field"));
        }
        self.left -= n;
        let buffered = self.source.fill_buf().map_err(|_| damaged("a field"))?;
        if buffered.len() >= n {
            let out = f(&buffered[..n]);
            self.source.consume(n);
            return Ok(out);
        }
        self.scratch.resize(n, 0);
        self.source
            .read_exact(&mut self.scratch)
            .map_err(|_| damaged("a field"))?;
        Ok(f(&self.scratch))
    }
    fn take_magic(&mut self) -> Result<bool> {
        self.read(MAGIC.len(), |b| b == MAGIC)
    }
    fn u32(&mut self) -> Result<u32> {
        self.read(4, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn len(&mut self) -> Result<usize> {
        Ok(self.u32()? as usize)
    }
    fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_bits(self.u32()?))
    }
    fn text(&mut self) -> Result<String> {
        let n = self.len()?;
        let bytes = self.read(n, |b| b.to_vec())?;
        String::from_utf8(bytes).map_err(|_| damaged("a text"))
    }
    fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.len()?;
        self.raw_u32s(n)
    }
    fn raw_u32s(&mut self, n: usize) -> Result<Vec<u32>> {
        self.read(n.checked_mul(4).ok_or_else(|| damaged("a list"))?, u32s_of)
    }
    /// A list whose every entry is below `bound`.
    fn u32s_below(&mut self, bound: usize) -> Result<Vec<u32>> {
        let list = self.u32s()?;
        if list.iter().any(|x| *x as usize >= bound) {
            return Err(damaged("an id"));
        }
        Ok(list)
    }
    fn f32s(&mut self) -> Result<Vec<f32>> {
        let n = self.len()?;
        self.raw_f32s(n)
    }
    fn raw_f32s(&mut self, n: usize) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(n.min(self.left / 4));
        self.f32s_into(n, &mut out)?;
        Ok(out)
    }
    /// `n` floats appended to `out`.
    fn f32s_into(&mut self, n: usize, out: &mut Vec<f32>) -> Result<()> {
        self.read(n.checked_mul(4).ok_or_else(|| damaged("a vector"))?, |b| {
            out.extend(
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            )
        })
    }
    /// Whether every byte was read.
    fn at_end(&self) -> bool {
        self.left == 0
    }
}

/// How many nodes each level of the summary tree of `steps` steps holds (`None` where spans
/// would not fit a `usize`).
fn tree_shape(steps: usize, fanout: usize) -> Option<Vec<usize>> {
    let mut shape = Vec::new();
    let mut span = fanout;
    while steps > 0 && shape.last().is_none_or(|n| *n >= 2) {
        shape.push(steps.div_ceil(span));
        span = span.checked_mul(fanout)?;
    }
    // The tree strategy's spans reach one level further.
    span.checked_mul(fanout)?;
    Some(shape)
}

fn u32s_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn view_code(view: View) -> u32 {
    match view {
        View::Entity => 0,
        View::Tool => 1,
        View::Subgoal => 2,
        View::Similarity => 3,
    }
}

fn view_of(code: u32) -> Result<View> {
    Ok(match code {
        0 => View::Entity,
        1 => View::Tool,
        2 => View::Subgoal,
        3 => View::Similarity,
        _ => return Err(damaged("a unit's view")),
    })
}

/// The file of kept indexes.
pub struct KeptFile {
    conn: Rc<Connection>,
}

#[cfg(test)]
impl KeptFile {
    /// The file's connection, for tests of its options.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// A kept index found in the file, with the stamp its keeper gave it; the read transaction it
/// was found in lasts as long as this (and the index read from it).
pub struct KeptSet {
    conn: Rc<Connection>,
    id: i64,
    /// The stamp given when it was kept.
    pub stamp: (String, String),
}

impl Drop for KeptSet {
    fn drop(&mut self) {
        // Ends the read transaction; a failure only means it had ended already.
        let _ = self.conn.execute_batch("COMMIT");
    }
}

/// What a kept index reads only when asked: its words and postings, step texts and tree.
pub(super) struct Stored {
    set: KeptSet,
    tree: OnceCell<Vec<Vec<Vec<f32>>>>,
}

impl KeptFile {
    /// Opens (or makes) the file; a file of another layout is emptied first.
    pub fn open(path: &Path, busy: Duration) -> Result<KeptFile> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(busy)?;
        crate::sqlite_plans::keep_plans(&conn)?;
        // A mapped read keeps reading the core blob to few system calls.
        conn.execute_batch("PRAGMA page_size = 65536; PRAGMA mmap_size = 1073741824;")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
            tx.execute_batch(&format!(
                "DROP TABLE IF EXISTS built;
                 DROP TABLE IF EXISTS step;
                 DROP TABLE IF EXISTS term;
                 CREATE TABLE built (
                     id INTEGER PRIMARY KEY,
                     branch TEXT NOT NULL,
                     key TEXT NOT NULL,
                     tip TEXT NOT NULL,
                     segments TEXT NOT NULL,
                     core BLOB NOT NULL,
                     tree BLOB NOT NULL,
                     UNIQUE (branch, key)
                 );
                 CREATE TABLE step (
                     built INTEGER NOT NULL,
                     position INTEGER NOT NULL,
                     id TEXT NOT NULL,
                     json TEXT NOT NULL,
                     line TEXT NOT NULL,
                     PRIMARY KEY (built, position)
                 ) WITHOUT ROWID;
                 CREATE INDEX step_id ON step (built, id);
                 CREATE TABLE term (
                     built INTEGER NOT NULL,
                     word TEXT NOT NULL,
                     term INTEGER NOT NULL,
                     postings BLOB NOT NULL,
                     PRIMARY KEY (built, word)
                 ) WITHOUT ROWID;
                 PRAGMA user_version = {SCHEMA_VERSION};"
            ))?;
            tx.commit()?;
        }
        Ok(KeptFile {
            conn: Rc::new(conn),
        })
    }

    /// The index kept for `branch` under `key`, if any, in a read transaction of its own.
    pub fn find(&self, branch: &str, key: &str) -> Result<Option<KeptSet>> {
        self.conn.execute_batch("BEGIN")?;
        let found = self
            .conn
            .query_row(
                "SELECT id, tip, segments FROM built WHERE branch = ?1 AND key = ?2",
                params![branch, key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional();
        let set = |(id, tip, segments)| KeptSet {
            conn: self.conn.clone(),
            id,
            stamp: (tip, segments),
        };
        match found {
            Ok(Some(found)) => Ok(Some(set(found))),
            Ok(None) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(None)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        }
    }

    /// Keeps `index` for `branch` under `key` with a stamp (replacing what was kept).
    pub fn save(
        &self,
        branch: &str,
        key: &str,
        stamp: (&str, &str),
        index: &TrajectoryIndex,
    ) -> Result<()> {
        let (core, tree) = (index.encode_core(), index.encode_tree());
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT id FROM built WHERE branch = ?1 AND key = ?2",
                params![branch, key],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(old) = old {
            tx.execute("DELETE FROM step WHERE built = ?1", [old])?;
            tx.execute("DELETE FROM term WHERE built = ?1", [old])?;
            tx.execute("DELETE FROM built WHERE id = ?1", [old])?;
        }
        tx.execute(
            "INSERT INTO built (branch, key, tip, segments, core, tree)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![branch, key, stamp.0, stamp.1, core, tree],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT INTO step (built, position, id, json, line) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for s in 0..index.steps.len() as u32 {
                let (step_id, json, line) = index.texts_of(s)?;
                insert.execute(params![id, s, step_id, json, line])?;
            }
            let mut insert = tx.prepare(
                "INSERT INTO term (built, word, term, postings) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (word, t) in &index.vocab {
                let mut w = Writer(Vec::new());
                w.raw_u32s(&index.postings[*t as usize]);
                insert.execute(params![id, word, t, w.0])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

impl KeptSet {
    /// Reads the kept index's core; its steps are returned as committed on `branch`.
    pub fn index(
        self,
        embedder: Option<SharedEmbedder>,
        params: Params,
        branch: &str,
    ) -> Result<TrajectoryIndex> {
        let mut index = TrajectoryIndex::new(embedder, params);
        let blob = self
            .conn
            .blob_open("main", "built", "core", self.id, true)?;
        let size = blob.len();
        let mut r = Reader::new(std::io::BufReader::with_capacity(1 << 18, blob), size);
        index.decode_core(&mut r, branch)?;
        if !r.at_end() {
            return Err(damaged("its end"));
        }
        drop(r);
        index.stored = Some(Stored {
            set: self,
            tree: OnceCell::new(),
        });
        Ok(index)
    }
}

impl Stored {
    /// A word's term and postings (every step id checked against `steps`).
    fn term(&self, word: &str, steps: usize, terms: usize) -> Result<Option<(u32, Rc<Vec<u32>>)>> {
        let found: Option<(i64, Vec<u8>)> = self
            .set
            .conn
            .prepare_cached("SELECT term, postings FROM term WHERE built = ?1 AND word = ?2")?
            .query_row(params![self.set.id, word], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((t, bytes)) = found else {
            return Ok(None);
        };
        let t = u32::try_from(t)
            .ok()
            .filter(|t| (*t as usize) < terms)
            .ok_or_else(|| damaged("a term"))?;
        let list = u32s_of(&bytes);
        if bytes.len() % 4 != 0 || list.iter().any(|s| *s as usize >= steps) {
            return Err(damaged("a term's postings"));
        }
        Ok(Some((t, Rc::new(list))))
    }

    /// A step's id, JSON and line.
    fn texts(&self, position: u32) -> Result<(String, String, String)> {
        self.set
            .conn
            .prepare_cached("SELECT id, json, line FROM step WHERE built = ?1 AND position = ?2")?
            .query_row(params![self.set.id, position], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?
            .ok_or_else(|| damaged("a step"))
    }

    /// Whether a step has this id.
    fn has_step(&self, id: &str) -> Result<bool> {
        Ok(self
            .set
            .conn
            .prepare_cached("SELECT 1 FROM step WHERE built = ?1 AND id = ?2")?
            .query_row(params![self.set.id, id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// The summary tree, read on first use.
    /// The summary tree of `steps` steps, read on first use: its shape must be the one pushing
    /// them gives (level `L` holds ⌈steps / fanout^(L+1)⌉ nodes, up to a level of one).
    fn tree(&self, dims: usize, steps: usize, fanout: usize) -> Result<&Vec<Vec<Vec<f32>>>> {
        if let Some(tree) = self.tree.get() {
            return Ok(tree);
        }
        let shape = tree_shape(steps, fanout).ok_or_else(|| damaged("the summary tree"))?;
        let blob = self
            .set
            .conn
            .blob_open("main", "built", "tree", self.set.id, true)?;
        let size = blob.len();
        let mut r = Reader::new(std::io::BufReader::with_capacity(1 << 18, blob), size);
        let levels = r.len()?;
        let mut tree = Vec::with_capacity(levels.min(64));
        for _ in 0..levels {
            let nodes = r.len()?;
            let mut level = Vec::with_capacity(nodes.min(1 << 16));
            for _ in 0..nodes {
                level.push(r.raw_f32s(dims)?);
            }
            tree.push(level);
        }
        let shaped =
            tree.len() == shape.len() && tree.iter().zip(&shape).all(|(l, n)| l.len() == *n);
        if !r.at_end() || !shaped {
            return Err(damaged("the summary tree"));
        }
        Ok(self.tree.get_or_init(|| tree))
    }

    /// Every word's term and postings, in term order.
    fn all_terms(&self, steps: usize, terms: usize) -> Result<Vec<(String, Vec<u32>)>> {
        let mut out: Vec<Option<(String, Vec<u32>)>> = (0..terms).map(|_| None).collect();
        let mut stmt = self
            .set
            .conn
            .prepare("SELECT word, term, postings FROM term WHERE built = ?1")?;
        let mut rows = stmt.query([self.set.id])?;
        while let Some(row) = rows.next()? {
            let (word, t, bytes): (String, i64, Vec<u8>) = (row.get(0)?, row.get(1)?, row.get(2)?);
            let list = u32s_of(&bytes);
            let slot = usize::try_from(t)
                .ok()
                .and_then(|t| out.get_mut(t))
                .filter(|slot| slot.is_none())
                .ok_or_else(|| damaged("a term"))?;
            if bytes.len() % 4 != 0 || list.iter().any(|s| *s as usize >= steps) {
                return Err(damaged("a term's postings"));
            }
            *slot = Some((word, list));
        }
        out.into_iter()
            .map(|t| t.ok_or_else(|| damaged("the words")))
            .collect()
    }
}

impl TrajectoryIndex {
    /// What every query reads: per step its tokens, vector, terms and units; the units; the
    /// similarity history; the document frequencies; the vector total.
    fn encode_core(&self) -> Vec<u8> {
        let dims = self.embedder.id().dims;
        let mut w = Writer(Vec::with_capacity(self.steps.len() * (dims + 256)));
        w.0.extend_from_slice(MAGIC);
        w.len(self.steps.len());
        w.len(dims);
        w.len(self.units.len());
        w.len(self.df.len());
        for (i, s) in self.steps.iter().enumerate() {
            w.len(s.tokens);
            w.i8s(&self.vectors[i * dims..(i + 1) * dims]);
            w.f32(self.scales[i]);
            w.u32s(&s.terms);
            w.u32s(&s.units);
        }
        for u in &self.units {
            w.u32(view_code(u.view));
            w.text(&u.label);
            w.u32s(&u.members);
            w.raw_f32s(&u.sum);
            w.f32(u.norm);
        }
        let similarity: Vec<u32> = self
            .similarity_of
            .iter()
            .map(|u| u.map_or(u32::MAX, |u| u))
            .collect();
        w.raw_u32s(&similarity);
        w.raw_u32s(&self.df);
        w.f32s(&self.total);
        w.0
    }

    fn encode_tree(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.len(self.tree.len());
        for level in &self.tree {
            w.len(level.len());
            for node in level {
                w.raw_f32s(node);
            }
        }
        w.0
    }

    /// Reads what [`TrajectoryIndex::encode_core`] wrote (the vectors must be of this index's
    /// embedder's size), checking every id against what it refers to (what a damaged file would
    /// break first).
    fn decode_core<R: BufRead>(&mut self, r: &mut Reader<R>, branch: &str) -> Result<()> {
        if !r.take_magic()? {
            return Err(damaged("its header"));
        }
        let (n, dims, units, terms) = (r.len()?, r.len()?, r.len()?, r.len()?);
        if dims != self.embedder.id().dims {
            return Err(damaged("its vectors' size"));
        }
        let branch: Arc<str> = Arc::from(branch);
        // A damaged count reserves no more than the blob could hold.
        let most = n.min(r.left / (dims + 4));
        self.steps.reserve(most);
        self.vectors.reserve(most * dims);
        self.scales.reserve(most);
        for position in 0..n {
            let tokens = r.len()?;
            r.read(dims, |b| self.vectors.extend(b.iter().map(|&x| x as i8)))?;
            let scale = r.f32()?;
            // Quantising writes a positive, finite scale; anything else is damage.
            if !(scale.is_finite() && scale > 0.0) {
                return Err(damaged("a step vector's scale"));
            }
            self.scales.push(scale);
            self.steps.push(Indexed {
                tokens,
                terms: r.u32s_below(terms)?,
                units: r.u32s_below(units)?,
                entry: StepEntry::Kept {
                    position: position as u32,
                    branch: branch.clone(),
                },
            });
        }
        self.units.reserve(units.min(r.left / (dims * 4).max(1)));
        for id in 0..units {
            let view = view_of(r.u32()?)?;
            let label = r.text()?;
            self.unit_keys
                .insert((view, label.to_lowercase()), id as u32);
            self.units.push(Unit {
                view,
                label,
                members: r.u32s_below(n)?,
                sum: r.raw_f32s(dims)?,
                norm: r.f32()?,
            });
        }
        let similarity = r.raw_u32s(n)?;
        if similarity
            .iter()
            .any(|u| *u != u32::MAX && *u as usize >= units)
        {
            return Err(damaged("the similarity history"));
        }
        self.similarity_of = similarity
            .into_iter()
            .map(|u| (u != u32::MAX).then_some(u))
            .collect();
        self.df = r.raw_u32s(terms)?;
        self.total = r.f32s()?;
        Ok(())
    }

    /// Whether parts of the index are still in its file.
    pub fn is_kept(&self) -> bool {
        self.stored.is_some()
    }

    /// A step's id, JSON and line.
    pub(super) fn texts_of(&self, s: u32) -> Result<(Cow<'_, str>, Cow<'_, str>, Cow<'_, str>)> {
        let entry = &self.steps[s as usize].entry;
        if let (Some(id), Some(json), Some(line)) = (entry.id(), entry.json(), entry.line()) {
            return Ok((Cow::Borrowed(id), json?, Cow::Borrowed(line)));
        }
        match (entry, &self.stored) {
            (StepEntry::Kept { position, .. }, Some(stored)) => {
                let (id, json, line) = stored.texts(*position)?;
                Ok((Cow::Owned(id), Cow::Owned(json), Cow::Owned(line)))
            }
            _ => Err(damaged("a step")),
        }
    }

    /// A query word's term and postings.
    pub(super) fn term_of(&self, word: &str) -> Result<Option<(u32, Rc<Vec<u32>>)>> {
        match &self.stored {
            Some(stored) => stored.term(word, self.steps.len(), self.df.len()),
            None => Ok(self
                .vocab
                .get(word)
                .map(|t| (*t, Rc::new(self.postings[*t as usize].clone())))),
        }
    }

    /// Whether a step with this id is kept in the file.
    pub(super) fn kept_has(&self, id: &str) -> Result<bool> {
        match &self.stored {
            Some(stored) => stored.has_step(id),
            None => Ok(false),
        }
    }

    /// The summary tree.
    pub(super) fn tree(&self) -> Result<&Vec<Vec<Vec<f32>>>> {
        match &self.stored {
            Some(stored) => stored.tree(
                self.embedder.id().dims,
                self.steps.len(),
                self.params.tree_fanout.max(2),
            ),
            None => Ok(&self.tree),
        }
    }

    /// Reads what is still in the file (words, postings, tree, step texts), so the index can
    /// grow or be kept again; ends its read transaction.
    pub fn read_whole(&mut self) -> Result<()> {
        let Some(stored) = &self.stored else {
            return Ok(());
        };
        let terms = stored.all_terms(self.steps.len(), self.df.len())?;
        let fanout = self.params.tree_fanout.max(2);
        let tree = stored
            .tree(self.embedder.id().dims, self.steps.len(), fanout)?
            .clone();
        let mut text = String::new();
        let mut ranges = Vec::with_capacity(self.steps.len());
        for s in 0..self.steps.len() as u32 {
            let (id, json, line) = stored.texts(s)?;
            let start = text.len();
            text.push_str(&id);
            let id_end = text.len();
            text.push_str(&json);
            let json_end = text.len();
            text.push_str(&line);
            ranges.push((start..id_end, id_end..json_end, json_end..text.len()));
        }
        let text: Arc<str> = Arc::from(text);
        for (step, (id, json, line)) in self.steps.iter_mut().zip(ranges) {
            if let StepEntry::Kept { branch, .. } = &step.entry {
                step.entry = StepEntry::Stored {
                    text: text.clone(),
                    id,
                    json,
                    line,
                    branch: branch.clone(),
                };
            }
        }
        self.vocab = HashMap::with_capacity(terms.len());
        self.postings = Vec::with_capacity(terms.len());
        for (t, (word, list)) in terms.into_iter().enumerate() {
            self.vocab.insert(word, t as u32);
            self.postings.push(list);
        }
        self.tree = tree;
        self.stored = None;
        Ok(())
    }
}
