//! A snapshot's record of the real scheduler's word beside the replay (issue 25,
//! item 1): dumps of the shapes met in the field (a k3s dump missing a node, an
//! Insights archive holding one namespace) say that the recorded word differs and
//! why; a complete snapshot with no word adds nothing; and the fidelity scenarios,
//! with the real scheduler's own message recorded, never read as a disagreement.

mod support {
    pub mod bin;
}

use std::path::Path;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::report::Recorded;
use schedscope::source::load_snapshot;
use support::bin::{json, ok, root};

fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/recorded")
        .join(name)
        .display()
        .to_string()
}

const K3S_POD: &str = "default/stress-5c8d7f9b6-qmz4t";
const ROUTER: &str = "openshift-ingress/router-default-6c9f8d7b54-xdln";

/// The k3s dump: the recorded word counted two nodes; the dump holds one, and a
/// pod still names the other. The table says so under the verdict.
#[test]
fn a_k3s_dump_missing_a_node_says_the_recorded_word_differs_and_why() {
    let k3s = fixture("k3s-dump.yaml");
    let out = ok(&["explain", "-s", &k3s, K3S_POD]);
    let lines: Vec<&str> = out.lines().collect();
    let verdict = lines.iter().position(|l| l.starts_with("Verdict")).unwrap();
    let recorded = lines
        .iter()
        .position(|l| {
            l.starts_with("Recorded   DIFFERS from the replay: FailedScheduling event (4×)")
        })
        .unwrap_or_else(|| panic!("no Recorded line:\n{out}"));
    assert!(recorded > verdict && recorded <= verdict + 2, "{out}");
    assert!(
        lines[recorded].ends_with("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."),
        "{out}"
    );
    assert!(
        lines[recorded + 1].contains("likely causes: the real scheduler counted 2 nodes, the snapshot has 1; node k3s-agent-1 (pods are bound to it, 1 pod)"),
        "{out}"
    );
    assert_eq!(
        lines[recorded + 2],
        "Snapshot   missing: node k3s-agent-1 (pods are bound to it, 1 pod)"
    );

    let v = json(&["explain", "-s", &k3s, K3S_POD, "-o", "json"]);
    let r = &v["recorded"];
    assert_eq!(r["word"]["from"], "FailedScheduling event");
    assert_eq!(r["word"]["differs"], true);
    assert_eq!(r["word"]["count"], 4);
    assert_eq!(r["word"]["reason"], "Unschedulable");
    assert_eq!(r["word"]["at"], "2026-03-01T09:20:00Z");
    assert_eq!(r["word"]["ageBeforeSnapshotSeconds"], 0);
    assert_eq!(r["complete"], false);
    assert_eq!(
        r["missing"][0],
        "node k3s-agent-1 (pods are bound to it, 1 pod)"
    );
    // A snapshot answer has no live word.
    assert!(v.get("realScheduler").is_none());

    // The load counts the FailedScheduling event and skips the other Event.
    let snap = load_snapshot(Path::new(&k3s)).unwrap();
    assert_eq!(snap.report.count("Event (FailedScheduling)"), 1);
    assert_eq!(snap.report.skipped_kinds.get("Event"), Some(&1));
    assert_eq!(snap.cluster.recorded_events[K3S_POD].count, 4);
}

/// The Insights archive: the router's recorded word says the host ports are taken,
/// the replay places it (the pod holding them is in a namespace the archive left
/// out). The events.k8s.io/v1 Event is read (its series count and time).
#[test]
fn an_insights_archive_of_one_namespace_says_the_recorded_word_differs_and_why() {
    let archive = fixture("insights-archive.yaml");
    let out = ok(&["explain", "-s", &archive, ROUTER]);
    assert!(out.contains("Verdict    schedulable on worker-0"), "{out}");
    assert!(
        out.contains("Recorded   DIFFERS from the replay: FailedScheduling event (12×), the snapshot's newest record: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."),
        "{out}"
    );
    assert!(
        out.contains("likely causes: pods of other namespaces (every pod is in namespace openshift-ingress: a namespace-scoped dump?)"),
        "{out}"
    );
    let v = json(&["explain", "-s", &archive, ROUTER, "-o", "json"]);
    assert_eq!(v["recorded"]["word"]["count"], 12);
    assert_eq!(v["recorded"]["word"]["at"], "2026-05-10T12:40:00Z");
}

/// A snapshot that records no word and lacks nothing for the pod: the table is as
/// before; the JSON says it is complete.
#[test]
fn a_complete_snapshot_without_a_word_adds_no_lines() {
    let demo = support::bin::demo();
    let demo = demo.to_str().unwrap();
    let out = ok(&["explain", "-s", demo, "batch/quarterly-report"]);
    assert!(
        !out.contains("Recorded ") && !out.contains("Snapshot "),
        "{out}"
    );
    let v = json(&[
        "explain",
        "-s",
        demo,
        "batch/quarterly-report",
        "-o",
        "json",
    ]);
    assert_eq!(
        v["recorded"],
        serde_json::json!({"word": null, "complete": true, "missing": []})
    );
}

/// Every fidelity scenario whose pod the real scheduler left pending, with that
/// scheduler's own FitError (`expected.json`) recorded as the pod's PodScheduled
/// condition: the record agrees with the replay (the fidelity tests check the
/// replay's FitError is the real one), so no scenario reads "differs".
#[test]
fn the_fidelity_scenarios_recorded_word_never_reads_as_a_disagreement() {
    let dir = root().join("tests/fidelity");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let scenario = entry.unwrap().path();
        let Ok(expected) = std::fs::read_to_string(scenario.join("expected.json")) else {
            continue;
        };
        let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
        let Some(fit_error) = expected["fit_error"].as_str() else {
            continue;
        };
        let pod = std::fs::read_to_string(scenario.join("pod.txt")).unwrap();
        let word = recorded_beside(&scenario, pod.trim(), fit_error);
        assert!(
            !word.differs,
            "{}: recorded {fit_error:?} reads as differing from the replay {:?}",
            scenario.display(),
            word.replay
        );
        checked += 1;
    }
    assert!(checked >= 20, "scenarios checked: {checked}");
}

struct Compared {
    differs: bool,
    replay: Option<String>,
}

/// The scenario's snapshot with `message` recorded as the pod's PodScheduled=False
/// condition, replayed as `fidelity.rs` does.
fn recorded_beside(scenario: &Path, key: &str, message: &str) -> Compared {
    let mut snap = load_snapshot(&scenario.join("snapshot.yaml")).expect("snapshot loads");
    let mut pod = (**snap.cluster.pod(key).expect("pod")).clone();
    pod.not_scheduled = Some(Box::new(("Unschedulable".into(), message.into())));
    snap.cluster.upsert_pod(pod);
    let cfg = scenario.join("config.yaml");
    let config = if cfg.exists() {
        schedscope::source::read_scheduler_config(&cfg).expect("config loads")
    } else {
        SchedulerConfig::defaults()
    };
    let opts = CycleOptions {
        all_filters: true,
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    let trace = explain(&snap.cluster, &config, key, &opts).expect("explain");
    let recorded = Recorded::of(&trace, &snap.cluster).expect("pod in the snapshot");
    let word = recorded.word.expect("a recorded word");
    Compared {
        differs: word.word.differs,
        replay: trace.fit_error,
    }
}

/// `pods --verdicts` marks the verdict the recorded word contradicts.
#[test]
fn pods_verdicts_mark_a_verdict_the_recorded_word_contradicts() {
    let out = ok(&[
        "pods",
        "-s",
        &fixture("insights-archive.yaml"),
        "--verdicts",
    ]);
    let row = out.lines().find(|l| l.starts_with(ROUTER)).unwrap();
    assert!(
        row.ends_with("schedulable on worker-0  (≠ recorded)"),
        "{out}"
    );
    // The demo records no word: no marks.
    let demo = support::bin::demo();
    let out = ok(&["pods", "-s", demo.to_str().unwrap(), "--verdicts"]);
    assert!(!out.contains("≠"), "{out}");
}
