//! Waiting between attempts of an operation that lost a race (a ref moved under a
//! compare-and-swap, a remote that moved before a push, a database another process holds): one
//! growing, jittered pause and one deadline for every retry loop in lore.

use std::time::{Duration, Instant};

/// The pauses of one retried operation: attempt `n` waits a random time in
/// `[c/2, c)` where `c = min(first · 2^(n−1), most)` (random so that writers that collided do
/// not collide again), and no wait is granted once `deadline` has passed since the first attempt.
#[derive(Debug)]
pub struct Backoff {
    started: Instant,
    waits: u32,
    first: Duration,
    most: Duration,
    deadline: Duration,
}

impl Backoff {
    /// A backoff starting now.
    pub fn new(first: Duration, most: Duration, deadline: Duration) -> Backoff {
        Backoff {
            started: Instant::now(),
            waits: 0,
            first,
            most,
            deadline,
        }
    }

    /// Waits before the next attempt; `false` (without waiting) once the deadline has passed.
    pub fn wait(&mut self) -> bool {
        let Some(pause) = self.next_pause() else {
            return false;
        };
        std::thread::sleep(pause);
        true
    }

    /// How many waits were granted so far.
    pub fn waits(&self) -> u32 {
        self.waits
    }

    /// The next pause, counted as granted; `None` once the deadline has passed.
    fn next_pause(&mut self) -> Option<Duration> {
        if self.started.elapsed() > self.deadline {
            return None;
        }
        let ceiling = self
            .first
            .saturating_mul(1 << self.waits.min(16))
            .min(self.most)
            .max(Duration::from_micros(2));
        self.waits += 1;
        let half = ceiling / 2;
        let spread = u64::try_from((ceiling - half).as_nanos()).unwrap_or(u64::MAX);
        Some(half + Duration::from_nanos(jitter() % spread.max(1)))
    }
}

/// A random number for the pause (the clock and process id when the system's random source
/// fails: still different between processes).
fn jitter() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    u64::from(nanos ^ std::process::id().wrapping_mul(2_654_435_761))
}

#[cfg(test)]
mod tests {
    use super::Backoff;
    use std::time::Duration;

    #[test]
    fn pauses_double_from_the_first_up_to_the_most_each_in_the_upper_half() {
        let ms = Duration::from_millis;
        let mut b = Backoff::new(ms(10), ms(80), Duration::from_secs(60));
        for ceiling in [10, 20, 40, 80, 80, 80] {
            let pause = b.next_pause().expect("within the deadline");
            assert!(
                pause >= ms(ceiling / 2) && pause < ms(ceiling),
                "{pause:?} for a ceiling of {ceiling} ms"
            );
        }
        assert_eq!(b.waits(), 6);
    }

    #[test]
    fn no_wait_is_granted_past_the_deadline() {
        let mut b = Backoff::new(
            Duration::from_millis(1),
            Duration::from_millis(1),
            Duration::ZERO,
        );
        std::thread::sleep(Duration::from_millis(2));
        assert!(!b.wait());
        assert_eq!(b.waits(), 0);
    }
}
