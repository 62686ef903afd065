//! How long operations (reindex, import, export, eval, bench, sync) say how far they are. The
//! library reports through [`Progress`]; each front end decides what that looks like (a bar on a
//! terminal, MCP progress notifications, nothing at all).

use std::sync::Arc;

/// Receives progress from a long operation. Calls come from the thread doing the work and must
/// return quickly; a front end that draws or sends does so without blocking the operation.
pub trait Progress: Send + Sync {
    /// A phase starts: what is being done, and how many steps it has if that is known.
    fn phase(&self, label: &str, total: Option<u64>);
    /// `done` steps of the current phase are complete (monotonic within a phase).
    fn advance(&self, done: u64);
    /// The operation is over (successfully or not): clear whatever was drawn.
    fn finish(&self) {}
}

/// Progress that goes nowhere (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _label: &str, _total: Option<u64>) {}
    fn advance(&self, _done: u64) {}
}

/// A shared progress sink.
pub type SharedProgress = Arc<dyn Progress>;

/// The sink that reports nothing.
pub fn silent() -> SharedProgress {
    Arc::new(Silent)
}

/// Reports `done` only when it crosses another `1/steps` of `total` (or the end), so a loop over
/// a million items does not make a million calls.
pub struct Throttle<'a> {
    sink: &'a dyn Progress,
    total: u64,
    every: u64,
    next: u64,
}

impl<'a> Throttle<'a> {
    /// Starts a phase of `total` steps on `sink`, reporting about `steps` times.
    pub fn new(sink: &'a dyn Progress, label: &str, total: u64, steps: u64) -> Throttle<'a> {
        sink.phase(label, Some(total));
        let every = (total / steps.max(1)).max(1);
        Throttle {
            sink,
            total,
            every,
            next: every,
        }
    }

    /// `done` steps are complete.
    pub fn advance(&mut self, done: u64) {
        if done >= self.next || done >= self.total {
            self.sink.advance(done.min(self.total));
            self.next = done.saturating_add(self.every);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Record(Mutex<Vec<u64>>);

    impl Progress for Record {
        fn phase(&self, _label: &str, _total: Option<u64>) {}
        fn advance(&self, done: u64) {
            self.0.lock().unwrap().push(done);
        }
    }

    #[test]
    fn throttle_reports_about_the_asked_number_of_times_and_the_end() {
        let r = Record::default();
        let mut t = Throttle::new(&r, "x", 1000, 10);
        for i in 1..=1000 {
            t.advance(i);
        }
        let seen = r.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 10);
        assert_eq!(*seen.last().unwrap(), 1000);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }
}
