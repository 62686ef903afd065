//! One option every SQLite connection of lore's sets: plans that do not depend on the values
//! bound, so that a cached statement is compiled once per connection.
//!
//! SQLite may let the value bound to a parameter steer a plan (`x = ?` guessed less selective
//! when the value is 0 or 1, a `LIMIT ?`, a partial index's condition). It then marks the
//! statement, and `sqlite3_clear_bindings` — which rusqlite's statement cache calls whenever a
//! cached statement is handed back — expires every marked statement: each later use compiles
//! it again. Measured in a long-lived handle at 100,000 memories, every postings read and most
//! catch-up statements were compiled again on each use (about a tenth of a write). lore's
//! statements are written for one plan whatever their values, so the planner's stability
//! guarantee (`SQLITE_DBCONFIG_ENABLE_QPSG`) costs nothing and keeps them compiled.

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use crate::error::Result;

/// Makes `conn`'s plans independent of bound values (see the module's text).
pub(crate) fn keep_plans(conn: &Connection) -> Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, StatementStatus};

    /// How many times a cached statement was compiled again over four uses with new values.
    fn recompiled(conn: &Connection) -> i32 {
        conn.execute_batch(
            "CREATE TABLE t (k TEXT NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (k, v))
                 WITHOUT ROWID;
             CREATE TABLE u (k TEXT NOT NULL, w INTEGER NOT NULL, PRIMARY KEY (k, w))
                 WITHOUT ROWID;
             INSERT INTO t VALUES ('a', 1), ('b', 2);
             INSERT INTO u VALUES ('a', 3);",
        )
        .unwrap();
        let sql = "SELECT v, NULL FROM t WHERE k = ?1 UNION ALL SELECT NULL, w FROM u WHERE k = ?1
                   ORDER BY 1 NULLS LAST, 2";
        for key in ["a", "b", "c", "a"] {
            let mut stmt = conn.prepare_cached(sql).unwrap();
            let _ = stmt.query_map([key], |_| Ok(())).unwrap().count();
        }
        conn.prepare_cached(sql)
            .unwrap()
            .get_status(StatementStatus::RePrepare)
    }

    fn plans_kept(conn: &Connection) -> bool {
        conn.db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG)
            .unwrap()
    }

    #[test]
    fn every_connection_of_lores_keeps_its_plans() {
        let dir = tempfile::tempdir().unwrap();
        let index = Connection::open(dir.path().join("index.sqlite3")).unwrap();
        crate::index::schema::prepare(&index).unwrap();
        assert!(plans_kept(&index), "the index");
        let thoughts =
            crate::thoughts::index::open_connection(&dir.path().join("thoughts.sqlite3")).unwrap();
        assert!(plans_kept(&thoughts), "the thought index");
        let kept = crate::trajectory::KeptFile::open(
            &dir.path().join("kept.sqlite3"),
            std::time::Duration::from_secs(1),
        )
        .unwrap();
        assert!(plans_kept(kept.connection()), "a trajectory's kept index");
        assert!(!plans_kept(&Connection::open_in_memory().unwrap()));
    }

    #[test]
    fn cached_statements_are_compiled_once() {
        let plain = Connection::open_in_memory().unwrap();
        assert!(recompiled(&plain) >= 3, "SQLite no longer recompiles them");
        let kept = Connection::open_in_memory().unwrap();
        super::keep_plans(&kept).unwrap();
        assert_eq!(recompiled(&kept), 0);
    }
}
