//! MCP's view of the library's progress seam: when a call carries a progress token, progress
//! becomes `notifications/progress`, sent in order by one task; otherwise it goes nowhere.

use std::sync::Arc;
use std::sync::Mutex;

use lore::progress::{self, Progress, SharedProgress};
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

/// The sink for one call, and the task that sends its notifications (to await before the
/// result goes out).
pub fn for_request(rc: &RequestContext<RoleServer>) -> (SharedProgress, Option<JoinHandle<()>>) {
    let Some(token) = rc.meta.get_progress_token() else {
        return (progress::silent(), None);
    };
    let (tx, mut rx) = unbounded_channel::<ProgressNotificationParam>();
    let peer = rc.peer.clone();
    let task = tokio::spawn(async move {
        while let Some(note) = rx.recv().await {
            if peer.notify_progress(note).await.is_err() {
                break;
            }
        }
    });
    let sink = Notifier {
        token,
        tx,
        state: Mutex::new(Counts::default()),
    };
    (Arc::new(sink), Some(task))
}

/// Phases follow each other; MCP wants one number that only grows, so a phase's steps count
/// on from where the earlier phases ended.
#[derive(Default)]
struct Counts {
    base: u64,
    total: Option<u64>,
    done: u64,
    label: String,
}

struct Notifier {
    token: ProgressToken,
    tx: UnboundedSender<ProgressNotificationParam>,
    state: Mutex<Counts>,
}

impl Notifier {
    fn send(&self, c: &Counts) {
        let mut note = ProgressNotificationParam::new(self.token.clone(), (c.base + c.done) as f64);
        if let Some(total) = c.total {
            note = note.with_total((c.base + total) as f64);
        }
        note.message = Some(c.label.clone());
        let _ = self.tx.send(note);
    }
}

impl Progress for Notifier {
    fn phase(&self, label: &str, total: Option<u64>) {
        let mut c = self.state.lock().unwrap_or_else(|p| p.into_inner());
        c.base += c.total.unwrap_or(c.done).max(c.done);
        c.total = total;
        c.done = 0;
        c.label = label.to_string();
        self.send(&c);
    }

    fn advance(&self, done: u64) {
        let mut c = self.state.lock().unwrap_or_else(|p| p.into_inner());
        c.done = done;
        self.send(&c);
    }
}
