//! Tool calls of one stdio connection applied in the order they arrived: the line reader
//! numbers each `tools/call` request (its turn, in `params._meta`), and a call runs only once
//! every earlier turn has run or was dropped (a cancelled request). A turn whose request never
//! reaches a tool (the protocol layer refused it) is given up once nothing has run for
//! [`STALL`], so a lost turn delays later calls but never wedges them.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// The `_meta` key that carries a request's turn.
pub const TURN_KEY: &str = "lore/turn";
/// How long waiting calls wait for a turn that never came, while nothing runs.
const STALL: Duration = Duration::from_millis(1500);

#[derive(Default)]
struct State {
    /// The turn that may run next.
    next: u64,
    /// Turns done (run or dropped) beyond `next`.
    done: BTreeSet<u64>,
    /// Turns waiting.
    waiting: BTreeSet<u64>,
    /// Whether a turn is running.
    running: bool,
}

/// The order of one connection's calls.
#[derive(Default)]
pub struct Turns {
    state: Mutex<State>,
    changed: Notify,
}

/// A turn held: while it lives its call may run; dropping it lets the next one go.
pub struct Turn {
    turns: Arc<Turns>,
    number: u64,
}

impl Turns {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until turn `number` may run.
    pub async fn wait(self: &Arc<Self>, number: u64) -> Turn {
        let turn = Turn {
            turns: Arc::clone(self),
            number,
        };
        self.lock().waiting.insert(number);
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let seen = {
                let mut st = self.lock();
                if st.next >= number && !st.running {
                    st.running = true;
                    st.waiting.remove(&number);
                    return turn;
                }
                st.next
            };
            if tokio::time::timeout(STALL, notified).await.is_err() {
                // Nothing moved: turns before the first waiting one never came.
                let mut st = self.lock();
                if st.next == seen && !st.running && st.waiting.first() == Some(&number) {
                    st.next = number;
                }
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut st = self.turns.lock();
        if st.waiting.remove(&self.number) {
            // Dropped while waiting (a cancelled request): its turn is done.
        } else {
            st.running = false;
        }
        if self.number >= st.next {
            st.done.insert(self.number);
        }
        loop {
            let next = st.next;
            if !st.done.remove(&next) {
                break;
            }
            st.next = next + 1;
        }
        drop(st);
        self.turns.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_run_in_turn_order_whatever_order_they_start_in() {
        let turns = Arc::new(Turns::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for n in (0..6u64).rev() {
            let (turns, order) = (Arc::clone(&turns), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let _turn = turns.wait(n).await;
                order.lock().unwrap().push(n);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4, 5]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_turn_that_never_comes_is_given_up() {
        let turns = Arc::new(Turns::default());
        // Turn 0 never arrives; turn 1 runs after the stall.
        let started = std::time::Instant::now();
        drop(turns.wait(1).await);
        assert!(started.elapsed() >= STALL);
        // A cancelled waiter frees its turn at once.
        let waiting = {
            let turns = Arc::clone(&turns);
            tokio::spawn(async move { drop(turns.wait(3).await) })
        };
        let cancelled = {
            let turns = Arc::clone(&turns);
            tokio::spawn(async move { drop(turns.wait(2).await) })
        };
        cancelled.abort();
        let started = std::time::Instant::now();
        waiting.await.unwrap();
        assert!(started.elapsed() < STALL * 2);
    }
}
