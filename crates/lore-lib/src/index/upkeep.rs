//! Leaving the index ready after many memories arrived at once (an import, a sync): the
//! full-text index merged into one segment and the vector cache written whole, so the next
//! process reads them instead of rebuilding them.

use super::Index;
use crate::error::Result;

impl Index {
    /// Merges the full-text index's segments and writes the vector cache whole when it is
    /// missing or stale. Cost: one pass over the full-text index and, without a current
    /// cache, one over the vectors.
    pub fn settle(&self) -> Result<()> {
        self.conn.execute(
            "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
            [],
        )?;
        // Loading the matrix writes the cache file when it is absent or not this state's.
        self.matrix()?;
        Ok(())
    }
}
