//! Where output goes: text for people, one JSON document per command for programs.

use std::io::Write;

use serde::Serialize;

use crate::error::CommandError;

/// Output settings and sinks.
pub struct Ui {
    json: bool,
}

impl Ui {
    pub fn new(json: bool) -> Ui {
        Ui { json }
    }

    pub fn json(&self) -> bool {
        self.json
    }

    /// Emits a result: as JSON, or as text drawn by `text`.
    pub fn emit<T: Serialize>(&mut self, value: &T, text: impl FnOnce(&mut String)) {
        let mut out = String::new();
        if self.json {
            match serde_json::to_string(value) {
                Ok(s) => out = s,
                Err(e) => {
                    self.warn(&format!("could not encode the result as JSON: {e}"));
                    return;
                }
            }
            out.push('\n');
        } else {
            text(&mut out);
        }
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`lore list | head`) is not an error worth reporting.
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }

    /// Text shown before a command's result in text mode (nothing with `--json`, where the
    /// result document carries it).
    pub fn text(&mut self, text: &str) {
        if !self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    }

    /// Writes data as it is to stdout (an export), whatever the output mode.
    pub fn raw(&mut self, data: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(data.as_bytes());
        let _ = stdout.flush();
    }

    /// A warning or notice on stderr (never on stdout, which programs read).
    pub fn warn(&mut self, message: &str) {
        // A warning may quote input (a value that was adapted or refused): never a secret in it.
        eprintln!("lore: {}", lore::secrets::scrubbed_message(message));
    }

    /// Reports an error: on stderr as text, or as a JSON object on stdout with `--json`.
    pub fn error(&mut self, err: &CommandError) {
        if self.json {
            println!("{}", err.to_json());
            return;
        }
        eprintln!("error: {}", err.message);
        for hint in &err.hints {
            eprintln!("hint: {hint}");
        }
    }
}
