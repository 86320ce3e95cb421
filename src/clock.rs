//! Wall-clock time, read in one place. The engine never reads a clock: callers pass
//! "now" in, and the inspector's countdowns take an injected [`Clock`] so tests move
//! time by hand.

use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The current wall-clock time (full precision, as kube-scheduler's `time.Now()`).
pub fn wall_clock() -> Timestamp {
    Timestamp::now()
}

pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// Wall-clock time.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        wall_clock()
    }
}

/// A clock tests move by hand.
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    pub fn new(t: Timestamp) -> Self {
        ManualClock(Mutex::new(t))
    }
    pub fn advance(&self, d: Duration) {
        if let Ok(mut t) = self.0.lock()
            && let Ok(sd) = SignedDuration::try_from(d)
        {
            *t = t.checked_add(sd).unwrap_or(*t);
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.0.lock().map(|t| *t).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}
