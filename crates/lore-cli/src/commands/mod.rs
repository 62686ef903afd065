//! One module per command. Each turns its arguments into an operation's request
//! (`lore::ops`), runs it through the session, and draws the response as text (or JSON).

pub mod bench;
pub mod common;
pub mod conflicts;
pub mod context;
pub mod ctx;
pub mod doctor;
pub mod embedder;
pub mod eval;
pub mod export;
pub mod forget;
pub mod gc;
pub mod history;
pub mod hook;
pub mod import;
pub mod init;
pub mod list;
pub mod mcp;
pub mod moves;
pub mod namespace;
pub mod recall;
pub mod reindex;
pub mod remember;
pub mod review;
pub mod scan;
pub mod scope;
pub mod setup;
pub mod show;
pub mod status;
pub mod supersede;
pub mod sync;
pub mod think;
pub mod ui;
pub mod update;
pub mod upkeep;
pub mod verify;
