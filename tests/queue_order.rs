//! Queue order comes from one place (the engine's QueueSort plugin, as the running
//! queue asks it): `pods` and `simulate` list the same queue in the same order, and a
//! Coscheduling profile's order is honoured.

use std::path::PathBuf;
use std::process::Command;

fn run(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .output()
        .expect("binary runs");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

/// The pod column of `pods`.
fn pods(args: &[&str]) -> Vec<String> {
    let mut a = vec!["pods"];
    a.extend_from_slice(args);
    run(&a)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().expect("a pod").to_string())
        .collect()
}

/// The pods of `simulate`'s result table, in its order.
fn simulated(args: &[&str]) -> Vec<String> {
    let mut a = vec!["simulate"];
    a.extend_from_slice(args);
    run(&a)
        .split("\nPOD ")
        .nth(1)
        .expect("the result table")
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().expect("a pod").to_string())
        .collect()
}

#[test]
fn a_coscheduling_profile_changes_the_order_pods_prints() {
    let snap = ["--snapshot", "examples/gang-demo.yaml"];
    let default = pods(&snap);
    let gang = pods(&[
        snap[0],
        snap[1],
        "--config",
        "examples/coscheduling-config.yaml",
    ]);
    // PrioritySort: equal priorities, so list (key) order.
    assert_eq!(
        default,
        [
            "training/bert-worker-0",
            "training/bert-worker-1",
            "training/bert-worker-2",
            "training/resnet-worker-0",
            "training/resnet-worker-1",
            "training/resnet-worker-2",
        ]
    );
    // Coscheduling: the older PodGroup (resnet, 09:00) before bert (09:05).
    assert_eq!(
        gang,
        [
            "training/resnet-worker-0",
            "training/resnet-worker-1",
            "training/resnet-worker-2",
            "training/bert-worker-0",
            "training/bert-worker-1",
            "training/bert-worker-2",
        ]
    );
}

#[test]
fn pods_and_simulate_agree_on_the_queue() {
    for args in [
        &["--snapshot", "examples/demo-cluster.yaml"][..],
        &[
            "--snapshot",
            "examples/gang-demo.yaml",
            "--config",
            "examples/coscheduling-config.yaml",
        ][..],
    ] {
        let listed = pods(args);
        let sim = simulated(args);
        assert!(listed.len() >= 6, "{listed:?}");
        // The simulation lists the pods pending at its start first, in queue order,
        // then pods it evicted.
        assert_eq!(sim[..listed.len()], listed[..], "{args:?}");
    }
}
