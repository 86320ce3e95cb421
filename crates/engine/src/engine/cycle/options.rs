//! How a cycle runs: its options, the injected clock that times its phases, and the
//! node evaluations spread over a persistent worker pool with results in node order
//! (upstream: pkg/scheduler/framework/parallelize/parallelism.go, `Until`, and the
//! `parallelism` setting).

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
    /// Which cycles record each searched node's verdict (`Trace::filter`).
    pub verdicts: Verdicts,
}

/// When a cycle lists the verdict of every node it searched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verdicts {
    /// Every cycle (explain, the inspector, kept traces).
    #[default]
    Always,
    /// Only when no node fits, where the scheduler reads them (the rejecting plugins
    /// decide which events requeue the pod); a simulation that keeps no traces
    /// saves building and dropping thousands of verdicts per placed pod.
    WhenNoneFits,
}

impl Default for CycleOptions {
    fn default() -> Self {
        CycleOptions {
            all_filters: false,
            now: Timestamp::UNIX_EPOCH,
            parallelism: 0,
            min_nodes_per_worker: 64,
            timer: None,
            verdicts: Verdicts::Always,
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
    pub fn workers(&self, n: usize) -> usize {
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

    /// The fewest nodes of one chunk that a worker takes at a time: 8, below which a
    /// split costs more than it spreads, or fewer when tests ask for tiny splits.
    pub(super) fn min_chunk(&self) -> usize {
        self.min_nodes_per_worker.clamp(1, 8)
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

/// Runs `f` on a thread of the `workers`-thread pool (on the calling thread when
/// `workers` is 1, or it is already one of them, or no pool could be started).
///
/// Why enter the pool at all: a phase split from outside it must hand every chunk
/// over and then wait for the slowest hand-over, and waking a parked thread costs
/// tens of microseconds on a virtual machine, more than a chunk of a small phase.
/// From inside, the chunks nobody has taken yet are run by the thread that split
/// them, so a worker that wakes late costs nothing. One entry per cycle (or per
/// simulation) pays the hand-over once.
pub fn in_workers<R: Send>(workers: usize, f: impl FnOnce() -> R + Send) -> R {
    if workers <= 1 {
        return f();
    }
    match pool(workers) {
        Some(p) => run_in(&p, f),
        None => f(),
    }
}

/// `f` on a thread of `pool`: the calling one when it is already one of them.
fn run_in<R: Send>(pool: &rayon::ThreadPool, f: impl FnOnce() -> R + Send) -> R {
    if pool.current_thread_index().is_some() {
        f()
    } else {
        pool.install(f)
    }
}

/// `f` over `0..n` in order, in contiguous chunks spread over `workers` threads:
/// each chunk's results in order, then the chunks in order, so the result is what a
/// sequential map gives. Several chunks per worker, taken as workers come free, so
/// one that starts late or runs slow nodes does not hold the others up. Without a
/// pool (threads could not be started) the chunks run one after the other on the
/// calling thread.
pub(super) fn par_chunks<T: Send>(
    workers: usize,
    min_chunk: usize,
    n: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    if workers <= 1 || n <= 1 {
        return vec![f(0..n)];
    }
    let per = n.div_ceil(workers * 4).max(min_chunk);
    let chunks = n.div_ceil(per);
    let range = |c: usize| c * per..((c + 1) * per).min(n);
    let Some(pool) = pool(workers) else {
        return (0..chunks).map(|c| f(range(c))).collect();
    };
    run_in(&pool, || {
        use rayon::prelude::*;
        (0..chunks)
            .into_par_iter()
            .map(|c| f(range(c)))
            .collect::<Vec<T>>()
    })
}

/// `f` over `0..n` on `workers` threads, results in index order.
pub(super) fn par_map<T: Send>(
    workers: usize,
    min_chunk: usize,
    n: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let chunks = par_chunks(workers, min_chunk, n, |r| r.map(&f).collect::<Vec<T>>());
    if chunks.len() == 1 {
        return chunks.into_iter().next().unwrap_or_default();
    }
    let mut out = Vec::with_capacity(n);
    for c in chunks {
        out.extend(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_give_what_a_sequential_map_gives() {
        for workers in [1, 2, 3, 8] {
            for min_chunk in [1, 8] {
                for n in [0, 1, 2, 7, 8, 9, 63, 64, 65, 1000] {
                    let want: Vec<usize> = (0..n).map(|i| i * 3).collect();
                    assert_eq!(par_map(workers, min_chunk, n, |i| i * 3), want);
                    let ranges = par_chunks(workers, min_chunk, n, |r| r);
                    let covered: Vec<usize> = ranges.iter().cloned().flatten().collect();
                    assert_eq!(covered, (0..n).collect::<Vec<_>>());
                    // Every chunk but the last has at least `min_chunk` items.
                    let (_, full) = ranges.split_last().unwrap_or((&(0..0), &[]));
                    assert!(full.iter().all(|r| r.len() >= min_chunk), "{ranges:?}");
                    assert!(ranges.len() <= workers * 4 || ranges.len() == 1);
                    // From inside the pool, as a cycle entered with `in_workers` splits.
                    let inside = in_workers(workers, || par_map(workers, min_chunk, n, |i| i * 3));
                    assert_eq!(inside, want);
                }
            }
        }
    }

    #[test]
    fn in_workers_runs_on_a_pool_thread_only_when_there_are_workers() {
        let name = || std::thread::current().name().map(String::from);
        let here = name();
        assert_eq!(in_workers(1, name), here);
        let pooled = in_workers(2, name).unwrap_or_default();
        assert!(pooled.starts_with("schedscope-cycle-"), "{pooled}");
        // Entered again from inside, it stays on the same thread.
        let nested = in_workers(2, || (name(), in_workers(2, name)));
        assert_eq!(nested.0, nested.1);
    }

    #[test]
    fn workers_follow_parallelism_and_the_node_floor() {
        let opts = |parallelism, min_nodes_per_worker| CycleOptions {
            parallelism,
            min_nodes_per_worker,
            ..Default::default()
        };
        assert_eq!(opts(1, 1).workers(5000), 1);
        assert_eq!(opts(4, 64).workers(5000), 4);
        assert_eq!(opts(4, 64).workers(130), 2);
        assert_eq!(opts(4, 64).workers(10), 1);
        assert_eq!(opts(4, 64).min_chunk(), 8);
        assert_eq!(opts(4, 1).min_chunk(), 1);
    }
}
