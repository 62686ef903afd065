//! Leaving the index ready after many memories arrived at once (an import, a sync): the
//! full-text index merged into one segment when what arrived is large beside it, and the vector
//! cache written whole, so the next process reads them instead of rebuilding them.

use super::Index;
use crate::error::Result;

impl Index {
    /// After many memories arrived at once (`written` new ones, `replaced` rewritten in
    /// place): merges the full-text index's segments into one when what arrived is many
    /// beside what was there (see `catch_up::merges_whole`; a few added to a large store do
    /// not pay for rewriting it all), and writes the vector cache whole when it is missing or
    /// stale. Cost: at most one pass over the full-text index and, without a current cache,
    /// one over the vectors.
    pub fn settle(&self, written: usize, replaced: usize) -> Result<()> {
        let before = super::schema::read_doc_count(&self.conn)? - written as i64;
        if super::catch_up::merges_whole(written + replaced, before) {
            self.conn.execute(
                "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
                [],
            )?;
        }
        // Loading the matrix writes the cache file when it is absent or not this state's.
        self.matrix()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::index::{Index, insert_for_test, schema};
    use crate::model::{Memory, MemoryId, Status};

    fn memories(from: usize, n: usize) -> impl Iterator<Item = (String, Memory)> {
        (from..from + n).map(|i| {
            let at = jiff::Timestamp::from_second(1_800_000_000 + i as i64).unwrap();
            let text = format!("note {i} on word{} and word{}", i % 97, i % 89);
            let m = Memory::bare(
                MemoryId::generate().unwrap(),
                "learnings",
                &text,
                Status::Active,
                at,
            );
            (format!("learnings/{i}.md"), m)
        })
    }

    /// Rows written while the index settles after `added` new memories arrived.
    fn written_settling(index: &Index, added: usize) -> u64 {
        let before = index.conn.total_changes();
        index.settle(added, 0).unwrap();
        index.conn.total_changes() - before
    }

    #[test]
    fn the_full_text_index_is_rewritten_only_after_many_memories_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
        // Twelve transactions: twelve full-text segments.
        for k in 0..12 {
            insert_for_test(&mut index, memories(k * 500, 500));
        }
        schema::write_doc_count(&index.conn, 6_000).unwrap();
        // A few, and more but small beside the 4,900 there before them: nothing rewritten.
        assert_eq!(written_settling(&index, 10), 0);
        assert_eq!(written_settling(&index, 1_100), 0);
        // A quarter or more of the index: merged into one segment.
        assert!(written_settling(&index, 2_000) > 0);
        assert_eq!(written_settling(&index, 10), 0);
        // 1,100 rewritten in place beside the 6,000 there: not many beside them.
        let before = index.conn.total_changes();
        index.settle(0, 1_100).unwrap();
        assert_eq!(index.conn.total_changes(), before);
    }
}
