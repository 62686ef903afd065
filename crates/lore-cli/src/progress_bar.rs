//! The terminal's view of the library's progress seam: one line on stderr, redrawn at most ten
//! times a second, cleared when the operation ends. Silent when stderr is not a terminal or the
//! output is JSON.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lore::progress::{self, Progress, SharedProgress};

/// The progress sink for this process.
pub fn for_terminal(json: bool) -> SharedProgress {
    if json || !std::io::stderr().is_terminal() {
        return progress::silent();
    }
    Arc::new(Bar::default())
}

#[derive(Default)]
struct Bar {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    label: String,
    total: Option<u64>,
    done: u64,
    drawn: Option<Instant>,
    visible: bool,
}

const WIDTH: usize = 30;

impl State {
    fn line(&self) -> String {
        match self.total {
            Some(total) if total > 0 => {
                let filled = (self.done.min(total) as usize * WIDTH) / total as usize;
                format!(
                    "{} [{}{}] {}/{}",
                    self.label,
                    "#".repeat(filled),
                    " ".repeat(WIDTH - filled),
                    self.done,
                    total
                )
            }
            _ => format!("{} … {}", self.label, self.done),
        }
    }

    fn draw(&mut self, force: bool) {
        let due = self
            .drawn
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        if !(force || due) {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}", self.line());
        let _ = err.flush();
        self.drawn = Some(Instant::now());
        self.visible = true;
    }
}

impl Progress for Bar {
    fn phase(&self, label: &str, total: Option<u64>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.label = label.to_string();
        s.total = total;
        s.done = 0;
        s.draw(true);
    }

    fn advance(&self, done: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.done = done;
        let end = s.total == Some(done);
        s.draw(end);
    }

    fn finish(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.visible {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            s.visible = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_label_bar_and_counts() {
        let s = State {
            label: "indexing".into(),
            total: Some(10),
            done: 5,
            ..State::default()
        };
        assert_eq!(
            s.line(),
            format!("indexing [{}{}] 5/10", "#".repeat(15), " ".repeat(15))
        );
        let s = State {
            label: "reading".into(),
            ..State::default()
        };
        assert_eq!(s.line(), "reading … 0");
    }
}
