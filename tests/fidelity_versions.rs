//! Version fidelity: each scenario of `tests/fidelity-versions` carries the answer of
//! the real kube-scheduler of several releases (`expected-1.32.json` = v1.32.0,
//! `-1.33` = v1.33.3, `-1.34` = v1.34.1, `-1.34.7`, `-1.35` = v1.35.4; see that folder's
//! README). Ours, replayed at that exact release, must match each one field by field,
//! compared as `tests/fidelity.rs` compares. `tests/fidelity-versions-added` holds
//! scenarios added here, answered the same way (see its README).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::render::json::to_json;
use schedscope::source::load_snapshot;
use schedscope::version::{KubeVersion, Release, VersionSource};
use serde_json::Value;

#[path = "support/fidelity.rs"]
mod support_fidelity;
use support_fidelity::{RELEASES, compare};

/// The scenario folders: the shared ones (copied unchanged) and those added here.
const ROOTS: [&str; 2] = ["fidelity-versions", "fidelity-versions-added"];

/// `name` is `ROOT/SCENARIO`.
fn scenario_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// How the release reaches the replay.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// The configuration is built for the release (`SchedulerConfig::defaults_at`).
    Config,
    /// The cluster names the release and the cycle re-builds v1.35's profiles for it
    /// (what `--kube-version` does).
    Cluster,
}

/// Our answer for a scenario replayed at `version`, as the CLI's `-o json` gives it.
fn answer_at(dir: &Path, version: KubeVersion) -> Value {
    answer_via(dir, version, Via::Config)
}

fn answer_via(dir: &Path, version: KubeVersion, via: Via) -> Value {
    let mut snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
    let cfg_path = dir.join("config.yaml");
    let built_for = match via {
        Via::Config => version,
        Via::Cluster => {
            snap.cluster.kube_version = Some(Release::new(version, VersionSource::Flag));
            KubeVersion::default()
        }
    };
    let config = if cfg_path.exists() {
        let text = std::fs::read_to_string(&cfg_path).unwrap();
        SchedulerConfig::from_str_at(&text, &cfg_path.display().to_string(), built_for)
            .expect("config loads")
    } else {
        SchedulerConfig::defaults_at(built_for)
    };
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let opts = CycleOptions {
        all_filters: true,
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    let trace = explain(&snap.cluster, &config, pod.trim(), &opts).expect("explain");
    to_json(&trace)
}

fn check(name: &str) {
    let dir = scenario_dir(name);
    let mut failures = Vec::new();
    let mut checked = 0;
    for (file, release) in RELEASES {
        let path = dir.join(file);
        if !path.exists() {
            continue;
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let version = KubeVersion::parse(release).unwrap();
        for via in [Via::Config, Via::Cluster] {
            let actual = answer_via(&dir, version, via);
            let diffs = compare(&expected, &actual);
            if !diffs.is_empty() {
                failures.push(format!(
                    "v{release} ({file}, {via:?}):\n{}\nnot modelled: {}",
                    diffs.join("\n"),
                    actual["not_modelled"]
                ));
            }
        }
        checked += 1;
    }
    assert!(checked > 0, "{name}: no answer file");
    assert!(
        failures.is_empty(),
        "{name} differs from kube-scheduler:\n{}",
        failures.join("\n\n")
    );
}

macro_rules! scenarios {
    ($($test:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($dir);
            }
        )*

        /// Every scenario directory has a test above, so none is silently skipped.
        #[test]
        fn every_scenario_directory_is_tested() {
            let listed: BTreeSet<&str> = [$($dir),*].into_iter().collect();
            let dirs: BTreeSet<String> = ROOTS
                .iter()
                .flat_map(|root| {
                    std::fs::read_dir(scenario_dir(root))
                        .unwrap()
                        .filter_map(|e| e.ok())
                        .filter(|e| e.path().join("snapshot.yaml").exists())
                        .map(move |e| format!("{root}/{}", e.file_name().to_string_lossy()))
                })
                .collect();
            let dirs: BTreeSet<&str> = dirs.iter().map(String::as_str).collect();
            assert_eq!(listed, dirs);
        }
    };
}

scenarios! {
    v01 => "fidelity-versions/v01-taint-histogram-fit-error",
    v03 => "fidelity-versions/v03-oversized-pod-no-victims",
    v05 => "fidelity-versions/v05-gpu-pod-cpu-only-nodes",
    v06 => "fidelity-versions/v06-sidecar-hostport-existing-pod",
    v09 => "fidelity-versions/v09-pod-level-resources",
    v10 => "fidelity-versions/v10-volume-attributes-class",
    v11 => "fidelity-versions/v11-rwop-in-use-no-preemption",
    v12 => "fidelity-versions/v12-pv-node-affinity-conflict",
    v13 => "fidelity-versions/v13-dra-claim-gate-off-1.33",
    v14 => "fidelity-versions/v14-dra-first-available-score",
    v15 => "fidelity-versions/v15-best-effort-balanced-allocation",
    v17 => "fidelity-versions/v17-dra-incomplete-pool",
    v20 => "fidelity-versions-added/v20-resize-infeasible",
    v21 => "fidelity-versions-added/v21-resize-deferred",
}

/// The v1.35 answers of the shared scenarios are what the default replay gives too
/// (no `--kube-version`): 1.35 is the default.
#[test]
fn the_default_replay_is_v1_35() {
    let dir = scenario_dir("fidelity-versions/v01-taint-histogram-fit-error");
    assert_eq!(
        answer_at(&dir, KubeVersion::default()),
        answer_at(&dir, KubeVersion::parse("1.35.4").unwrap())
    );
}
