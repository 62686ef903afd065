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
            message: message.into(),
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

impl From<Error> for CommandError {
    fn from(e: Error) -> Self {
        let mut hints = Vec::new();
        if let Error::Record { .. } = e {
            hints.push(
                "fix the file by hand (git show refs/lore/memory:<path>) or `lore forget` it"
                    .into(),
            );
        }
        CommandError {
            class: e.class(),
            message: e.to_string(),
            hints,
        }
    }
}

/// Result alias for commands.
pub type CmdResult<T = ()> = Result<T, CommandError>;
