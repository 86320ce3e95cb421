//! `schedscope ... | head`: when the reader of stdout goes away, the binary stops
//! quietly with success, as other CLIs do, whatever it was printing.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const DEMO: &str = "examples/demo-cluster.yaml";

/// Every human and machine output, each on a pipe whose reader is already closed, so
/// the first write fails (no race with the pipe's buffer).
#[test]
fn a_closed_stdout_is_a_quiet_success() {
    let runs: [&[&str]; 7] = [
        &["explain", "batch/quarterly-report"],
        &["explain", "batch/quarterly-report", "-o", "json"],
        &["explain", "batch/quarterly-report", "-o", "yaml"],
        &["simulate"],
        &["simulate", "-o", "json", "--traces"],
        &["pods"],
        &["simulate", "-o", "json"],
    ];
    for args in runs {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args(["--snapshot", DEMO])
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{args:?}: {:?}\n{stderr}",
            out.status
        );
    }
}

/// As `| head -1` does: one line read, then the pipe closed while a long output is
/// still being written.
#[test]
fn head_reading_one_line_of_simulate_json() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(["--snapshot", DEMO, "simulate", "-o", "json", "--traces"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("one line");
    assert_eq!(first, "{\n");
    let out = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{:?}\n{stderr}",
        out.status
    );
}
