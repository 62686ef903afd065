//! The CLI's one error type and its exit codes.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success |
//! | 1 | internal failure (git, SQLite, file system) |
//! | 2 | invalid input or usage |
//! | 3 | not found |
//! | 4 | conflict (key taken, ambiguous id, changed underneath, lost races) |

use lore::{Error, ErrorClass};

/// An error with hints, ready to show.
#[derive(Debug)]
pub struct CommandError {
    /// The class, which picks the exit code.
    pub class: ErrorClass,
    /// The library's name for what went wrong (none: a usage error of the CLI's own).
    pub code: Option<&'static str>,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hints: Vec<String>,
}

impl CommandError {
    /// An invalid-input error from the CLI itself.
    pub fn usage(message: impl Into<String>) -> Self {
        CommandError {
            class: ErrorClass::InvalidInput,
            code: None,
            message: lore::secrets::scrubbed_message(&message.into()),
            hints: Vec::new(),
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self.class {
            ErrorClass::Internal => 1,
            ErrorClass::InvalidInput => 2,
            ErrorClass::NotFound => 3,
            ErrorClass::Conflict => 4,
        }
    }

    /// The class as a stable word for JSON output.
    pub fn kind(&self) -> &'static str {
        match self.class {
            ErrorClass::Internal => "internal",
            ErrorClass::InvalidInput => "invalid_input",
            ErrorClass::NotFound => "not_found",
            ErrorClass::Conflict => "conflict",
        }
    }
}

/// Who reads an error's advice: a person at the command line, or an agent calling tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    Cli,
    Agent,
}

/// What to do next about a library error, in the words of the front end that shows it.
// Long: one arm per error kind, each its own advice; read as a table, it stays one match.
fn advice(e: &Error, reader: Reader) -> Vec<String> {
    let cli = reader == Reader::Cli;
    let say = |c: String, a: String| vec![if cli { c } else { a }];
    let text = e.to_string();
    // This machine's disk (a remote's full disk is the remote's words, in Error::Remote).
    if !matches!(e, Error::Remote { .. })
        && (text.contains("No space left on device") || text.contains("File too large"))
    {
        return vec![
            "free space on the disk holding the repository's .git (or raise the file-size \
             limit): nothing was written; reads still answer"
                .into(),
        ];
    }
    match e {
        Error::UnknownNamespace { name, .. } => say(
            format!(
                "`lore namespace list` shows the namespaces; `lore namespace add {name}` \
                 registers it"
            ),
            format!(
                "the namespaces tool lists the namespaces; namespace_add registers one \
                 (name {name:?})"
            ),
        ),
        Error::MemoryRefLost(_) => say(
            "`lore doctor` lists what can restore it; `lore doctor --restore` puts it back".into(),
            "run `lore doctor --restore` in the repository to put it back".into(),
        ),
        Error::NotFound(_) => say(
            "`lore list` or `lore recall WORDS` shows what exists".into(),
            "the list or recall tools show what exists".into(),
        ),
        Error::NoContextWorkspace(_) => say(
            "start one with `lore ctx init --goal \"…\"`".into(),
            "start one with the ctx_init tool (goal, to-do items)".into(),
        ),
        Error::Ambiguous { .. } => vec!["give more characters of the id".into()],
        Error::KeyExists { id, .. } => say(
            format!("`lore update {id}` changes it; `lore supersede {id}` replaces it"),
            format!("the update tool changes memory {id}; supersede replaces it"),
        ),
        Error::Duplicate { .. } => say(
            "--upsert supersedes the existing memory; --force keeps both".into(),
            "on_duplicate \"upsert\" supersedes the existing memory; \"force\" keeps both".into(),
        ),
        Error::SecretBlocked(_) => {
            vec!["or let lore redact secrets: `git config lore.secrets redact`".into()]
        }
        Error::MergeConflict { .. } => say(
            "settle them with --prefer ours|theirs, or give the merged roadmap with --roadmap FILE"
                .into(),
            "settle them with prefer (ours|theirs), or give the merged roadmap as roadmap".into(),
        ),
        Error::NotARepository(_) => say(
            "use --repo PATH, --personal, or run `git init`".into(),
            "start the server inside a git repository".into(),
        ),
        Error::Record { .. } => say(
            "fix the file by hand (git show refs/lore/memory:<path>) or `lore forget` it".into(),
            "ask a person to fix or forget the unreadable memory file".into(),
        ),
        Error::Changed { .. } | Error::Contention { .. } => {
            vec!["read it again and retry".into()]
        }
        // The message lists the remotes there are, or says there are none.
        Error::NoRemote(m) if m.contains("(remotes: ") => say(
            "name one of the remotes listed: `lore sync REMOTE`".into(),
            "give remote: one of the remotes listed".into(),
        ),
        Error::NoRemote(_) => say(
            "add one with `git remote add origin URL`, then `lore sync`".into(),
            "ask a person to add a git remote".into(),
        ),
        Error::Remote { .. } => vec![
            "nothing was changed; check that `git fetch` reaches the remote, then sync again"
                .into(),
        ],
        Error::NoConflict(_) => say(
            "`lore conflicts` lists the open ones".into(),
            "the conflicts tool lists the open ones".into(),
        ),
        _ => Vec::new(),
    }
}

impl CommandError {
    fn from_lore(e: Error, reader: Reader) -> Self {
        CommandError {
            class: e.class(),
            code: Some(e.code()),
            hints: advice(&e, reader),
            message: lore::secrets::scrubbed_message(&e.to_string()),
        }
    }

    /// The error with advice for an agent (tool names and arguments, not flags).
    pub fn agent(e: Error) -> Self {
        CommandError::from_lore(e, Reader::Agent)
    }

    /// The error as the JSON object `--json` prints and MCP returns.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "kind": self.kind(),
                "code": self.code.unwrap_or("usage"),
                "message": self.message,
                "hints": self.hints,
                "exit_code": self.exit_code(),
            }
        })
    }
}

impl From<Error> for CommandError {
    fn from(e: Error) -> Self {
        CommandError::from_lore(e, Reader::Cli)
    }
}

/// Result alias for commands.
pub type CmdResult<T = ()> = Result<T, CommandError>;
