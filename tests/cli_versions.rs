//! `--kube-version` and `--profile-preset` on the binary, run as a user would: the
//! release replayed is named with where it came from, the answer is that release's
//! (the scenarios' real-scheduler answers), and presets load like a `--config` file.

mod support {
    pub mod bin;
}

use support::bin::{json, ok, refused, root, run, s, stderr};

fn scenario(name: &str) -> (String, String) {
    let dir = root().join("tests/fidelity-versions").join(name);
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    (
        s(&dir.join("snapshot.yaml")).to_string(),
        pod.trim().to_string(),
    )
}

/// The real scheduler's best nodes for a scenario at a release.
fn expected_best(name: &str, file: &str) -> serde_json::Value {
    let dir = root().join("tests/fidelity-versions").join(name);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
    v["best_nodes"].clone()
}

#[test]
fn explain_at_1_33_says_dra_is_off_and_ignores_the_claim() {
    let (snap, pod) = scenario("v13-dra-claim-gate-off-1.33");
    let table = ok(&["explain", "-s", &snap, "--kube-version", "1.33", &pod]);
    let release = table
        .lines()
        .find(|l| l.starts_with("Release"))
        .expect("a Release line");
    assert_eq!(
        release,
        "Release    v1.33 (from --kube-version); DRA (DynamicResourceAllocation) is off by \
         default in 1.33: kube-scheduler ignores the pod's resource claims and allocates no \
         devices"
    );
    let v = json(&[
        "explain",
        "-s",
        &snap,
        "--kube-version",
        "1.33",
        &pod,
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["version"], "v1.33");
    assert_eq!(v["kube_version"]["replays"], "v1.33.3");
    assert_eq!(v["kube_version"]["source"], "flag");
    assert_eq!(
        v["best_nodes"],
        expected_best("v13-dra-claim-gate-off-1.33", "expected-1.33.json")
    );
    // Without the flag: v1.35, which allocates the claim, and no release named.
    let v = json(&["explain", "-s", &snap, &pod, "-o", "json"]);
    assert!(v.get("kube_version").is_none());
    assert_eq!(
        v["best_nodes"],
        expected_best("v13-dra-claim-gate-off-1.33", "expected-1.35.json")
    );
}

#[test]
fn a_patch_version_is_replayed_as_that_patch() {
    let (snap, pod) = scenario("v01-taint-histogram-fit-error");
    for (version, file) in [
        ("1.34.1", "expected-1.34.json"),
        ("1.34", "expected-1.34.7.json"),
    ] {
        let v = json(&[
            "explain",
            "-s",
            &snap,
            "--kube-version",
            version,
            &pod,
            "-o",
            "json",
        ]);
        let dir = root().join("tests/fidelity-versions/v01-taint-histogram-fit-error");
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        assert_eq!(v["fit_error"], want["fit_error"], "{version}");
    }
}

#[test]
fn the_flag_is_on_every_subcommand_before_or_after_it() {
    let (snap, pod) = scenario("v13-dra-claim-gate-off-1.33");
    let v = json(&[
        "--kube-version",
        "1.33",
        "explain",
        "-s",
        &snap,
        &pod,
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["version"], "v1.33");
    // The simulation binds the pod where v1.33 would.
    let sim = ok(&["simulate", "-s", &snap, "--kube-version", "1.33"]);
    assert!(sim.contains("default/pending  bound to n2"), "{sim}");
    let sim = ok(&["simulate", "-s", &snap]);
    assert!(sim.contains("default/pending  bound to n1"), "{sim}");
    ok(&["pods", "-s", &snap, "--kube-version", "1.32"]);
    ok(&["capacity", "-s", &snap, "--kube-version", "1.34.1", &pod]);
}

#[test]
fn unsupported_or_malformed_versions_are_refused_clearly() {
    let (snap, pod) = scenario("v13-dra-claim-gate-off-1.33");
    let err = refused(&["explain", "-s", &snap, "--kube-version", "1.31", &pod]);
    assert!(
        err.contains("kube-scheduler v1.31 is not supported: schedscope replays 1.32 to 1.35"),
        "{err}"
    );
    let err = refused(&["explain", "-s", &snap, "--kube-version", "latest", &pod]);
    assert!(err.contains("is not a Kubernetes version"), "{err}");
}

#[test]
fn a_profile_preset_loads_like_a_config_file() {
    let dir = root().join("tests/profile-presets/p02-high-node-utilization");
    let snap = s(&dir.join("snapshot.yaml")).to_string();
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected-1.35.json")).unwrap())
            .unwrap();
    let by_preset = json(&[
        "explain",
        "-s",
        &snap,
        "--profile-preset",
        "HighNodeUtilization",
        "default/pending",
        "-o",
        "json",
    ]);
    let by_file = json(&[
        "explain",
        "-s",
        &snap,
        "-c",
        s(&root().join("profiles/HighNodeUtilization.yaml")),
        "default/pending",
        "-o",
        "json",
    ]);
    assert_eq!(by_preset, by_file);
    assert_eq!(by_preset["best_nodes"], want["best_nodes"]);
    assert_eq!(by_preset["total"], want["total"]);
    let err = refused(&[
        "explain",
        "-s",
        &snap,
        "--profile-preset",
        "NoScoring",
        "-c",
        "x.yaml",
        "default/pending",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = refused(&[
        "explain",
        "-s",
        &snap,
        "--profile-preset",
        "Packed",
        "default/pending",
    ]);
    assert!(err.contains("unknown profile preset"), "{err}");
}

/// A copy of a scenario's snapshot with the version `snapshot save` records.
fn snapshot_recording(name: &str, git_version: &str) -> std::path::PathBuf {
    let dir = root().join("tests/fidelity-versions").join(name);
    let text = std::fs::read_to_string(dir.join("snapshot.yaml")).unwrap();
    let out = std::env::temp_dir().join(format!(
        "schedscope-versions-{}-{git_version}.yaml",
        std::process::id()
    ));
    std::fs::write(
        &out,
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n  annotations:\n    \
             schedscope.dev/kube-version: {git_version}\n---\n{text}"
        ),
    )
    .unwrap();
    out
}

#[test]
fn the_version_a_snapshot_recorded_is_the_default_and_the_flag_wins() {
    let (_, pod) = scenario("v13-dra-claim-gate-off-1.33");
    let snap = snapshot_recording("v13-dra-claim-gate-off-1.33", "v1.33.3-eks-1");
    let v = json(&["explain", "-s", s(&snap), &pod, "-o", "json"]);
    assert_eq!(v["kube_version"]["version"], "v1.33.3");
    assert_eq!(v["kube_version"]["source"], "snapshot");
    assert_eq!(
        v["best_nodes"],
        expected_best("v13-dra-claim-gate-off-1.33", "expected-1.33.json")
    );
    let table = ok(&["explain", "-s", s(&snap), &pod]);
    assert!(
        table.contains("Release    v1.33.3 (recorded in the snapshot)"),
        "{table}"
    );
    let v = json(&[
        "explain",
        "-s",
        s(&snap),
        "--kube-version",
        "1.35",
        &pod,
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["source"], "flag");
    assert_eq!(
        v["best_nodes"],
        expected_best("v13-dra-claim-gate-off-1.33", "expected-1.35.json")
    );
    // A release schedscope does not replay is said, and v1.35 replayed.
    let old = snapshot_recording("v13-dra-claim-gate-off-1.33", "v1.30.2");
    let o = run(&["explain", "-s", s(&old), &pod, "-o", "json"]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("the snapshot records kube-scheduler \"v1.30.2\""),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("kube_version").is_none());
    let _ = std::fs::remove_file(snap);
    let _ = std::fs::remove_file(old);
}
