//! Each branch's trajectory index kept between processes: a derived, disposable SQLite file
//! (`<git common dir>/lore/ctx/trajectory.sqlite`) holding, per branch and per embedder and
//! parameters, the index built from the branch's committed steps, the tip it was built from and
//! the log segments it read. A later process catches it up from the branch tip: when the branch
//! moved by fast-forward and its old segments are unchanged, only the new segments are read,
//! embedded and joined; otherwise (a rewrite, a renumbered log) it is rebuilt. Uncommitted steps
//! are added per query, never kept. A process reads only what its query needs (the file's
//! layout is in `trajectory/persist.rs`). A file that cannot be opened, read or written (a
//! read-only repository, a busy or damaged file) only costs the build in memory: the answer is
//! the same.

use std::time::Duration;

use git2::Oid;

use super::files::parse_segment;
use super::{LOG_DIR, TrajectoryStep, Workspace};
use crate::embed::SharedEmbedder;
use crate::error::Result;
use crate::store::Store;
use crate::trajectory::{KeptFile, KeptSet, Params, TrajectoryIndex, builtin_embedder};

/// How long a process waits for another one writing the file before building in memory.
const BUSY_WAIT: Duration = Duration::from_millis(200);

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

/// The key a branch's index is kept under: the embedder and the parameters.
fn kept_key(embedder: &SharedEmbedder, params: &Params) -> String {
    format!(
        "{} {}",
        embedder.id(),
        serde_json::to_string(params).unwrap_or_default()
    )
}

impl Workspace<'_> {
    /// The index of a branch's committed steps at `tip`, read back and caught up from the kept
    /// file when it can be (and `use_kept`), else built (and kept when the file can be written:
    /// a kept index that failed a query is replaced).
    pub(super) fn committed_index(
        &self,
        branch: &str,
        tip: Oid,
        embedder: Option<SharedEmbedder>,
        use_kept: bool,
    ) -> Result<TrajectoryIndex> {
        let embedder = embedder.unwrap_or_else(builtin_embedder);
        let params = Params::default();
        let key = kept_key(&embedder, &params);
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
        let file = self.kept_file();
        let tip_text = tip.to_string();
        // What the kept file offers: the index as it is, or caught up from the segment it
        // read last, or nothing (absent, damaged, no longer a prefix of the branch, or not to
        // be read: the index is built and kept again).
        let kept = file.as_ref().filter(|_| use_kept).and_then(|f| {
            let found = f.find(branch, &key).and_then(|set| {
                let Some(set) = set else { return Ok(None) };
                let Some((same, known)) = self.usable(&set, tip, &tip_text, &listed) else {
                    return Ok(None);
                };
                let mut index = set.index(Some(embedder.clone()), params.clone(), branch)?;
                if !same {
                    // To be caught up and kept again: read whole (even when no step is new).
                    index.read_whole()?;
                }
                Ok(Some((index, same, known)))
            });
            found.unwrap_or_else(|e| {
                self.store.warn(format!(
                    "the kept trajectory index of branch {branch} cannot be read ({e}); rebuilt"
                ));
                None
            })
        });
        if let Some((mut index, same, known)) = kept {
            if !same {
                index.extend(read(known)?)?;
                if let Some(f) = &file {
                    keep(self.store, f, branch, &key, (&tip_text, &listed), &index);
                }
            }
            return Ok(index);
        }
        let mut index = TrajectoryIndex::new(Some(embedder), params);
        index.extend(read(0)?)?;
        if let Some(f) = &file {
            keep(self.store, f, branch, &key, (&tip_text, &listed), &index);
        }
        Ok(index)
    }

    /// The kept file, or `None` (said, unless the repository cannot be written here) when it
    /// cannot be opened.
    fn kept_file(&self) -> Option<KeptFile> {
        let path = self.recall_index_path();
        match KeptFile::open(&path, BUSY_WAIT) {
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
        }
    }

    /// Whether a kept index serves the branch at `tip` (listing these segments): as it is
    /// (`true`), or caught up from the segments it knows (`false`, and how many it knows).
    fn usable(
        &self,
        set: &KeptSet,
        tip: Oid,
        tip_text: &str,
        listed: &str,
    ) -> Option<(bool, usize)> {
        let (kept_tip, kept_segments) = (&set.stamp.0, &set.stamp.1);
        let same = kept_tip == tip_text && kept_segments == listed;
        let fast_forward = !same
            && listed.starts_with(kept_segments.as_str())
            && Oid::from_str(kept_tip).is_ok_and(|old| {
                self.store
                    .repo()
                    .graph_descendant_of(tip, old)
                    .unwrap_or(false)
            });
        (same || fast_forward).then(|| (same, kept_segments.lines().count()))
    }
}

/// Keeps a branch's index; a file that refuses the write is left as it is, with a warning (the
/// next process builds the index again).
fn keep(
    store: &Store,
    file: &KeptFile,
    branch: &str,
    key: &str,
    stamp: (&str, &str),
    index: &TrajectoryIndex,
) {
    if let Err(e) = file.save(branch, key, stamp, index) {
        store.warn(format!(
            "the trajectory index of branch {branch} could not be kept ({e}); the next \
             recall builds it again"
        ));
    }
}

#[cfg(test)]
mod tests {
    use lore_testutils::TestRepo;
    use rusqlite::Connection;

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

    const MAIN: &str = crate::workspace::MAIN_BRANCH;

    fn kept_tip(ws: &Workspace<'_>) -> Option<String> {
        let file = KeptFile::open(&ws.recall_index_path(), BUSY_WAIT).unwrap();
        let key = kept_key(&builtin_embedder(), &Params::default());
        file.find(MAIN, &key)
            .unwrap()
            .map(|set| set.stamp.0.clone())
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
        // Answered from the kept file's parts (the tree's shape checked), with no warning.
        assert_same_as_fresh(&ws);
        assert_eq!(store.take_warnings(), Vec::<String>::new());
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

        // The branch moved on without a new step (a commit of the same tree): kept again,
        // with no warning.
        let repo = store.repo();
        let head = repo.find_commit(ws.tip(MAIN).unwrap().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let moved = repo
            .commit(
                None,
                &sig,
                &sig,
                "same tree",
                &head.tree().unwrap(),
                &[&head],
            )
            .unwrap();
        repo.reference(&crate::workspace::branch_ref(MAIN), moved, true, "move")
            .unwrap();
        store.take_warnings();
        assert_same_as_fresh(&ws);
        assert_eq!(kept_tip(&ws), Some(moved.to_string()));
        assert_eq!(store.take_warnings(), Vec::<String>::new());

        // A rewrite: the branch moved back and grew otherwise; the kept tip is no ancestor.
        store
            .repo()
            .reference(&crate::workspace::branch_ref(MAIN), first, true, "rewrite")
            .unwrap();
        log_and_commit(&ws, 100..130, "grammar");
        assert_same_as_fresh(&ws);
        assert_eq!(
            kept_tip(&ws),
            Some(ws.tip(MAIN).unwrap().unwrap().to_string())
        );
    }

    #[test]
    fn a_file_of_the_earlier_layout_is_made_again() {
        let repo = TestRepo::new();
        let store = Store::discover(&repo.path()).unwrap();
        let ws = Workspace::new(&store);
        ws.init("ship the parser", &[], &WriteContext::default())
            .unwrap();
        log_and_commit(&ws, 0..20, "parser");
        let path = ws.recall_index_path();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE built (branch TEXT NOT NULL, key TEXT NOT NULL, tip TEXT NOT NULL,
                 segments TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (branch, key));
             INSERT INTO built VALUES ('main', 'k', 'tip', '', x'00');",
        )
        .unwrap();
        drop(conn);
        assert_same_as_fresh(&ws);
        let tip = ws.tip(MAIN).unwrap().unwrap();
        assert_eq!(kept_tip(&ws), Some(tip.to_string()));
        // Read back as kept (no journal step): answered from the file's parts.
        let index = ws.branch_index(MAIN, None).unwrap();
        assert!(index.is_kept());
        assert_same_as_fresh(&ws);
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
        // Each part damaged in turn: the core (read when the index is opened), a word's
        // postings, the steps' texts and the summary tree (read while a query runs).
        for damage in [
            "UPDATE built SET core = substr(core, 1, 100)",
            "UPDATE term SET postings = x'ffffff7f'",
            "UPDATE term SET term = 1000000",
            "DELETE FROM step WHERE position % 2 = 0",
            "UPDATE built SET tree = substr(tree, 1, 10)",
        ] {
            // A fresh kept index first (a damaged one is replaced when caught up, not here).
            std::fs::remove_file(ws.recall_index_path()).unwrap();
            assert_same_as_fresh(&ws);
            let conn = Connection::open(ws.recall_index_path()).unwrap();
            conn.execute(damage, []).unwrap();
            drop(conn);
            assert_same_as_fresh(&ws);
        }

        // Where the file cannot be (a directory holds its name), recall builds in memory.
        std::fs::remove_file(ws.recall_index_path()).unwrap();
        std::fs::create_dir(ws.recall_index_path()).unwrap();
        log_and_commit(&ws, 30..40, "cache");
        assert_same_as_fresh(&ws);
    }
}
