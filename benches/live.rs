//! Live start-up: the inspector (the real binary, in a pseudo-terminal) against the
//! test API server with 5,000 nodes and 150,000 pods (`FakeApi::populate`, served from
//! this process on one thread), timed from its start until its status bar says
//! `(connected)`, with its resident memory then and after idling.
//!
//! Run: `cargo bench --bench live`. SCHEDSCOPE_BENCH_NODES / SCHEDSCOPE_BENCH_PODS
//! size the cluster, SCHEDSCOPE_BENCH_RUNS (3) how many inspectors start one after
//! the other, SCHEDSCOPE_BENCH_IDLE_SECS (10) how long each idles before its memory is
//! read again.

#[path = "../tests/support/fake_api.rs"]
mod fake_api;
#[path = "../tests/support/pty.rs"]
mod pty;

mod support;

use std::time::{Duration, Instant};

use support::{env_usize, memory_mb};

fn main() {
    let nodes = env_usize("SCHEDSCOPE_BENCH_NODES", 5_000);
    let pods = env_usize("SCHEDSCOPE_BENCH_PODS", 150_000);
    let runs = env_usize("SCHEDSCOPE_BENCH_RUNS", 3);
    let idle = Duration::from_secs(env_usize("SCHEDSCOPE_BENCH_IDLE_SECS", 10) as u64);
    // The server keeps one thread of its own, as the example server does.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let api = runtime.block_on(fake_api::FakeApi::start());
    let t = Instant::now();
    api.populate(nodes, pods);
    api.compact();
    let dir = std::env::temp_dir().join(format!("schedscope-bench-live-{}", std::process::id()));
    let kubeconfig = api.write_kubeconfig(&dir);
    println!(
        "test API server: {nodes} nodes, {pods} pods, filled in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let path = kubeconfig.to_string_lossy().into_owned();
    for run in 1..=runs {
        let start = Instant::now();
        let mut session = pty::Session::start(&["--kubeconfig", &path]);
        let pid = session.process_id().expect("the inspector's pid");
        let deadline = start + Duration::from_secs(120);
        let connected = loop {
            if session.screen().contains("(connected)") {
                break start.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "the inspector never connected; it shows:\n{}",
                session.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let pid = pid.to_string();
        let (rss, hwm) = memory_mb(&pid).unwrap_or_default();
        std::thread::sleep(idle);
        let (idle_rss, idle_hwm) = memory_mb(&pid).unwrap_or_default();
        println!(
            "run {run}: connected after {:.2} s, {rss:.0} MB resident then (peak {hwm:.0} MB); \
             after {} s idle {idle_rss:.0} MB (peak {idle_hwm:.0} MB)",
            connected.as_secs_f64(),
            idle.as_secs()
        );
        session.keys("q");
        let status = session.wait_exit();
        assert!(status.success(), "the inspector exited with {status:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
