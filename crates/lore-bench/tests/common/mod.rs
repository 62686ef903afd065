//! What the measurement tests share: a progress sink that records every call, and the checks
//! every phase must pass.

use std::path::Path;
use std::sync::{Arc, Mutex};

use lore::ops::Operation;
use lore::progress::Progress;

/// One phase as reported: its label, its total, and every `advance` within it.
#[derive(Clone, Debug)]
pub struct Phase {
    pub label: String,
    pub total: Option<u64>,
    pub advances: Vec<u64>,
}

/// Records progress calls.
#[derive(Default)]
pub struct Recorder {
    phases: Mutex<Vec<Phase>>,
    finished: Mutex<bool>,
}

impl Progress for Recorder {
    fn phase(&self, label: &str, total: Option<u64>) {
        self.phases.lock().unwrap().push(Phase {
            label: label.to_string(),
            total,
            advances: Vec::new(),
        });
    }

    fn advance(&self, done: u64) {
        let mut phases = self.phases.lock().unwrap();
        let phase = phases.last_mut().expect("advance before any phase");
        phase.advances.push(done);
    }

    fn finish(&self) {
        *self.finished.lock().unwrap() = true;
    }
}

impl Recorder {
    /// The phases seen, after checking what every phase owes its reader: advances only go
    /// forward, a phase with a total ends at it, no phase makes more than ~100 calls, and the
    /// operation said it finished.
    pub fn phases(&self) -> Vec<Phase> {
        assert!(*self.finished.lock().unwrap(), "progress was not finished");
        let phases = self.phases.lock().unwrap().clone();
        for p in &phases {
            assert!(
                p.advances.windows(2).all(|w| w[0] < w[1]),
                "{}: advances go back or repeat: {:?}",
                p.label,
                p.advances
            );
            assert!(
                p.advances.len() <= 101,
                "{}: {} calls",
                p.label,
                p.advances.len()
            );
            match p.total {
                Some(total) if total > 0 => {
                    assert_eq!(
                        p.advances.last(),
                        Some(&total),
                        "{} ends at its total",
                        p.label
                    )
                }
                _ => {}
            }
        }
        phases
    }
}

/// Runs `request` as a front end without a store does, recording progress.
pub fn run_recorded<O: Operation>(
    request: O,
    scratch: &Path,
    embedder: Option<lore::embed::SharedEmbedder>,
) -> (lore::Result<O::Output>, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let out = lore_bench::run_measurement(request, scratch, embedder, recorder.clone()).map(
        |(report, warnings)| {
            assert!(warnings.is_empty(), "{warnings:?}");
            report
        },
    );
    (out, recorder)
}
