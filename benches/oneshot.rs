//! One-shot `explain`: what a user waits for on the command line, the built binary
//! run as they run it (`explain --snapshot FILE POD --timings`, table and `-o json`),
//! on the realistic shape of `gen_scale.py` and on the same shape at 3x.
//!
//! Run: `SCHEDSCOPE_SCALE_FILE=/tmp/c.json cargo bench --bench oneshot`. The 3x file
//! (15,000 nodes / ~450,000 pods: the file's nodes and bound pods replicated under new
//! names) is built on first use and cached under `target/scale-cache/`.
//! SCHEDSCOPE_ONESHOT_FACTORS (default `1,3`) picks the sizes, SCHEDSCOPE_ONESHOT_RUNS
//! (default 3) the runs per row (the median is reported). Sizes run in alternation,
//! so a machine that gets busier mid-run slows both alike. Each row: the phases
//! `--timings` prints, the wall time, the peak memory, and the output's size; then
//! the growth of each figure from the first size to the others.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use support::env_usize;

const PODS: [&str; 3] = ["default/plain", "default/anti", "default/spread"];
const OUTPUTS: [&str; 2] = ["table", "json"];

/// One run's figures by name (ms, except `peak MB` and `output MB`).
type Figures = BTreeMap<String, f64>;

fn run_once(file: &PathBuf, pod: &str, output: &str) -> Figures {
    let binary = env!("CARGO_BIN_EXE_schedscope");
    let started = Instant::now();
    let out = Command::new(binary)
        .args(["explain", "--snapshot"])
        .arg(file)
        .args([pod, "--timings", "-o", output])
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let wall = started.elapsed().as_secs_f64() * 1e3;
    assert!(
        out.status.success(),
        "explain {pod} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut figures = Figures::new();
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        let Some((name, value)) = line.split_once(": ") else {
            continue;
        };
        if let Some(ms) = value.strip_suffix(" ms") {
            figures.insert(name.to_string(), ms.parse().unwrap_or(f64::NAN));
        } else if let Some(mb) = value.strip_suffix(" MB") {
            figures.insert("peak MB".to_string(), mb.parse().unwrap_or(f64::NAN));
        }
    }
    figures.insert("wall".into(), wall);
    figures.insert("output MB".into(), out.stdout.len() as f64 / 1e6);
    figures
}

const SHOWN: [&str; 10] = [
    "load",
    "decode",
    "model",
    "scheduling cycle",
    "Score",
    "answer",
    "render",
    "wall",
    "peak MB",
    "output MB",
];

fn main() {
    schedscope::allocator::tune();
    let Ok(source) = std::env::var("SCHEDSCOPE_SCALE_FILE") else {
        println!("SCHEDSCOPE_SCALE_FILE is not set: nothing to measure (see the module doc)");
        return;
    };
    let factors: Vec<usize> = std::env::var("SCHEDSCOPE_ONESHOT_FACTORS")
        .unwrap_or_else(|_| "1,3".into())
        .split(',')
        .filter_map(|f| f.trim().parse().ok())
        .collect();
    let runs = env_usize("SCHEDSCOPE_ONESHOT_RUNS", 3).max(1);
    let files: Vec<(usize, PathBuf)> = factors
        .iter()
        .map(|&f| match f {
            1 => (f, PathBuf::from(&source)),
            _ => (
                f,
                support::replicate::replicated(std::path::Path::new(&source), f),
            ),
        })
        .collect();
    for (f, file) in &files {
        let mb = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        println!("x{f}: {} ({mb:.0} MB)", file.display());
    }
    // (factor, pod, output) -> each run's figures
    let mut all: BTreeMap<(usize, &str, &str), Vec<Figures>> = BTreeMap::new();
    for _ in 0..runs {
        for pod in PODS {
            for output in OUTPUTS {
                for (f, file) in &files {
                    all.entry((*f, pod, output))
                        .or_default()
                        .push(run_once(file, pod, output));
                }
            }
        }
    }
    let med = |runs: &[Figures], name: &str| {
        let mut v: Vec<f64> = runs.iter().filter_map(|r| r.get(name).copied()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "\nmedians of {runs} run(s); ms unless named\n{:<4} {:<15} {:<6} {}",
        "size",
        "pod",
        "output",
        SHOWN.map(|s| format!("{s:>16}")).join("")
    );
    for ((f, pod, output), r) in &all {
        let cells: String = SHOWN
            .iter()
            .map(|s| format!("{:>16.1}", med(r, s)))
            .collect();
        println!("x{f:<3} {pod:<15} {output:<6} {cells}");
    }
    let Some(&base) = factors.first() else { return };
    for &f in factors.iter().skip(1) {
        println!("\ngrowth x{f} / x{base} (medians)");
        for pod in PODS {
            for output in OUTPUTS {
                let (Some(a), Some(b)) =
                    (all.get(&(base, pod, output)), all.get(&(f, pod, output)))
                else {
                    continue;
                };
                let cells: String = SHOWN
                    .iter()
                    .map(|s| format!("{:>16.2}", med(b, s) / med(a, s)))
                    .collect();
                println!("     {pod:<15} {output:<6} {cells}");
            }
        }
    }
}
