//! How a cycle runs: its options, the injected clock that times its phases, and the
//! node evaluations spread over a persistent worker pool with results in node order.

use k8s_openapi::jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct CycleOptions {
    /// Also run every filter plugin on every node (`Trace::filter_all`).
    pub all_filters: bool,
    /// The time the cycle runs at (where upstream reads the clock).
    pub now: Timestamp,
    /// Workers evaluating Filter and Score over node chunks (upstream's
    /// `parallelism`): 0 = the machine's available parallelism, 1 = sequential. The
    /// results are merged in node order, so every output is the same for any value.
    pub parallelism: usize,
    /// The fewest nodes one worker is given: below that a thread costs more than it
    /// saves. Tests set 1 so that tiny clusters are split too.
    pub min_nodes_per_worker: usize,
    /// Records how long PreFilter, Filter and Score took (`explain --timings`); the
    /// engine reads no clock itself, the caller injects one.
    pub timer: Option<PhaseTimer>,
}

impl Default for CycleOptions {
    fn default() -> Self {
        CycleOptions {
            all_filters: false,
            now: Timestamp::UNIX_EPOCH,
            parallelism: 0,
            min_nodes_per_worker: 64,
            timer: None,
        }
    }
}

/// A phase of the scheduling cycle that [`PhaseClock`] times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    PreFilter,
    Filter,
    Score,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::PreFilter => "PreFilter",
            Phase::Filter => "Filter",
            Phase::Score => "Score",
        }
    }
}

/// An injected clock that also collects the phase durations of a cycle. A phase may
/// be recorded more than once (all-filters mode runs PreFilter and Filter again);
/// the durations add up.
pub trait PhaseClock: Send + Sync {
    /// Monotonic time since an arbitrary origin.
    fn now(&self) -> Duration;
    fn record(&self, phase: Phase, took: Duration);
}

#[derive(Clone)]
pub struct PhaseTimer(pub Arc<dyn PhaseClock>);

impl std::fmt::Debug for PhaseTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PhaseTimer")
    }
}

/// Records the time from [`PhaseGuard::start`] to its drop as `phase`.
pub(super) struct PhaseGuard<'a> {
    timer: &'a PhaseTimer,
    phase: Phase,
    start: Duration,
}

impl<'a> PhaseGuard<'a> {
    pub(super) fn start(timer: &'a PhaseTimer, phase: Phase) -> Self {
        PhaseGuard {
            timer,
            phase,
            start: timer.0.now(),
        }
    }
}

impl Drop for PhaseGuard<'_> {
    fn drop(&mut self) {
        let took = self.timer.0.now().saturating_sub(self.start);
        self.timer.0.record(self.phase, took);
    }
}

impl CycleOptions {
    /// Runs `f`, recording its duration as `phase` when a timer is set.
    pub(super) fn timed<T>(&self, phase: Phase, f: impl FnOnce() -> T) -> T {
        let Some(t) = &self.timer else {
            return f();
        };
        let start = t.0.now();
        let out = f();
        t.0.record(phase, t.0.now().saturating_sub(start));
        out
    }

    /// How many workers share `n` node evaluations.
    pub(super) fn workers(&self, n: usize) -> usize {
        // Asked once per process: the standard library reads cgroup files for it,
        // which would cost more than a small cycle.
        static AVAILABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let p = match self.parallelism {
            0 => *AVAILABLE
                .get_or_init(|| std::thread::available_parallelism().map_or(1, |p| p.get())),
            p => p,
        };
        p.min(n / self.min_nodes_per_worker.max(1)).max(1)
    }
}

/// The persistent worker pool of `threads` threads, built on first use and kept for
/// the process: spawning threads for every Filter or Score phase cost more than the
/// phase itself at a few thousand nodes. One pool per thread count, as a cycle's
/// `parallelism` asks for (a handful of distinct values per process at most).
fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: std::sync::Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(t, _)| *t == threads) {
        return Some(p.clone());
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("schedscope-cycle-{i}"))
        .build()
        .ok()
        .map(Arc::new)?;
    pools.push((threads, built.clone()));
    Some(built)
}

/// `f` over `0..n` in order: `workers` contiguous chunks, the calling thread taking
/// the first and the persistent pool's `workers - 1` threads the others; each
/// chunk's results in order, then the chunks in order, so the result is what a
/// sequential map gives. Without a pool (threads could not be started) the chunks
/// run one after the other on the calling thread.
pub(super) fn par_chunks<T: Send>(
    workers: usize,
    n: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    if workers <= 1 || n <= 1 {
        return vec![f(0..n)];
    }
    let per = n.div_ceil(workers);
    let ranges: Vec<std::ops::Range<usize>> =
        (0..n).step_by(per).map(|s| s..(s + per).min(n)).collect();
    let Some(pool) = pool(ranges.len() - 1) else {
        return ranges.into_iter().map(f).collect();
    };
    let f = &f;
    let mut out: Vec<Option<T>> = ranges.iter().map(|_| None).collect();
    let (first, rest) = out.split_at_mut(1);
    // The scope returns once every spawned chunk has run (a panic in one is
    // raised here after the others finished).
    pool.in_place_scope(|scope| {
        for (slot, r) in rest.iter_mut().zip(&ranges[1..]) {
            let r = r.clone();
            scope.spawn(move |_| *slot = Some(f(r)));
        }
        first[0] = Some(f(ranges[0].clone()));
    });
    out.into_iter().flatten().collect()
}

/// `f` over `0..n` on `workers` threads, results in index order.
pub(super) fn par_map<T: Send>(workers: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let chunks = par_chunks(workers, n, |r| r.map(&f).collect::<Vec<T>>());
    if chunks.len() == 1 {
        return chunks.into_iter().next().unwrap_or_default();
    }
    let mut out = Vec::with_capacity(n);
    for c in chunks {
        out.extend(c);
    }
    out
}
