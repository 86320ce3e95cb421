//! Profile presets (`--profile-preset`, files under `profiles/`), tested like user
//! configurations: each scenario of `tests/profile-presets` carries the preset as its
//! `config.yaml` (the same bytes as the shipped file) and the real scheduler's answer
//! with that configuration (v1.32.0, v1.33.3, v1.34.1, v1.34.7 and v1.35.4, see each
//! README.txt); ours, with the preset loaded as `--profile-preset` loads it, must
//! match field by field, compared as `tests/fidelity.rs` compares.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::render::json::to_json;
use schedscope::source::load_snapshot;
use schedscope::source::presets::Preset;
use schedscope::version::{KubeVersion, Release, VersionSource};
use serde_json::Value;

#[path = "support/fidelity.rs"]
mod support_fidelity;
use support_fidelity::{RELEASES, compare};

fn scenario_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/profile-presets")
        .join(name)
}

fn check(name: &str, preset: Preset) {
    let dir = scenario_dir(name);
    let config_yaml = std::fs::read_to_string(dir.join("config.yaml")).unwrap();
    assert_eq!(
        config_yaml,
        preset.text(),
        "{name}: config.yaml is not the shipped {preset}"
    );
    let config = schedscope::cli::load_config(Some(&preset.config_path())).expect("preset loads");
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (file, release) in RELEASES {
        // v1.32.0's answers are written once its oracle is built (see each
        // README.txt); every answer present is checked.
        let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
            continue;
        };
        checked += 1;
        let expected: Value = serde_json::from_str(&text).unwrap();
        let mut snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
        let version = KubeVersion::parse(release).unwrap();
        snap.cluster.kube_version = Some(Release::new(version, VersionSource::Flag));
        let opts = CycleOptions {
            all_filters: true,
            now: "2026-01-01T00:00:00Z".parse().unwrap(),
            ..Default::default()
        };
        let trace = explain(&snap.cluster, &config, pod.trim(), &opts).expect("explain");
        let diffs = compare(&expected, &to_json(&trace));
        if !diffs.is_empty() {
            failures.push(format!("v{release} ({file}):\n{}", diffs.join("\n")));
        }
    }
    assert!(checked >= 4, "{name}: v1.33.3 to v1.35.4 answer at least");
    assert!(
        failures.is_empty(),
        "{name} differs from kube-scheduler:\n{}",
        failures.join("\n\n")
    );
}

macro_rules! scenarios {
    ($($test:ident => $dir:literal, $preset:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($dir, $preset);
            }
        )*

        /// Every scenario directory has a test above, and every preset a scenario.
        #[test]
        fn every_scenario_directory_and_preset_is_tested() {
            let listed: BTreeSet<&str> = [$($dir),*].into_iter().collect();
            let dirs: BTreeSet<String> = std::fs::read_dir(scenario_dir(""))
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join("snapshot.yaml").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let dirs: BTreeSet<&str> = dirs.iter().map(String::as_str).collect();
            assert_eq!(listed, dirs);
            let presets: BTreeSet<Preset> = [$($preset),*].into_iter().collect();
            assert_eq!(presets, Preset::ALL.into_iter().collect());
        }
    };
}

scenarios! {
    p01 => "p01-low-node-utilization", Preset::LowNodeUtilization;
    p02 => "p02-high-node-utilization", Preset::HighNodeUtilization;
    p03 => "p03-no-scoring", Preset::NoScoring;
    p04 => "p04-most-allocated", Preset::MostAllocated;
}
