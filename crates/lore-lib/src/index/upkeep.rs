//! Leaving the index ready after many memories arrived at once (an import, a sync): the vector
//! cache written whole, so the next process reads it instead of rebuilding it.

use super::Index;
use crate::error::Result;

impl Index {
    /// After many memories arrived at once: writes the vector cache whole when it is missing or
    /// stale (at most one pass over the vectors). The BM25 postings need nothing: a large
    /// catch-up writes their blocks directly (see [`super::postings`]).
    pub fn settle(&self) -> Result<()> {
        // Loading the matrix writes the cache file when it is absent or not this state's.
        self.matrix()?;
        Ok(())
    }
}
