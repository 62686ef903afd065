//! What the index keeps about the store as a whole: counts per namespace and status, the
//! registered namespaces, the files that failed to parse, and a fingerprint of every row.

use rusqlite::{Connection, params};

use super::InvalidFile;
use crate::error::Result;
use crate::store::layout;

pub fn counts(conn: &Connection) -> Result<Vec<(String, String, u64)>> {
    // Raised by each insert (`schema::Writer::insert_memory`), lowered by the delete trigger on
    // `memories`: no pass over the rows.
    let mut stmt = conn.prepare_cached(
        "SELECT namespace, status, n FROM counts WHERE n > 0 ORDER BY namespace, status",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn registered_namespaces(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM namespaces ORDER BY name")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn invalid_files(conn: &Connection) -> Result<Vec<InvalidFile>> {
    let mut stmt = conn.prepare_cached("SELECT path, message FROM invalid ORDER BY path")?;
    let rows = stmt.query_map([], |r| {
        let path: String = r.get(0)?;
        Ok(InvalidFile {
            name: layout::name_from_path(&path).to_string(),
            path,
            message: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn fingerprint(conn: &Connection) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT path, blob, concat_ws(char(0), record, body, id, namespace, key, summary, tags,
                                      status, created, updated, content, session)
         FROM memories
         UNION ALL SELECT path, blob, 'invalid: ' || message FROM invalid
         UNION ALL SELECT name, '', 'namespace' FROM namespaces
         ORDER BY 1, 3",
    )?;
    let rows = stmt.query_map(params![], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}
