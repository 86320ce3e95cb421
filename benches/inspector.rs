//! The inspector's key-to-redraw: the real binary in a pseudo-terminal (140×40) on
//! the realistic shape of `gen_scale.py`, and on the same shape at 3x, timed from a
//! key press to the last byte of the frame it causes (the output quiet for 30 ms
//! after it). Keys: the next and previous pod (each shown pod's trace is computed
//! on first view, then kept), and each detail tab.
//!
//! Run: `SCHEDSCOPE_SCALE_FILE=/tmp/c.json cargo bench --bench inspector`.
//! SCHEDSCOPE_INSPECTOR_FACTORS (default `1,3`) picks the sizes (the 3x file is
//! built on first use and cached under `target/scale-cache/`),
//! SCHEDSCOPE_INSPECTOR_ROUNDS (default 5) how many times the key sequence runs.

#[path = "../tests/support/pty.rs"]
mod pty;

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{env_usize, median};

/// The keys timed, with what they do.
const KEYS: [(&str, &str); 12] = [
    ("j", "next pod"),
    ("2", "Filters"),
    ("3", "Scores"),
    ("4", "Node"),
    ("5", "Compare"),
    ("6", "Preemption"),
    ("9", "History"),
    ("0", "Needs"),
    ("1", "Pipeline"),
    ("j", "next pod"),
    ("k", "previous pod"),
    ("k", "previous pod"),
];

fn main() {
    let Ok(source) = std::env::var("SCHEDSCOPE_SCALE_FILE") else {
        eprintln!("set SCHEDSCOPE_SCALE_FILE to a gen_scale.py file (see the module doc)");
        return;
    };
    let rounds = env_usize("SCHEDSCOPE_INSPECTOR_ROUNDS", 5);
    let factors: Vec<usize> = std::env::var("SCHEDSCOPE_INSPECTOR_FACTORS")
        .unwrap_or_else(|_| "1,3".into())
        .split(',')
        .filter_map(|f| f.trim().parse().ok())
        .collect();
    for factor in factors {
        let file: PathBuf = if factor == 1 {
            PathBuf::from(&source)
        } else {
            support::replicate::replicated(Path::new(&source), factor)
        };
        measure(&file, factor, rounds);
    }
}

fn measure(file: &Path, factor: usize, rounds: usize) {
    let started = Instant::now();
    let mut s = pty::Session::start(&["--snapshot", file.to_str().expect("UTF-8 path")]);
    // The pods list names the file's pending pods once the load is done.
    let deadline = started + Duration::from_secs(600);
    while !s.screen().contains("default/spread") {
        assert!(Instant::now() < deadline, "never loaded:\n{}", s.screen());
        std::thread::sleep(Duration::from_millis(20));
    }
    let loaded = started.elapsed();
    // Let the first trace (computed after the load) settle.
    std::thread::sleep(Duration::from_secs(2));
    let quiet = Duration::from_millis(30);
    let limit = Duration::from_secs(10);
    let mut by_key: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    let mut all = Vec::new();
    let mut silent = 0;
    for _ in 0..rounds {
        for (key, what) in KEYS {
            match s.redraw_after(key, quiet, limit) {
                Some(d) => {
                    by_key.entry(format!("{key} ({what})")).or_default().push(d);
                    all.push(d);
                }
                None => silent += 1,
            }
        }
    }
    println!(
        "{factor}x ({}): inspector loaded in {:.1} s",
        file.display(),
        loaded.as_secs_f64()
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (key, times) in &by_key {
        let max = times.iter().copied().max().unwrap_or_default();
        println!(
            "  key {key:<18} redraw: median {:6.1} ms, max {:6.1} ms ({} presses)",
            ms(median(times.clone())),
            ms(max),
            times.len()
        );
    }
    let max = all.iter().copied().max().unwrap_or_default();
    println!(
        "  every key: median {:.1} ms, max {:.1} ms, {} presses ({silent} drew nothing)",
        ms(median(all.clone())),
        ms(max),
        all.len()
    );
    s.keys("q");
    let status = s.wait_exit();
    assert!(status.success(), "the inspector exited with {status:?}");
}
