//! Decoding on all cores with results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// JSON List items are decoded in parallel in chunks of this many.
pub(super) const CHUNK: usize = 256;
pub(super) const MAX_THREADS: usize = 8;
pub(super) const WORKER_STACK: usize = 16 << 20;

/// `f(0..n)` on up to `MAX_THREADS` worker threads, results in index
/// order. Work is taken one index at a time, so uneven units balance out.
pub(super) fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(MAX_THREADS)
        .min(n);
    if n == 0 {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return done;
            }
            done.push((i, f(i)));
        }
    };
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        // Every unit is parsed on a worker with an explicit stack, never on the
        // caller's (a test thread or a UI thread may have 2 MiB): YAML nested to
        // the depth limit recurses deeply, and far more so in a debug build.
        let mut handles = Vec::new();
        for _ in 0..threads.max(1) {
            let builder = std::thread::Builder::new().stack_size(WORKER_STACK);
            if let Ok(h) = builder.spawn_scoped(scope, work) {
                handles.push(h);
            }
        }
        let mut all = if handles.is_empty() {
            work()
        } else {
            Vec::new()
        };
        for h in handles {
            match h.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (i, t) in all {
            slots[i] = Some(t);
        }
    });
    slots.into_iter().flatten().collect()
}
