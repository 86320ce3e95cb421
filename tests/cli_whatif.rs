//! What-if edits, remedies and capacity from the command line, on the demo cluster:
//! every figure here is the engine's replay (the counts match the real scheduler's:
//! tests/capacity.rs), the CLI's part is the flags, the formats and the refusals.

mod support {
    pub mod bin;
}

use support::bin::{demo, json, ok, refused, s};

const QR: &str = "batch/quarterly-report";

#[test]
fn explain_what_if_prints_the_edits_the_edited_answer_and_the_comparison() {
    let d = demo();
    let out = ok(&["explain", "-s", s(&d), QR, "--what-if", "pod.cpu=2750m"]);
    let header = out.find("WHAT-IF").expect("banner");
    let verdict = out
        .find("Verdict    schedulable on gen-b1")
        .expect("edited answer");
    let cmp = out.find("Before → after the edits:").expect("comparison");
    assert!(header < verdict && verdict < cmp, "{out}");
    assert!(out.contains("--what-if pod.cpu=2750m"), "{out}");
    assert!(
        out.contains("verdict         Unschedulable → Scheduled"),
        "{out}"
    );
    assert!(out.contains("chosen node     - → gen-b1 (total"), "{out}");
    assert!(out.contains("Insufficient cpu"), "{out}");
    // Without the edit the same pod is unschedulable: the edit made the difference.
    let plain = ok(&["explain", "-s", s(&d), QR]);
    assert!(plain.contains("Verdict    unschedulable"), "{plain}");
}

#[test]
fn explain_what_if_json_carries_edits_before_and_after() {
    let d = demo();
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        QR,
        "-o",
        "json",
        "--what-if",
        "node.cordon=gen-a1",
        "--what-if",
        "pod.cpu=2750m",
    ]);
    let w = &v["what_if"];
    assert_eq!(
        w["edits"],
        serde_json::json!(["node.cordon=gen-a1", "pod.cpu=2750m"])
    );
    assert_eq!(w["before"]["verdict"], "Unschedulable");
    assert_eq!(w["after"]["verdict"], "Scheduled");
    assert_eq!(w["after"]["selected_node"], "gen-b1");
    assert_eq!(v["selected_node"], w["after"]["selected_node"], "{v}");
    assert!(w["changed"].as_array().is_some_and(|c| !c.is_empty()));
}

#[test]
fn a_bad_edit_is_refused_by_name_before_anything_runs() {
    let d = demo();
    let e = refused(&[
        "explain",
        "-s",
        s(&d),
        QR,
        "--what-if",
        "node.cordon=gen-a9",
    ]);
    assert!(
        e.contains("no node \"gen-a9\"") && e.contains("did you mean"),
        "{e}"
    );
    let e = refused(&["explain", "-s", s(&d), QR, "--what-if", "pod.cpu"]);
    assert!(e.contains("\"pod.cpu\"") && e.contains("expected"), "{e}");
    // Refused before loading: a missing snapshot is not what is reported.
    let e = refused(&[
        "explain",
        "-s",
        "/nonexistent",
        QR,
        "--what-if",
        "pod.frobnicate=1",
    ]);
    assert!(e.contains("pod.frobnicate"), "{e}");
    let e = refused(&["pods", "-s", s(&d), "--what-if", "pod.cpu=1"]);
    assert!(e.contains("takes cluster edits"), "{e}");
}

#[test]
fn suggest_lists_verified_remedies_in_table_and_json() {
    let d = demo();
    let out = ok(&["explain", "-s", s(&d), QR, "--suggest"]);
    assert!(out.contains("Remedies, smallest change first"), "{out}");
    assert!(out.contains("--what-if pod.cpu=2750m"), "{out}");
    assert!(
        out.contains("DefaultPreemption would already make room on gen-b1"),
        "{out}"
    );
    let v = json(&["explain", "-s", s(&d), QR, "--suggest", "-o", "json"]);
    let list = v["suggestions"].as_array().expect("suggestions");
    assert!(!list.is_empty());
    // Each one, pasted back as --what-if, schedules the pod where it said.
    for sug in list {
        let mut args = vec!["explain", "-s", s(&d), QR, "-o", "json"];
        for e in sug["edits"].as_array().unwrap() {
            args.extend(["--what-if", e.as_str().unwrap()]);
        }
        let after = json(&args);
        assert_eq!(after["what_if"]["after"]["verdict"], "Scheduled", "{sug}");
        assert_eq!(after["selected_node"], sug["selected_node"], "{sug}");
    }
    assert_eq!(v["suggest"]["needed"], true);
    assert!(v["suggest"]["replays"].as_u64().unwrap() <= 64);
}

#[test]
fn suggest_on_a_schedulable_pod_says_so_and_target_searches_for_a_node() {
    let d = demo();
    let out = ok(&["explain", "-s", s(&d), "db/postgres-1", "--suggest"]);
    assert!(out.contains("Remedies: none needed"), "{out}");
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        "db/postgres-1",
        "--suggest",
        "--target",
        "gen-c1",
        "-o",
        "json",
    ]);
    for sug in v["suggestions"].as_array().unwrap() {
        assert_eq!(sug["selected_node"], "gen-c1", "{sug}");
    }
    let e = refused(&[
        "explain",
        "-s",
        s(&d),
        "db/postgres-1",
        "--suggest",
        "--target",
        "gen-c9",
    ]);
    assert!(e.contains("no such node") && e.contains("gen-c1"), "{e}");
}

#[test]
fn suggest_limit_caps_the_replays_and_says_it_stopped() {
    let d = demo();
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        QR,
        "--suggest",
        "--suggest-limit",
        "2",
        "-o",
        "json",
    ]);
    assert_eq!(v["suggest"]["replays"], 2);
    assert_eq!(v["suggest"]["stopped_early"], true);
    let out = ok(&[
        "explain",
        "-s",
        s(&d),
        QR,
        "--suggest",
        "--suggest-limit",
        "2",
    ]);
    assert!(out.contains("stopped early"), "{out}");
}

#[test]
fn pods_what_if_says_which_pending_pods_an_edit_unblocks() {
    let d = demo();
    let out = ok(&["pods", "-s", s(&d), "--what-if", "node.add=2:like=gen-b2"]);
    assert!(out.contains("WHAT-IF"), "{out}");
    assert!(out.contains("VERDICT"), "{out}");
    assert!(
        out.contains("node.add=2:like=gen-b2 → 1 pod becomes schedulable: batch/quarterly-report"),
        "{out}"
    );
    let out = ok(&["pods", "-s", s(&d), "--what-if", "node.cordon=gen-b1"]);
    assert!(
        out.contains("no longer schedulable: db/postgres-1"),
        "{out}"
    );
}

#[test]
fn capacity_counts_copies_per_node_and_names_what_stops_the_next() {
    let d = demo();
    let out = ok(&["capacity", "-s", s(&d), "shop/web-7d9f-0"]);
    assert!(
        out.starts_with("18 more copies of shop/web-7d9f-0 fit"),
        "{out}"
    );
    assert!(out.contains("copy 19 fits on no node"), "{out}");
    assert!(out.contains("Copies per node (6 nodes)"), "{out}");
    let v = json(&["capacity", "-s", s(&d), "shop/cache-0", "-o", "json"]);
    assert_eq!(v["count"], 3);
    assert_eq!(v["stopped_by"], "fit_error");
    let total: u64 = v["per_node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["copies"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 3);
    let v = json(&[
        "capacity",
        "-s",
        s(&d),
        "shop/web-7d9f-0",
        "--max",
        "5",
        "-o",
        "json",
    ]);
    assert_eq!(
        (v["count"].clone(), v["stopped_by"].clone()),
        (5.into(), "max".into())
    );
    let v = json(&[
        "capacity",
        "-s",
        s(&d),
        "default/migration-job",
        "-o",
        "json",
    ]);
    assert_eq!(
        (v["count"].clone(), v["stopped_by"].clone()),
        (0.into(), "pre_enqueue".into())
    );
}

#[test]
fn capacity_under_what_if_and_from_a_pod_file() {
    let d = demo();
    let v = json(&[
        "capacity",
        "-s",
        s(&d),
        QR,
        "-o",
        "json",
        "--what-if",
        "node.add=3:like=gen-b2",
    ]);
    assert_eq!(v["count"], 3, "{v}");
    assert_eq!(v["what_if"]["edits"][0], "node.add=3:like=gen-b2");
    let plain = json(&["capacity", "-s", s(&d), QR, "-o", "json"]);
    assert_eq!(plain["count"], 0);
    let dir = std::env::temp_dir().join(format!("schedscope-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("web.yaml");
    // The template of web-7d9f-0's Deployment shape: the same requests.
    let pod = json(&["explain", "-s", s(&d), "shop/web-7d9f-0", "-o", "json"]);
    let requests = &pod["needs"]["requests"];
    std::fs::write(
        &file,
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: api, namespace: shop}}\n\
             spec:\n  template:\n    metadata: {{labels: {{app: api}}}}\n    spec:\n      \
             containers:\n      - name: api\n        image: x\n        resources: {{requests: \
             {{cpu: {}, memory: {}}}}}\n",
            requests["cpu"].as_str().unwrap(),
            requests["memory"].as_str().unwrap()
        ),
    )
    .unwrap();
    let v = json(&[
        "capacity",
        "-s",
        s(&d),
        "--pod-file",
        s(&file),
        "-o",
        "json",
    ]);
    assert!(v["count"].as_u64().unwrap() > 0, "{v}");
    // Named as the controller would make it, in the workload's namespace.
    assert!(v["pod"].as_str().unwrap().starts_with("shop/api"), "{v}");
    let e = refused(&["capacity", "-s", s(&d), "--pod-file", "/nonexistent.yaml"]);
    assert!(e.contains("/nonexistent.yaml"), "{e}");
}
