//! Each branch's trajectory index kept between processes: a derived, disposable SQLite file
//! (`<git common dir>/lore/ctx/trajectory.sqlite`) holding, per branch and per embedder and
//! parameters, the index built from the branch's committed steps, the tip it was built from and
//! the log segments it read. A later process catches it up from the branch tip: when the branch
//! moved by fast-forward and its old segments are unchanged, only the new segments are read,
//! embedded and joined; otherwise (a rewrite, a renumbered log) it is rebuilt. Uncommitted steps
//! are added per query, never kept. A file that cannot be opened, read or written (a read-only
//! repository, a busy or damaged file) only costs the build in memory: the answer is the same.

use std::path::Path;
use std::time::Duration;

use git2::Oid;
use rusqlite::{Connection, TransactionBehavior, params};

use super::files::parse_segment;
use super::{LOG_DIR, TrajectoryStep, Workspace};
use crate::embed::SharedEmbedder;
use crate::error::Result;
use crate::store::Store;
use crate::trajectory::{Params, TrajectoryIndex, builtin_embedder};

/// How long a process waits for another one writing the file before building in memory.
const BUSY_WAIT: Duration = Duration::from_millis(200);

/// What one row records: the tip, the segments read (`name blob-id` per line) and the index.
struct Kept<'a> {
    tip: &'a str,
    segments: &'a str,
    body: &'a [u8],
}

/// The open file.
struct RecallIndexFile {
    conn: Connection,
}

impl RecallIndexFile {
    fn open(path: &Path) -> Result<RecallIndexFile> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| crate::error::Error::io(format!("creating {}", dir.display()), e))?;
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_WAIT)?;
        // Rows are a few large blobs: big pages (for a new file) and a mapped read keep their
        // reading to few system calls.
        conn.execute_batch(
            "PRAGMA page_size = 65536;
            PRAGMA mmap_size = 1073741824;
            CREATE TABLE IF NOT EXISTS built (
                branch TEXT NOT NULL,
                key TEXT NOT NULL,
                tip TEXT NOT NULL,
                segments TEXT NOT NULL,
                body BLOB NOT NULL,
                PRIMARY KEY (branch, key)
            )",
        )?;
        Ok(RecallIndexFile { conn })
    }

    /// Reads a branch's row, if any, and hands its tip, segments and index bytes (borrowed
    /// from SQLite, not copied) to `read`.
    fn load<R>(
        &self,
        branch: &str,
        key: &str,
        read: impl FnOnce(&str, &str, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut stmt = self
            .conn
            .prepare("SELECT tip, segments, body FROM built WHERE branch = ?1 AND key = ?2")?;
        let mut rows = stmt.query(params![branch, key])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let (tip, segments, body) = (row.get_ref(0)?, row.get_ref(1)?, row.get_ref(2)?);
        match (tip.as_str(), segments.as_str(), body.as_blob()) {
            (Ok(tip), Ok(segments), Ok(body)) => Ok(Some(read(tip, segments, body))),
            _ => Ok(None),
        }
    }

    fn save(&mut self, branch: &str, key: &str, kept: &Kept<'_>) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT OR REPLACE INTO built (branch, key, tip, segments, body)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![branch, key, kept.tip, kept.segments, kept.body],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// A tree's log segments as one row records them.
fn segment_list(segments: &[(String, Oid)]) -> String {
    let mut out = String::new();
    for (name, blob) in segments {
        out.push_str(name);
        out.push(' ');
        out.push_str(&blob.to_string());
        out.push('\n');
    }
    out
}

impl Workspace<'_> {
    /// The index of a branch's committed steps at `tip`, read back and caught up from the kept
    /// file when it can be, else built (and kept when the file can be written).
    pub(super) fn committed_index(
        &self,
        branch: &str,
        tip: Oid,
        embedder: Option<SharedEmbedder>,
    ) -> Result<TrajectoryIndex> {
        let embedder = embedder.unwrap_or_else(builtin_embedder);
        let params = Params::default();
        let key = format!(
            "{} {}",
            embedder.id(),
            serde_json::to_string(&params).unwrap_or_default()
        );
        let snap = self.store.snapshot(Some(tip))?;
        let segments = snap.files_in(LOG_DIR)?;
        let listed = segment_list(&segments);
        let read =
            |from: usize| -> Result<Vec<TrajectoryStep>> {
                let mut steps = Vec::new();
                for (name, blob) in &segments[from..] {
                    steps.extend(parse_segment(&snap.blob(*blob)?, name)?.into_iter().map(
                        |step| TrajectoryStep {
                            step,
                            branch: branch.to_string(),
                            committed: true,
                        },
                    ));
                }
                Ok(steps)
            };
        let path = self.recall_index_path();
        let mut file = match RecallIndexFile::open(&path) {
            Ok(file) => Some(file),
            Err(e) => {
                // Where the repository cannot be written, building in memory is the documented
                // way; any other failure is said, since every process would rebuild.
                if !crate::index::is_write_refusal(&path, &e) {
                    self.store.warn(format!(
                        "the kept trajectory index {} cannot be used ({e}); built in memory",
                        path.display()
                    ));
                }
                None
            }
        };
        let tip_text = tip.to_string();
        // What the kept row offers: the index as it is, or caught up from the segment it
        // read last, or nothing (absent, damaged, or no longer a prefix of the branch).
        let kept = file.as_ref().and_then(|f| {
            f.load(branch, &key, |kept_tip, kept_segments, body| {
                let same = kept_tip == tip_text && kept_segments == listed;
                let fast_forward = !same
                    && listed.starts_with(kept_segments)
                    && Oid::from_str(kept_tip).is_ok_and(|old| {
                        self.store
                            .repo()
                            .graph_descendant_of(tip, old)
                            .unwrap_or(false)
                    });
                if !same && !fast_forward {
                    return None;
                }
                let index =
                    TrajectoryIndex::decode(body, Some(embedder.clone()), params.clone(), branch)
                        .ok()?;
                Some((index, same, kept_segments.lines().count()))
            })
            .unwrap_or_else(|e| {
                self.store.warn(format!(
                    "the kept trajectory index of branch {branch} cannot be read ({e}); rebuilt"
                ));
                None
            })
            .flatten()
        });
        if let Some((mut index, same, known)) = kept {
            if !same {
                index.extend(read(known)?)?;
                if let Some(f) = file.as_mut() {
                    keep(self.store, f, branch, &key, tip_text, listed, &index);
                }
            }
            return Ok(index);
        }
        let mut index = TrajectoryIndex::new(Some(embedder), params);
        index.extend(read(0)?)?;
        if let Some(f) = file.as_mut() {
            keep(self.store, f, branch, &key, tip.to_string(), listed, &index);
        }
        Ok(index)
    }
}

/// Writes a branch's row; a file that refuses the write is left as it is, with a warning (the
/// next process builds the index again).
fn keep(
    store: &Store,
    file: &mut RecallIndexFile,
    branch: &str,
    key: &str,
    tip: String,
    segments: String,
    index: &TrajectoryIndex,
) {
    let saved = index.encode().and_then(|body| {
        file.save(
            branch,
            key,
            &Kept {
                tip: &tip,
                segments: &segments,
                body: &body,
            },
        )
    });
    if let Err(e) = saved {
        store.warn(format!(
            "the trajectory index of branch {branch} could not be kept ({e}); the next \
             recall builds it again"
        ));
    }
}

#[cfg(test)]
mod tests {
    use lore_testutils::TestRepo;

    use super::*;
    use crate::steps::NewStep;
    use crate::store::Store;
    use crate::store::WriteContext;
    use crate::trajectory::{Recalled, Strategy};

    const QUERIES: [&str; 4] = [
        "parser tokenizer error",
        "cargo test failed",
        "sqlite index cache",
        "grammar",
    ];

    fn step(n: usize, topic: &str) -> NewStep {
        let tools = ["read", "edit", "bash"];
        let entities = [
            "parser.rs",
            "lexer.rs",
            "index.rs",
            "cache.rs",
            "grammar.md",
        ];
        NewStep {
            text: Some(format!("{topic} step {n}: looked at {}", entities[n % 5])),
            tool: Some(tools[n % 3].to_string()),
            entities: vec![entities[n % 5].to_string()],
            subgoal: Some(format!("{topic} {}", n / 7)),
            ..NewStep::default()
        }
    }

    fn log_and_commit(ws: &Workspace<'_>, range: std::ops::Range<usize>, topic: &str) {
        for n in range {
            ws.log(None, step(n, topic)).unwrap();
        }
        ws.commit(None, topic, None, None, &WriteContext::default())
            .unwrap();
    }

    fn as_json(recalled: &Recalled) -> serde_json::Value {
        serde_json::to_value(recalled).unwrap()
    }

    /// Every strategy and query answered through the kept file is what a fresh in-memory build
    /// of the branch's steps answers, down to the scores.
    fn assert_same_as_fresh(ws: &Workspace<'_>) {
        let mut fresh = TrajectoryIndex::new(None, Params::default());
        fresh.extend(ws.steps(MAIN, true).unwrap()).unwrap();
        for strategy in Strategy::ALL {
            for query in QUERIES {
                for budget in [60, 400] {
                    let (kept, searched) = ws
                        .recall(query, budget, strategy, Some(MAIN), false, None)
                        .unwrap();
                    let built = fresh.recall(query, budget, strategy).unwrap();
                    assert_eq!(searched, fresh.len());
                    assert_eq!(as_json(&kept), as_json(&built), "{strategy:?} {query}");
                }
            }
        }
    }

    const MAIN: &str = crate::ctx::MAIN_BRANCH;

    fn kept_tip(ws: &Workspace<'_>) -> Option<String> {
        let file = RecallIndexFile::open(&ws.recall_index_path()).unwrap();
        let key = format!(
            "{} {}",
            builtin_embedder().id(),
            serde_json::to_string(&Params::default()).unwrap()
        );
        file.load(MAIN, &key, |tip, _, _| tip.to_string()).unwrap()
    }

    #[test]
    fn the_kept_index_answers_as_a_fresh_build_across_catch_up_and_rewrite() {
        let repo = TestRepo::new();
        let store = Store::discover(&repo.path()).unwrap();
        let ws = Workspace::new(&store);
        ws.init("ship the parser", &[], &WriteContext::default())
            .unwrap();
        log_and_commit(&ws, 0..40, "parser");
        assert_same_as_fresh(&ws);
        let first = ws.tip(MAIN).unwrap().unwrap();
        assert_eq!(kept_tip(&ws), Some(first.to_string()));

        // A fast-forward: only the new segment is read; and journal steps on top.
        log_and_commit(&ws, 40..70, "cache");
        assert_same_as_fresh(&ws);
        let second = ws.tip(MAIN).unwrap().unwrap();
        assert_eq!(kept_tip(&ws), Some(second.to_string()));
        for n in 70..75 {
            ws.log(None, step(n, "tokenizer")).unwrap();
        }
        assert_same_as_fresh(&ws);
        assert_eq!(kept_tip(&ws), Some(second.to_string()));
        ws.commit(None, "tokenizer", None, None, &WriteContext::default())
            .unwrap();
        assert_same_as_fresh(&ws);

        // A rewrite: the branch moved back and grew otherwise; the kept tip is no ancestor.
        store
            .repo()
            .reference(&crate::ctx::branch_ref(MAIN), first, true, "rewrite")
            .unwrap();
        log_and_commit(&ws, 100..130, "grammar");
        assert_same_as_fresh(&ws);
        assert_eq!(
            kept_tip(&ws),
            Some(ws.tip(MAIN).unwrap().unwrap().to_string())
        );
    }

    #[test]
    fn a_damaged_or_unwritable_file_costs_only_the_build() {
        let repo = TestRepo::new();
        let store = Store::discover(&repo.path()).unwrap();
        let ws = Workspace::new(&store);
        ws.init("ship the parser", &[], &WriteContext::default())
            .unwrap();
        log_and_commit(&ws, 0..30, "parser");
        assert_same_as_fresh(&ws);
        let conn = Connection::open(ws.recall_index_path()).unwrap();
        conn.execute("UPDATE built SET body = substr(body, 1, 100)", [])
            .unwrap();
        drop(conn);
        assert_same_as_fresh(&ws);

        // Where the file cannot be (a directory holds its name), recall builds in memory.
        std::fs::remove_file(ws.recall_index_path()).unwrap();
        std::fs::create_dir(ws.recall_index_path()).unwrap();
        log_and_commit(&ws, 30..40, "cache");
        assert_same_as_fresh(&ws);
    }
}
