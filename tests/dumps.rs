//! Real dump formats, run through the binary as a user would: `kubectl cluster-info
//! dump` (stdout and `--output-directory`), an OpenShift Insights archive and an
//! OpenShift must-gather (fixtures under tests/fixtures/dumps, hand-built in the
//! shapes those tools write). Each loads its objects, names what it skipped, and
//! replays the release and profile the dump records, saying where they came from.

mod support {
    pub mod bin;
}

use schedscope::source::{DumpKind, load_snapshot};
use support::bin::{json, root, run, s, stderr, stdout};

fn dump(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/dumps").join(name)
}

/// The `note:`/`warning:` lines a command printed on stderr.
fn notes(args: &[&str]) -> (String, String) {
    let o = run(args);
    assert!(o.status.success(), "{}", stderr(&o));
    (stdout(&o), stderr(&o))
}

#[test]
fn cluster_info_dump_on_stdout_loads_the_lists_and_skips_the_logs() {
    let snap = load_snapshot(&dump("cluster-info-dump.txt")).unwrap();
    let r = &snap.report;
    assert_eq!(r.dump.kind, Some(DumpKind::ClusterInfoDump));
    assert_eq!(r.dump.container_logs, 4);
    assert!(!r.dump.logs_unterminated);
    assert_eq!(r.count("Node"), 2);
    assert_eq!(r.count("Pod"), 4);
    // A JSON line inside a log is not read as an object.
    assert_eq!(r.skipped_kinds.get("Pod"), None);
    assert!(snap.cluster.pod("default/web-7d4b9c8f6d-x2x9q").is_some());
    // Its one Event is the pod's FailedScheduling: read as the scheduler's word.
    assert_eq!(r.count("Event (FailedScheduling)"), 1, "{:?}", r.objects);
    assert_eq!(r.skipped_kinds.get("Event"), None);

    let (out, err) = notes(&["pods", "-s", s(&dump("cluster-info-dump.txt"))]);
    assert!(out.contains("default/web-7d4b9c8f6d-x2x9q"), "{out}");
    assert!(
        err.contains(
            "note: skipped the logs of 4 containers (`==== START logs` … `==== END logs` blocks)"
        ),
        "{err}"
    );
    // EKS: no control-plane pod, only kubelets; their version is named, not replayed.
    assert!(
        err.contains(
            "note: the cluster-info dump's objects do not record the control plane's release \
             (its nodes' kubelets are v1.33.5-eks-98436be, which may be older); replaying v1.35"
        ),
        "{err}"
    );
    assert!(snap.cluster.kube_version.is_none());
    assert!(
        err.contains("warning: this cluster-info dump holds pods of kube-system and default only"),
        "{err}"
    );
    assert!(!out.starts_with("Release"), "{out}");
}

#[test]
fn a_cut_off_cluster_info_dump_says_so() {
    let text = std::fs::read_to_string(dump("cluster-info-dump.txt")).unwrap();
    let cut = &text[..text.rfind("==== END logs").unwrap()];
    let dir = std::env::temp_dir().join(format!("schedscope-cut-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("dump.txt");
    std::fs::write(&f, cut).unwrap();
    let snap = load_snapshot(&f).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(snap.report.dump.logs_unterminated);
    assert!(
        snap.report
            .notes
            .iter()
            .any(|n| n.contains("has no `==== END logs` line")),
        "{:?}",
        snap.report.notes
    );
}

#[test]
fn cluster_info_dump_directory_reads_lists_and_replays_the_scheduler_pods_release() {
    let d = dump("cluster-info-dir");
    let (out, err) = notes(&["pods", "-s", s(&d)]);
    assert!(out.contains("shop/checkout-7b8c9d6f5-pq9zr"), "{out}");
    assert!(
        err.contains("note: read as a `kubectl cluster-info dump`"),
        "{err}"
    );
    assert!(err.contains("note: skipped 3 container log files"), "{err}");
    // kubeadm: the kube-scheduler static pod's image names the release.
    let release = "Release    v1.33.3 (from the cluster-info dump's kube-scheduler pod image)";
    assert!(out.starts_with(&format!("{release}\n\n")), "{out}");
    let table = stdout(&run(&[
        "explain",
        "-s",
        s(&d),
        "shop/checkout-7b8c9d6f5-pq9zr",
    ]));
    assert!(table.contains(release), "{table}");
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        "shop/checkout-7b8c9d6f5-pq9zr",
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["version"], "v1.33.3");
    assert_eq!(v["kube_version"]["source"], "dump");
    assert_eq!(
        v["kube_version"]["from"],
        "from the cluster-info dump's kube-scheduler pod image"
    );
    // --kube-version still wins.
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        "--kube-version",
        "1.34",
        "shop/checkout-7b8c9d6f5-pq9zr",
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["source"], "flag");
    // simulate names it too, in text and JSON.
    let (sim, _) = notes(&["simulate", "-s", s(&d)]);
    assert!(sim.starts_with(&format!("{release}\n\n")), "{sim}");
    let v = json(&["simulate", "-s", s(&d), "-o", "json"]);
    assert_eq!(v["kube_version"]["replays"], "v1.33.3");
}

#[test]
fn insights_archive_takes_kinds_from_paths_version_and_profile_from_its_objects() {
    let d = dump("insights");
    let snap = load_snapshot(&d).unwrap();
    let r = &snap.report;
    assert_eq!(r.dump.kind, Some(DumpKind::InsightsArchive));
    assert_eq!(r.count("Node"), 2);
    assert_eq!(r.count("Pod"), 1);
    assert_eq!(
        r.dump.implied_kinds.get("Node (config/node/*.json)"),
        Some(&2)
    );
    assert!(
        snap.cluster
            .node("worker-0.ocp.example.com")
            .is_some_and(|n| n.node.allocatable.milli_cpu == 4000)
    );
    let (out, err) = notes(&["pods", "-s", s(&d)]);
    assert!(
        out.contains("openshift-ingress/router-default-6c9f7b8d4-xdln"),
        "{out}"
    );
    assert!(
        err.contains(
            "note: objects without `kind` took it from their path: 1 ClusterVersion \
             (config/version.json), 2 Node (config/node/*.json), 1 Pod \
             (config/pod/<namespace>/*.json)"
        ),
        "{err}"
    );
    // The kube-scheduler operator's own version beats the OpenShift release's minor.
    assert!(
        out.starts_with(
            "Release    v1.33.5 (from the Insights archive's ClusterOperator kube-scheduler)"
        ),
        "{out}"
    );
    assert!(
        err.contains(
            "note: replaying scheduler profile HighNodeUtilization (from the Insights \
             archive's Scheduler cluster; profiles/HighNodeUtilization.yaml)"
        ),
        "{err}"
    );
    // Records of other things are named, not errors, even when they mention `kind`.
    assert!(
        err.contains("config/alerts.json (no `kind`, and its path implies none)"),
        "{err}"
    );
    assert!(err.contains("config/id (not YAML or JSON)"), "{err}");
    assert!(err.contains("note: skipped 1 container log file"), "{err}");
    assert!(
        err.contains("warning: an Insights archive holds only some pods"),
        "{err}"
    );
}

#[test]
fn must_gather_replays_its_scheduler_release_and_profile_unless_told_otherwise() {
    let d = dump("must-gather");
    let pod = "openshift-monitoring/prometheus-k8s-1";
    let (out, err) = notes(&["explain", "-s", s(&d), pod]);
    assert!(
        out.contains("Release    v1.34.1 (from the must-gather's ClusterOperator kube-scheduler)"),
        "{out}"
    );
    assert!(
        err.contains("note: read as an OpenShift must-gather"),
        "{err}"
    );
    assert!(
        err.contains(
            "note: replaying scheduler profile NoScoring (from the must-gather's Scheduler \
             cluster; profiles/NoScoring.yaml); --config or --profile-preset overrides it"
        ),
        "{err}"
    );
    assert!(err.contains("note: skipped 1 container log file"), "{err}");
    assert!(
        err.contains("3 not YAML or JSON (") && err.contains("event-filter.html"),
        "{err}"
    );
    // NoScoring has no Score plugin: the JSON's scores say which profile ran (for
    // the bound replica, replayed as if pending: it fits its own node).
    let bound = "openshift-monitoring/prometheus-k8s-0";
    let v = json(&["explain", "-s", s(&d), bound, "-o", "json"]);
    assert_eq!(v["scores"], serde_json::json!({}), "{}", v["scores"]);
    // --profile-preset overrides the dump's profile, and nothing is said about it.
    let o = run(&[
        "explain",
        "-s",
        s(&d),
        "--profile-preset",
        "HighNodeUtilization",
        bound,
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("replaying scheduler profile"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["scores"]["NodeResourcesFit"]["weight"], 5,
        "{}",
        v["scores"]
    );
    // So does --kube-version.
    let v = json(&[
        "explain",
        "-s",
        s(&d),
        "--kube-version",
        "1.33",
        pod,
        "-o",
        "json",
    ]);
    assert_eq!(v["kube_version"]["source"], "flag");
}

#[test]
fn a_directory_names_every_file_it_leaves_out_summarised_by_why() {
    let dir = std::env::temp_dir().join(format!("schedscope-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("nodes.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n",
    )
    .unwrap();
    for i in 0..12 {
        std::fs::write(dir.join(format!("notes-{i:02}.md")), "# notes\n").unwrap();
    }
    let snap = load_snapshot(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let w = snap
        .report
        .warnings
        .iter()
        .find(|w| w.starts_with("left out 12 files"))
        .unwrap_or_else(|| panic!("{:?}", snap.report.warnings));
    assert!(w.contains("12 not YAML or JSON ("), "{w}");
    assert!(w.contains("notes-00.md") && w.contains("and 9 more"), "{w}");
    assert!(!w.contains("notes-11.md"), "{w}");
}

#[test]
fn snapshot_save_from_a_dump_rewrites_the_objects_the_loader_reads() {
    for (name, summary) in [
        ("cluster-info-dump.txt", "(1 Event, 2 Node, 4 Pod)"),
        (
            "insights",
            "(1 ClusterOperator, 1 ClusterVersion, 2 Node, 1 Pod, 1 Scheduler)",
        ),
    ] {
        let o = run(&["snapshot", "save", "--from", s(&dump(name)), "-o", "-"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(summary), "{name}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(!out.contains("==== START logs"), "{name}");
        let again = schedscope::source::load_snapshot_str(&out, "saved.yaml").unwrap();
        let first = load_snapshot(&dump(name)).unwrap();
        assert_eq!(
            again.cluster.pod_count(),
            first.cluster.pod_count(),
            "{name}"
        );
        assert_eq!(again.cluster.nodes().len(), first.cluster.nodes().len());
        // The facts travel with the objects (a Scheduler, a ClusterOperator).
        assert_eq!(
            again.report.dump.scheduler_profile,
            first.report.dump.scheduler_profile
        );
    }
}
