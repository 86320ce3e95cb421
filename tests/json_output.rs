//! `explain -o json` and `-o yaml`, byte for byte, on every fidelity scenario: the
//! bytes a script reads must not change when the renderer does (the scheduler's
//! answer inside them is checked field by field by `tests/fidelity.rs`). The
//! snapshots under `tests/snapshots/` were written by the Value-tree renderer that
//! the streaming one replaced.

mod support {
    pub mod bin;
    pub mod fidelity;
}

use support::bin::{ok, s};
use support::fidelity::scenario_dirs;

/// The binary's output for a scenario's pod with `extra` arguments.
fn explain(dir: &std::path::Path, extra: &[&str]) -> String {
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let snapshot = dir.join("snapshot.yaml");
    let config = dir.join("config.yaml");
    let mut args = vec!["explain", "-s", s(&snapshot), pod.trim()];
    if config.exists() {
        args.extend(["--config", s(&config)]);
    }
    args.extend(extra);
    ok(&args)
}

fn check_every_scenario(suffix: &str, extra: &[&str]) {
    let dirs = scenario_dirs();
    assert!(
        dirs.len() >= 100,
        "fidelity scenarios found: {}",
        dirs.len()
    );
    for dir in dirs {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        insta::assert_snapshot!(format!("{name}{suffix}"), explain(&dir, extra));
    }
}

#[test]
fn json_output_is_unchanged_on_every_fidelity_scenario() {
    check_every_scenario("", &["-o", "json"]);
}

#[test]
fn all_filters_json_output_is_unchanged_on_every_fidelity_scenario() {
    check_every_scenario("-all-filters", &["-o", "json", "--all-filters"]);
}

#[test]
fn yaml_output_is_unchanged_on_every_fidelity_scenario() {
    check_every_scenario("-yaml", &["-o", "yaml"]);
}
