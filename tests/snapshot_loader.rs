//! Snapshot loading: formats, API-server defaulting, reports and error messages.

use std::path::{Path, PathBuf};

use schedscope::model::PreemptionPolicy;
use schedscope::source::{SnapshotError, load_snapshot, load_snapshot_str};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load(text: &str) -> schedscope::source::Snapshot {
    load_snapshot_str(text, "snap.yaml").unwrap_or_else(|e| panic!("load failed: {e}"))
}

fn load_err(text: &str, name: &str) -> (SnapshotError, String) {
    match load_snapshot_str(text, name) {
        Ok(s) => panic!("expected an error, loaded: {}", s.report),
        Err(e) => {
            let msg = e.to_string();
            (e, msg)
        }
    }
}

/// Every `kind:` at the start of an object in a fidelity snapshot (List excluded).
fn kinds_in(text: &str) -> Vec<String> {
    let list = text.lines().any(|l| l == "kind: List");
    text.lines()
        .filter_map(|l| {
            let t = if list {
                l.strip_prefix("- ").or(l.strip_prefix("  "))?
            } else {
                l
            };
            t.strip_prefix("kind: ")
        })
        .filter(|k| *k != "List")
        .map(str::to_string)
        .collect()
}

fn check_fidelity_dir(dir: &Path) {
    let text = std::fs::read_to_string(dir.join("snapshot.yaml")).unwrap();
    let snap = load_snapshot(&dir.join("snapshot.yaml"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let kinds = kinds_in(&text);
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    let r = &snap.report;
    assert!(r.skipped_kinds.is_empty(), "{}: {r}", dir.display());
    assert_eq!(
        snap.cluster.nodes().len(),
        count("Node"),
        "{}",
        dir.display()
    );
    assert_eq!(
        snap.cluster.pod_count() + r.terminal_pods,
        count("Pod"),
        "{}",
        dir.display()
    );
    let total: usize = r.objects.values().sum::<usize>() + r.terminal_pods;
    assert_eq!(total, kinds.len(), "{}: {r}", dir.display());
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let pod = pod.trim();
    assert!(
        snap.cluster.pod(pod).is_some(),
        "{}: pod {pod} not loaded",
        dir.display()
    );
}

#[test]
fn fidelity_fixtures_load() {
    let root = fixtures().join("fidelity");
    let mut n = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        check_fidelity_dir(&e.unwrap().path());
        n += 1;
    }
    assert!(n >= 6);
}

/// The whole fidelity set, wherever it is (the lead copies it to tests/fidelity).
#[test]
fn all_fidelity_snapshots_load() {
    // The repository's own copy of the fidelity set: always present.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity");
    let mut n = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        if dir.join("snapshot.yaml").is_file() {
            check_fidelity_dir(&dir);
            n += 1;
        }
    }
    assert!(n >= 60, "only {n} scenarios in {}", root.display());
}

#[test]
fn list_yaml_applies_global_default_priority() {
    let snap = load_snapshot(
        &fixtures().join("fidelity/h61-list-format-global-default-priority/snapshot.yaml"),
    )
    .unwrap();
    assert_eq!(snap.report.documents, 1);
    let std1 = snap.cluster.pod("default/std-1").unwrap();
    assert_eq!(std1.priority, 500);
    assert_eq!(std1.priority_class_name.as_deref(), Some("standard"));
    let crit = snap.cluster.pod("default/crit-1").unwrap();
    assert_eq!(crit.priority, 5000);
}

#[test]
fn priority_class_preemption_policy_and_defaults() {
    let snap =
        load_snapshot(&fixtures().join("fidelity/h50-preemption-policy-never/snapshot.yaml"))
            .unwrap();
    let pending = snap.cluster.pod("default/pending").unwrap();
    assert_eq!(pending.priority, 100000);
    assert_eq!(pending.preemption_policy, PreemptionPolicy::Never);
    // PriorityClass defaulting: preemptionPolicy PreemptLowerPriority when absent.
    let low = &snap.cluster.priority_classes["low"];
    assert_eq!(
        low.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
}

const PRIORITY_TABLE: &str = r#"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 100
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: everyday}
value: 7
globalDefault: true
---
apiVersion: v1
kind: Pod
metadata: {name: by-class}
spec: {priorityClassName: batch, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: by-default}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: explicit}
spec: {priorityClassName: batch, priority: 42, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: explicit-policy}
spec: {priorityClassName: batch, preemptionPolicy: PreemptLowerPriority, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: node-critical, namespace: kube-system}
spec: {priorityClassName: system-node-critical, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: cluster-critical, namespace: kube-system}
spec: {priorityClassName: system-cluster-critical, containers: [{name: c}]}
"#;

#[test]
fn priority_resolution_table() {
    let snap = load(PRIORITY_TABLE);
    use PreemptionPolicy::*;
    let rows = [
        ("default/by-class", 100, Never),
        ("default/by-default", 7, PreemptLowerPriority),
        ("default/explicit", 42, Never),
        ("default/explicit-policy", 100, PreemptLowerPriority),
        (
            "kube-system/node-critical",
            2_000_001_000,
            PreemptLowerPriority,
        ),
        (
            "kube-system/cluster-critical",
            2_000_000_000,
            PreemptLowerPriority,
        ),
    ];
    for (key, prio, policy) in rows {
        let p = snap.cluster.pod(key).unwrap_or_else(|| panic!("{key}"));
        assert_eq!((p.priority, p.preemption_policy), (prio, policy), "{key}");
    }
    // Without any class, priority is 0.
    let none =
        load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n");
    assert_eq!(none.cluster.pod("default/p").unwrap().priority, 0);
}

#[test]
fn missing_priority_class_is_an_error() {
    let (e, msg) = load_err(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns1}\nspec: {priorityClassName: gold, containers: [{name: c}]}\n",
        "snap.yaml",
    );
    assert!(
        matches!(e, SnapshotError::MissingPriorityClass { .. }),
        "{msg}"
    );
    assert!(msg.contains("snap.yaml: document 1"), "{msg}");
    assert!(msg.contains("Pod ns1/p"), "{msg}");
    assert!(msg.contains("\"gold\""), "{msg}");
}

#[test]
fn multi_document_yaml_with_empty_documents_and_comments() {
    let snap = load(
        "# leading comment\n---\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: a\n---\n# only a comment\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: b\n...\n",
    );
    assert_eq!(snap.report.documents, 2);
    let names: Vec<_> = snap
        .cluster
        .nodes()
        .iter()
        .map(|n| n.name().to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn list_json_and_typed_list() {
    let json = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": 110}}},
        {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "x"},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": 1.5}}}]}}
    ]}"#;
    let snap = load_snapshot_str(json, "snap.json").unwrap();
    assert_eq!(snap.cluster.nodes().len(), 1);
    let n1 = snap.cluster.node("n1").unwrap();
    assert_eq!(n1.node.allocatable.allowed_pod_number, 110);
    assert_eq!(n1.requested.milli_cpu, 1500);

    // The API server's own lists (`PodList`) print items without kind/apiVersion.
    let typed = r#"{"apiVersion": "v1", "kind": "PodList", "items": [
        {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}},
        {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c"}]}}]}"#;
    let snap = load_snapshot_str(typed, "pods.json").unwrap();
    assert_eq!(snap.cluster.pod_count(), 2);

    // A JSON stream of objects and a top-level array.
    let stream = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}
[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}]"#;
    let snap = load_snapshot_str(stream, "stream.json").unwrap();
    assert_eq!(snap.cluster.nodes().len(), 3);
    assert_eq!(snap.report.documents, 3);
}

#[test]
fn json_inside_a_yaml_file_and_yaml_flow_style() {
    let snap = load_snapshot_str(
        r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}"#,
        "snap.yaml",
    )
    .unwrap();
    assert_eq!(snap.cluster.nodes().len(), 1);
    // Flow-style YAML is not JSON: parsed as YAML.
    let snap = load_snapshot_str(
        "{apiVersion: v1, kind: Node, metadata: {name: b}}",
        "snap.yaml",
    )
    .unwrap();
    assert!(snap.cluster.node("b").is_some());
}

#[test]
fn large_json_list_decoded_in_parallel_keeps_order_and_first_error() {
    // Enough items to take the multi-threaded path.
    let mut items = Vec::new();
    for i in 0..1500 {
        items.push(format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "p{i}", "namespace": "ns"}}, "spec": {{"containers": [{{"name": "c"}}], "priority": {i}}}}}"#
        ));
    }
    // A later duplicate replaces the earlier one.
    items.push(r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p3", "namespace": "ns"}, "spec": {"containers": [{"name": "c"}], "priority": 9999}}"#.into());
    let list = format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        items.join(",\n")
    );
    let snap = load_snapshot_str(&list, "big.json").unwrap();
    assert_eq!(snap.cluster.pod_count(), 1500);
    assert_eq!(snap.cluster.pod("ns/p3").unwrap().priority, 9999);
    assert_eq!(snap.report.replaced, ["Pod ns/p3"]);

    // Two bad items: the first in input order is reported.
    let mut bad = items.clone();
    bad[1400] = bad[1400].replace(r#""containers""#, r#""containers": 5, "x""#);
    bad[700] = bad[700].replace(r#""priority": 700"#, r#""priority": "high""#);
    let list = format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        bad.join(",\n")
    );
    let (_, msg) = load_err(&list, "big.json");
    assert!(msg.contains("items[700]"), "{msg}");
    assert!(msg.contains("Pod ns/p700"), "{msg}");
    assert!(msg.contains("field spec.priority"), "{msg}");
    assert!(msg.contains("(line 701, column"), "{msg}");
}

#[test]
fn directory_is_read_recursively_in_path_order() {
    let snap = load_snapshot(&fixtures().join("dir")).unwrap();
    let r = &snap.report;
    let root = fixtures().join("dir");
    let rel = |f: &String| {
        Path::new(f)
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/")
    };
    let files: Vec<_> = r.files.iter().map(rel).collect();
    // A must-gather's layout: sub-directories are read, depth first in name order.
    assert_eq!(
        files,
        [
            "01-nodes.yaml",
            "02-pods.json",
            "03-pending.yml",
            "nested/namespaces/shop/core/pods.yaml",
            "nested/namespaces/shop/pods/cart/cart.yaml",
        ]
    );
    // Files holding no Kubernetes objects are left out and named; `README.txt` is
    // not a snapshot file at all: it is not read, only named (issue 25 item 2).
    let skipped: Vec<_> = r
        .skipped_files
        .iter()
        .map(|(f, why)| (rel(f), why.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("nested/notes.yaml".to_string(), "no Kubernetes objects"),
            ("nested/timestamp.json".to_string(), "empty"),
            ("README.txt".to_string(), "not YAML or JSON"),
        ]
    );
    assert!(r.from_directory);
    // The pod met twice unchanged is no conflict.
    assert_eq!(r.repeated, 1);
    assert!(r.replaced.is_empty(), "{:?}", r.replaced);
    assert_eq!(
        snap.cluster.pod("shop/cart").unwrap().node_name.as_deref(),
        Some("n1")
    );
    assert!(
        r.to_string().contains("1 object read twice unchanged"),
        "{r}"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("left out 3 files") && w.contains("nested/notes.yaml (no")),
        "{:?}",
        r.warnings
    );
    let names: Vec<_> = snap
        .cluster
        .nodes()
        .iter()
        .map(|n| n.name().to_string())
        .collect();
    assert_eq!(names, ["n1", "n2"]);
    // n2 has only capacity: allocatable defaults to it.
    assert_eq!(
        snap.cluster.node("n2").unwrap().node.allocatable.milli_cpu,
        4000
    );
    let web = snap.cluster.pod("default/web").unwrap();
    assert_eq!(web.priority, 1000);
    // Request defaulted from the limit.
    assert_eq!(web.requests.milli_cpu, 500);
    assert_eq!(
        snap.cluster.node("n1").unwrap().requested.milli_cpu,
        500 + 500
    );
    assert_eq!(r.terminal_pods, 1);
    assert_eq!(r.count("Pod"), 3);
    assert_eq!(r.count("Node"), 2);
    assert_eq!(r.count("PriorityClass"), 1);
    assert_eq!(snap.cluster.pending_pods().count(), 1);
    assert!(r.to_string().contains("ignored 1 terminated pod"), "{r}");
}

#[test]
fn empty_directory_is_an_error() {
    let (e, msg) =
        match load_snapshot(&fixtures().join("dir/nested/..").join("nested").join("none")) {
            Err(e) => {
                let m = e.to_string();
                (e, m)
            }
            Ok(_) => panic!("loaded a missing path"),
        };
    assert!(matches!(e, SnapshotError::Io { .. }), "{msg}");
    assert!(msg.contains("cannot read"), "{msg}");
    let dir = std::env::temp_dir().join(format!("schedscope-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let err = load_snapshot(&dir).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(matches!(err, SnapshotError::EmptyDirectory { .. }), "{err}");
    assert!(err.to_string().contains("no snapshot files"), "{err}");
}

#[test]
fn storage_class_and_namespace_defaults() {
    let snap = load_snapshot(
        &fixtures().join("fidelity/h27-volumebinding-unbound-immediate/snapshot.yaml"),
    )
    .unwrap();
    let sc = &snap.cluster.storage_classes["fast"];
    assert_eq!(sc.volume_binding_mode.as_deref(), Some("Immediate"));
    assert_eq!(sc.reclaim_policy.as_deref(), Some("Delete"));

    let snap = load_snapshot(&fixtures().join("fidelity/h43-ipa-namespace-selector/snapshot.yaml"))
        .unwrap();
    let prod = &snap.cluster.namespaces["prod"];
    let labels = prod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["kubernetes.io/metadata.name"], "prod");
    assert_eq!(labels["env"], "prod");
    // An explicit WaitForFirstConsumer stays.
    let snap = load(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: w}\nprovisioner: x\nvolumeBindingMode: WaitForFirstConsumer\n",
    );
    assert_eq!(
        snap.cluster.storage_classes["w"]
            .volume_binding_mode
            .as_deref(),
        Some("WaitForFirstConsumer")
    );
}

#[test]
fn terminal_pods_are_ignored_but_counted() {
    let snap = load(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {nodeName: n, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec: {nodeName: n, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\nstatus: {phase: Succeeded}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: f}\nspec: {nodeName: n, containers: [{name: c}]}\nstatus: {phase: Failed}\n",
    );
    assert_eq!(snap.report.terminal_pods, 2);
    assert_eq!(snap.cluster.pod_count(), 1);
    assert_eq!(snap.cluster.node("n").unwrap().requested.milli_cpu, 100);
}

#[test]
fn unknown_kinds_counted_and_secrets_never_read() {
    let snap = load(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\n---\n\
apiVersion: v1\ndata:\n  password: [not, valid, for, a, secret]\nkind: Secret\nmetadata: {name: s}\n---\n\
apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: 5}\n---\n\
apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: ksvc}\nspec: {template: 5}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {selector: {app: a}}\n",
    );
    let skipped = &snap.report.skipped_kinds;
    assert_eq!(skipped["Deployment"], 2);
    assert_eq!(skipped["Secret"], 1);
    assert_eq!(skipped["ConfigMap"], 1);
    assert_eq!(skipped["Service (serving.knative.dev/v1)"], 1);
    assert_eq!(snap.cluster.services.len(), 1);
    assert!(snap.cluster.services.contains_key("default/svc"));
    let shown = snap.report.to_string();
    assert!(
        shown.contains("skipped 1 ConfigMap, 2 Deployment, 1 Secret"),
        "{shown}"
    );

    // In JSON too, a Secret's payload is not decoded (kubectl prints `data` first).
    let json = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "data": {"x": ["not", "a", "string"]}, "kind": "Secret", "metadata": {"name": "s"}}]}"#;
    let snap = load_snapshot_str(json, "s.json").unwrap();
    assert_eq!(snap.report.skipped_kinds["Secret"], 1);
}

#[test]
fn runtime_class_overhead_is_applied() {
    let snap = load(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\noverhead:\n  podFixed: {cpu: 250m, memory: 160Mi}\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  runtimeClassName: kata\n  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  runtimeClassName: kata\n  overhead: {cpu: 10m}\n  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec:\n  runtimeClassName: runc\n  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n",
    );
    let a = snap.cluster.pod("default/a").unwrap();
    assert_eq!(a.overhead().milli_cpu, 250);
    assert_eq!(a.requests.milli_cpu, 1250);
    assert_eq!(a.requests.memory, 160 * 1024 * 1024);
    let b = snap.cluster.pod("default/b").unwrap();
    assert_eq!(b.requests.milli_cpu, 1010);
    let c = snap.cluster.pod("default/c").unwrap();
    assert_eq!(c.requests.milli_cpu, 1000);
    assert_eq!(snap.report.count("RuntimeClass"), 1);
}

#[test]
fn pod_groups_and_other_kinds() {
    let snap = load(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: batch}\nspec:\n  minMember: 3\n  scheduleTimeoutSeconds: 30\n  minResources: {cpu: '3', memory: 1Gi}\n---\n\
apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb, namespace: batch}\nspec: {minAvailable: 1, selector: {matchLabels: {app: a}}}\n---\n\
apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{name: d, nodeID: n1, allocatable: {count: 2}}]}\n---\n\
apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: batch}\nspec: {selector: {matchLabels: {app: a}}}\n",
    );
    let g = &snap.cluster.pod_groups["batch/g"];
    assert_eq!(g.min_member, 3);
    assert_eq!(g.schedule_timeout_seconds, Some(30));
    assert_eq!(g.min_resources["memory"], "1Gi");
    assert!(
        snap.cluster
            .pod_disruption_budgets
            .contains_key("batch/pdb")
    );
    assert!(snap.cluster.csi_nodes.contains_key("n1"));
    assert!(snap.cluster.replica_sets.contains_key("batch/rs"));
    let (_, msg) = load_err(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minResources: {cpu: lots}}\n",
        "pg.yaml",
    );
    assert!(msg.contains("PodGroup default/g"), "{msg}");
    assert!(msg.contains("spec.minResources.cpu"), "{msg}");
}

#[test]
fn missing_uid_gets_a_stable_synthetic_one() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\nspec: {containers: [{name: c}]}\n";
    let a = load(text);
    let b = load(text);
    let ua = &a.cluster.pod("x/p").unwrap().uid;
    assert!(!ua.is_empty());
    assert_eq!(ua, &b.cluster.pod("x/p").unwrap().uid);
}

// ---------------------------------------------------------------------------------
// Malformed input: a clear error, never a panic.

#[test]
fn bad_yaml_syntax_names_file_document_and_line() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n    namespace: x\n";
    let (e, msg) = load_err(text, "cluster.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    assert!(
        msg.starts_with("cluster.yaml: document 2 (line 9, column"),
        "{msg}"
    );
    assert!(msg.contains("YAML syntax error"), "{msg}");
}

#[test]
fn bad_json_syntax_names_line() {
    let text =
        "{\"apiVersion\": \"v1\",\n \"kind\": \"List\",\n \"items\": [\n {\"kind\": \"Pod\",}\n]}";
    let (e, msg) = load_err(text, "c.json");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    assert!(msg.starts_with("c.json: document 1 (line 4"), "{msg}");
    assert!(msg.contains("JSON syntax error"), "{msg}");
}

#[test]
fn wrong_field_type_names_the_field_path() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\nspec:\n  containers:\n  - name: c\n    ports:\n    - containerPort: eighty\n";
    let (e, msg) = load_err(text, "s.yaml");
    assert!(matches!(e, SnapshotError::InvalidObject { .. }), "{msg}");
    assert!(msg.contains("s.yaml: document 2 (line 5)"), "{msg}");
    assert!(msg.contains("Pod x/p"), "{msg}");
    assert!(
        msg.contains("field spec.containers[0].ports[0].containerPort"),
        "{msg}"
    );

    // In a JSON List, the position is the offending value's.
    let json = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n \"metadata\": {\"name\": \"n\", \"labels\": {\"a\": 1}}}]}";
    let (_, msg) = load_err(json, "s.json");
    assert!(
        msg.contains("s.json: document 1, items[0] (line 3"),
        "{msg}"
    );
    assert!(msg.contains("Node n"), "{msg}");
    assert!(msg.contains("field metadata.labels.a"), "{msg}");
}

#[test]
fn unknown_quantity_names_object_and_field() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: web, namespace: shop}\n  spec:\n    containers:\n    - name: c\n      resources:\n        requests:\n          cpu: 2 cores\n";
    let (e, msg) = load_err(text, "s.yaml");
    assert!(matches!(e, SnapshotError::InvalidObject { .. }), "{msg}");
    // The line is the field's (`cpu: 2 cores`), not the item's first line (4).
    assert!(
        msg.contains("s.yaml: document 1, items[0] (line 12)"),
        "{msg}"
    );
    assert!(msg.contains("Pod shop/web"), "{msg}");
    assert!(
        msg.contains("field spec.containers[0].resources.requests.cpu"),
        "{msg}"
    );
    assert!(msg.contains("2 cores"), "{msg}");

    let node =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {memory: 8GB}}\n";
    let (_, msg) = load_err(node, "n.yaml");
    assert!(
        msg.contains("Node n: field status.capacity.memory"),
        "{msg}"
    );
}

#[test]
fn document_without_kind() {
    let (e, msg) = load_err(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: mystery, namespace: x}\n",
        "s.yaml",
    );
    assert!(matches!(e, SnapshotError::MissingKind { .. }), "{msg}");
    assert!(msg.contains("s.yaml: document 2 (line 5)"), "{msg}");
    assert!(msg.contains("x/mystery"), "{msg}");
    assert!(msg.contains("no `kind` field"), "{msg}");
}

#[test]
fn empty_files_are_errors() {
    for (text, name) in [
        ("", "e.yaml"),
        ("  \n\n", "e.yaml"),
        ("# nothing\n---\n", "e.yaml"),
        ("", "e.json"),
    ] {
        let (e, msg) = load_err(text, name);
        assert!(
            matches!(e, SnapshotError::EmptyFile { .. }),
            "{text:?}: {msg}"
        );
        assert!(
            msg.starts_with(&format!("{name}: the file is empty")),
            "{msg}"
        );
    }
    // An empty List is valid kubectl output (no objects of those kinds).
    let snap = load("apiVersion: v1\nkind: List\nitems: []\n");
    assert_eq!(snap.cluster.nodes().len(), 0);
}

#[test]
fn binary_garbage_is_an_error() {
    let bytes: Vec<u8> = (0..2048u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let dir = std::env::temp_dir().join(format!("schedscope-garbage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("garbage.yaml");
    std::fs::write(&file, &bytes).unwrap();
    let err = load_snapshot(&file).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(matches!(err, SnapshotError::NotText { .. }), "{err}");
    assert!(err.to_string().contains("not a text file"), "{err}");
    // Control characters that are valid UTF-8.
    let (e, msg) = load_err("\u{1}\u{2}\u{0}kind: Pod", "g.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
}

#[test]
fn non_objects_and_api_versions() {
    let (e, msg) = load_err("- a\n- b\n", "s.yaml");
    assert!(matches!(e, SnapshotError::NotAnObject { .. }), "{msg}");
    assert!(msg.contains("found a list"), "{msg}");
    let (_, msg) = load_err(
        "apiVersion: v1\nkind: List\nitems:\n- just a string\n",
        "s.yaml",
    );
    assert!(msg.contains("items[0] (line 4)"), "{msg}");
    assert!(msg.contains("found a string"), "{msg}");
    let (e, msg) = load_err(
        "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: p, namespace: n}\n",
        "s.yaml",
    );
    assert!(
        matches!(e, SnapshotError::UnsupportedApiVersion { .. }),
        "{msg}"
    );
    assert!(msg.contains("StatefulSet n/p"), "{msg}");
    assert!(msg.contains("\"apps/v1\""), "{msg}");
    let (_, msg) = load_err("apiVersion: v1\nkind: Node\nmetadata: {}\n", "s.yaml");
    assert!(
        msg.contains("field metadata.name: required field is missing"),
        "{msg}"
    );
}

/// A tiny deterministic generator, so failures reproduce.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut XorShift, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    let noise = b"{}[]:,-\"'#&*!|>%@`\n\t \\0x9.eE+";
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(6) {
            0 if len > 0 => b[rng.below(len)] = rng.next() as u8,
            1 => {
                let at = rng.below(len + 1);
                b.insert(at, noise[rng.below(noise.len())]);
            }
            2 if len > 0 => {
                let at = rng.below(len);
                let end = (at + rng.below(40)).min(len);
                b.drain(at..end);
            }
            3 => b.truncate(rng.below(len + 1)),
            4 if len > 0 => {
                // Duplicate a slice (repeated keys, nested structure).
                let at = rng.below(len);
                let end = (at + rng.below(60)).min(len);
                let piece = b[at..end].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, piece);
            }
            _ => {
                let at = rng.below(len + 1);
                b.insert(at, noise[rng.below(noise.len())]);
            }
        }
    }
    b
}

/// Mutated snapshots (YAML, JSON, Lists) must give either a snapshot or an error that
/// names the input, never a panic.
#[test]
fn fuzzed_inputs_never_panic() {
    let yaml = std::fs::read(
        fixtures().join("fidelity/h61-list-format-global-default-priority/snapshot.yaml"),
    )
    .unwrap();
    let multi = std::fs::read(fixtures().join("dir/01-nodes.yaml")).unwrap();
    let json = std::fs::read(fixtures().join("dir/02-pods.json")).unwrap();
    let bases: [(&[u8], &str); 3] = [(&yaml, "f.yaml"), (&multi, "m.yaml"), (&json, "f.json")];
    let mut rng = XorShift(0x9E3779B97F4A7C15);
    let (mut ok, mut failed) = (0, 0);
    for round in 0..900 {
        let (base, name) = bases[round % bases.len()];
        let input = mutate(&mut rng, base);
        let text = String::from_utf8_lossy(&input);
        match load_snapshot_str(&text, name) {
            Ok(_) => ok += 1,
            Err(e) => {
                failed += 1;
                let msg = e.to_string();
                assert!(msg.starts_with(name), "round {round}: {msg}");
            }
        }
    }
    // The mutations must exercise both outcomes to mean anything.
    assert!(ok > 50 && failed > 50, "ok {ok}, failed {failed}");
}

#[test]
fn deep_nesting_and_alias_bombs_are_errors() {
    let deep_yaml = format!(
        "kind: Pod\nmetadata: {}{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let (e, msg) = load_err(&deep_yaml, "deep.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    let deep_json = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let (_, msg) = load_err(&deep_json, "deep.json");
    assert!(msg.starts_with("deep.json: document 1"), "{msg}");
    // Deep inside an item of a List big enough to be decoded on worker threads.
    let item = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}"#;
    let mut items = vec![item.to_string(); 1200];
    items[1100] = format!(
        r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "deep", "x": {}{}}}}}"#,
        "[".repeat(3000),
        "]".repeat(3000)
    );
    let list = format!(r#"{{"kind": "List", "items": [{}]}}"#, items.join(","));
    // An unknown field is skipped without recursion, so this one loads.
    let snap = load_snapshot_str(&list, "deep-list.json").unwrap();
    assert!(snap.cluster.node("deep").is_some());
    // Deep nesting in a field that is decoded is an error.
    items[1100] = format!(
        r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "deep"}}, "spec": {{"taints": {}{}}}}}"#,
        "[".repeat(3000),
        "]".repeat(3000)
    );
    let list = format!(r#"{{"kind": "List", "items": [{}]}}"#, items.join(","));
    let (_, msg) = load_err(&list, "deep-list.json");
    assert!(
        msg.starts_with("deep-list.json: document 1, items[1100]"),
        "{msg}"
    );

    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    bomb.push_str("kind: Node\n");
    let (_, msg) = load_err(&bomb, "bomb.yaml");
    assert!(msg.starts_with("bomb.yaml: document 1"), "{msg}");
}

/// A kubectl-style YAML List of `n` pods; pod `i` starts on line `3 + 8 * i`.
fn yaml_pod_list(n: usize) -> String {
    let mut s = String::from("apiVersion: v1\nitems:\n");
    for i in 0..n {
        s.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p{i}\n    namespace: ns\n  spec:\n    priority: {i}\n    containers: [{{name: c}}]\n"
        ));
    }
    s.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    s
}

#[test]
fn large_yaml_list_is_split_and_decoded_in_parallel() {
    let text = yaml_pod_list(300);
    let snap = load(&text);
    assert_eq!(snap.cluster.pod_count(), 300);
    assert_eq!(snap.cluster.pod("ns/p250").unwrap().priority, 250);
    assert_eq!(snap.report.documents, 1);

    // Errors still name the item and its line.
    let bad = text.replace("    priority: 250\n", "    priority: high\n");
    let (_, msg) = load_err(&bad, "big.yaml");
    assert!(
        msg.starts_with(&format!(
            "big.yaml: document 1, items[250] (line {})",
            3 + 8 * 250
        )),
        "{msg}"
    );
    assert!(msg.contains("Pod ns/p250: field spec.priority"), "{msg}");
    // A syntax error inside an item: reported at its line in the file.
    let bad = text.replace("    name: p200\n", "    name: p200\n   bad: [\n");
    let (e, msg) = load_err(&bad, "big.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    assert!(msg.starts_with("big.yaml: document 1 (line"), "{msg}");
}

#[test]
fn yaml_list_with_anchors_shared_between_items_still_loads() {
    let text = yaml_pod_list(300)
        .replacen(
            "    name: p0\n",
            "    name: p0\n    labels: &shared {app: web}\n",
            1,
        )
        .replacen(
            "    name: p299\n",
            "    name: p299\n    labels: *shared\n",
            1,
        );
    let snap = load(&text);
    assert_eq!(snap.cluster.pod_count(), 300);
    assert_eq!(snap.cluster.pod("ns/p299").unwrap().labels["app"], "web");
}

/// The API server rejects negative quantities (`must be greater than or equal to 0`);
/// such an object never reaches a scheduler, so the loader rejects it too.
#[test]
fn negative_quantities_are_rejected_as_the_api_server_does() {
    let pod = |resources: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: web, namespace: shop}}\nspec:\n  containers:\n  - name: c\n    resources: {resources}\n"
        )
    };
    for (resources, field, value) in [
        (
            "{requests: {cpu: \"-2\"}}",
            "spec.containers[0].resources.requests.cpu",
            "-2",
        ),
        (
            "{limits: {memory: -1Gi}}",
            "spec.containers[0].resources.limits.memory",
            "-1Gi",
        ),
        (
            "{requests: {example.com/gpu: \"-1\"}}",
            "spec.containers[0].resources.requests.example.com/gpu",
            "-1",
        ),
    ] {
        let (e, msg) = load_err(&pod(resources), "neg.yaml");
        assert!(matches!(e, SnapshotError::InvalidObject { .. }), "{msg}");
        assert!(msg.starts_with("neg.yaml: document 1"), "{msg}");
        assert!(
            msg.contains(&format!(
                "Pod shop/web: field {field}: Invalid value: \"{value}\": must be greater than or equal to 0"
            )),
            "{msg}"
        );
    }
    let node =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: \"-4\"}}\n";
    let (_, msg) = load_err(node, "n.yaml");
    assert!(
        msg.contains(
            "Node n: field status.capacity.cpu: Invalid value: \"-4\": must be greater than or equal to 0"
        ),
        "{msg}"
    );
    // Zero is allowed.
    load(&pod("{requests: {cpu: \"0\"}}"));
}

/// One large anchored scalar under thousands of aliases: refused while metering,
/// before gigabytes are built (a 1 MiB scalar under 9,999 aliases used to abort with
/// "memory allocation failed").
#[test]
fn alias_expansion_is_bounded_and_names_the_file() {
    let big = "x".repeat(64 << 10);
    let mut text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n  annotations:\n    a0: &big {big}\n"
    );
    for i in 1..10_000 {
        text.push_str(&format!("    a{i}: *big\n"));
    }
    text.push_str("spec:\n  containers:\n  - name: c\n");
    let (e, msg) = load_err(&text, "bomb.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    assert!(msg.starts_with("bomb.yaml: document 1 (line "), "{msg}");
    assert!(
        msg.ends_with(
            "YAML syntax error: its aliases (*name) expand it beyond its own size plus 16 MiB \
             (counted over every document of the input); refusing to build it"
        ),
        "{msg}"
    );
    // A few aliases of a large scalar are fine.
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n  annotations:\n    a0: &big {big}\n    a1: *big\n    a2: *big\nspec:\n  containers:\n  - name: c\n"
    );
    let snap = load(&text);
    assert!(snap.cluster.pod("default/p").is_some());
}

/// The allowance covers the whole input: many documents, each expanding by less
/// than the allowance, together exceed it and are refused, naming the document that
/// crossed it (each was allowed the full 16 MiB, so a 4 MB file reached 4.35 GB).
/// Issue 26, item 3.
#[test]
fn alias_allowance_is_shared_by_every_document() {
    let doc = |i: usize| {
        let big = "x".repeat(32 << 10);
        let mut d = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: default\n  annotations:\n    a0: &big {big}\n"
        );
        // 100 aliases of 32 KiB: about 3 MiB per document, within 16 MiB alone.
        for k in 1..100 {
            d.push_str(&format!("    a{k}: *big\n"));
        }
        d.push_str("spec:\n  containers:\n  - name: c\n");
        d
    };
    let one = doc(0);
    assert!(load(&one).cluster.pod("default/p0").is_some());
    // Twenty of them: about 60 MiB of expansion for 0.7 MB of text.
    let many: Vec<String> = (0..20).map(doc).collect();
    let (e, msg) = load_err(&many.join("---\n"), "many.yaml");
    assert!(matches!(e, SnapshotError::Syntax { .. }), "{msg}");
    assert!(msg.starts_with("many.yaml: document "), "{msg}");
    assert!(
        msg.contains("counted over every document of the input"),
        "{msg}"
    );
    // Five fit (about 15 MiB in all).
    let few: Vec<String> = (0..5).map(doc).collect();
    assert_eq!(load(&few.join("---\n")).cluster.pods().count(), 5);
}

/// Old Mac line ends (CR only) are line breaks in YAML: documents split and lines
/// count as with LF.
#[test]
fn cr_only_line_endings_load() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n";
    let snap = load(&text.replace('\n', "\r"));
    assert_eq!(snap.cluster.nodes().len(), 2);
    let bad = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: [\n";
    let (_, msg) = load_err(&bad.replace('\n', "\r"), "cr.yaml");
    assert!(msg.starts_with("cr.yaml: document 2 (line "), "{msg}");
    assert!(!msg.contains("from_str_multiple"), "{msg}");
}

/// Parser limits are said in words, not as the library's debug output.
#[test]
fn parser_limits_are_explained() {
    // 200 levels: inside the flow-nesting limit, so the depth limit (128) trips; the
    // recursion to get there overflowed a test thread's 2 MiB stack in debug builds.
    let deep = format!(
        "kind: Pod\nmetadata: {}{}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    let (_, msg) = load_err(&deep, "deep.yaml");
    assert!(
        msg.ends_with(
            "YAML syntax error: refusing to parse: it is nested more than 128 levels deep"
        ),
        "{msg}"
    );
    assert!(!msg.contains("budget"), "{msg}");

    // Nested aliases of aliases (a "billion laughs"): the parser's anchor-replay limit
    // trips before the expansion count does; said in words, not the limit's name.
    let mut laughs = String::from("kind: Pod\nmetadata: {name: p}\n");
    laughs.push_str(&format!(
        "x0: &x0 [{}]\n",
        vec!["\"yyyyyyyy\""; 16].join(",")
    ));
    for i in 1..9 {
        let refs = vec![format!("*x{}", i - 1); 16].join(",");
        laughs.push_str(&format!("x{i}: &x{i} [{refs}]\n"));
    }
    let (_, msg) = load_err(&laughs, "laughs.yaml");
    assert!(msg.contains("refusing to parse: its anchored (&name) values are larger than the parser keeps for aliases")
        || msg.contains("its aliases (*name) expand it beyond its own size"), "{msg}");
    assert!(
        !msg.contains("RecordedAnchor") && !msg.contains("budget"),
        "{msg}"
    );
}

/// An unquoted `1e30` is read by YAML as a float and written out in 31 digits; the
/// message names it as written.
#[test]
fn huge_unquoted_quantity_is_named_as_written() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1e30}}\n";
    let (_, msg) = load_err(text, "big.yaml");
    assert!(
        msg.contains("field spec.containers[0].resources.requests.cpu: quantity 1e30 is too large (written out, this YAML number has 31 digits; at most 30 are supported)"),
        "{msg}"
    );
    assert!(!msg.contains("1000000000"), "{msg}");
}

#[test]
fn scheduler_configuration_is_not_a_snapshot() {
    let text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    let (e, msg) = load_err(text, "cfg.yaml");
    assert!(matches!(e, SnapshotError::InvalidObject { .. }), "{msg}");
    assert_eq!(
        msg,
        "cfg.yaml: document 1 (line 1): KubeSchedulerConfiguration: this is a scheduler configuration, not a cluster object; pass it with --config"
    );
}

/// `9999-12-31T23:59:59Z` is a valid time the API server accepts; it is past the
/// timestamp type's last instant, so it loads as that instant (a day earlier).
#[test]
fn latest_valid_timestamp_loads() {
    let pod = |ts: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: web, namespace: shop, creationTimestamp: \"{ts}\"}}\nspec:\n  containers: [{{name: c}}]\n"
        )
    };
    let snap = load(&pod("9999-12-31T23:59:59Z"));
    let created = snap.cluster.pod("shop/web").unwrap().creation_timestamp;
    assert!(
        format!("{created:?}").contains("9999-12-30T22:00:00"),
        "{created:?}"
    );
    let json = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop", "creationTimestamp": "9999-12-31T23:59:59Z"}, "spec": {"containers": [{"name": "c"}]}}"#;
    assert!(load_snapshot_str(json, "t.json").is_ok());
    // An invalid date is still an error.
    let (_, msg) = load_err(&pod("9999-12-32T00:00:00Z"), "t.yaml");
    assert!(msg.contains("field metadata.creationTimestamp"), "{msg}");
}

/// A quantity error points at the field's own line, following list indexes and keys
/// with dots; flow style falls back to the line holding the key.
#[test]
fn quantity_errors_point_at_the_field_line() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  containers:\n  - name: a\n    resources:\n      requests:\n        cpu: 100m\n        example.com/gpu: 1\n  - name: b\n    resources:\n      requests:\n        cpu: 100m\n        example.com/gpu: -1\n";
    let (_, msg) = load_err(text, "p.yaml");
    assert!(
        msg.starts_with("p.yaml: document 2 (line 21): Pod shop/web: field spec.containers[1].resources.requests.example.com/gpu: Invalid value"),
        "{msg}"
    );
    let flow = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 2 cores}}\n";
    let (_, msg) = load_err(flow, "f.yaml");
    assert!(msg.starts_with("f.yaml: document 1 (line 7): "), "{msg}");
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  capacity:\n    cpu: \"4\"\n    memory: 8GB\n";
    let (_, msg) = load_err(node, "n.yaml");
    assert!(
        msg.starts_with("n.yaml: document 1 (line 7): Node n: field status.capacity.memory"),
        "{msg}"
    );
}

/// A key is looked for only inside its parent's block: a missing `metadata.name` is
/// not pinned on a container's `name:`.
#[test]
fn field_lines_stay_inside_the_parent_block() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: shop\nspec:\n  containers:\n  - name: c\n";
    let (_, msg) = load_err(text, "m.yaml");
    assert_eq!(
        msg,
        "m.yaml: document 1 (line 1): Pod: field metadata.name: required field is missing"
    );
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("schedscope-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_directory_file_that_names_a_kind_but_breaks_is_an_error() {
    // Left out only when it holds no Kubernetes objects: a truncated pods.yaml would
    // otherwise silently drop a namespace's pods.
    let dir = TempDir::new("broken-in-dir");
    std::fs::create_dir_all(dir.0.join("ns/core")).unwrap();
    std::fs::write(
        dir.0.join("ns/core/pods.yaml"),
        "apiVersion: v1\nkind: PodList\nitems:\n- kind: Pod\n  metadata: [name: x\n",
    )
    .unwrap();
    let err = load_snapshot(&dir.0).unwrap_err();
    assert!(matches!(err, SnapshotError::Syntax { .. }), "{err}");
    assert!(err.to_string().contains("pods.yaml"), "{err}");
}

#[test]
fn replaced_objects_are_named_and_identical_ones_are_not() {
    let node = |cpu: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: \"{cpu}\"}}}}\n"
        )
    };
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: x\n";
    let text = [node("4"), node("8"), class.to_string(), class.to_string()].join("---\n");
    let snap = load(&text);
    let r = &snap.report;
    assert_eq!(r.replaced, ["Node n1"]);
    assert_eq!(r.repeated, 1);
    assert_eq!(
        snap.cluster.node("n1").unwrap().node.allocatable.milli_cpu,
        8000,
        "the one read last is kept"
    );
    let w = r.warnings.join("\n");
    assert!(
        w.contains("1 object replaced an earlier, different object of the same kind and name (the one read last is kept): Node n1"),
        "{w}"
    );
}

#[test]
fn a_v1beta1_priority_class_is_read_as_v1_and_said() {
    let text = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n  priorityClassName: high\n  containers: [{name: c, image: x}]\n";
    let snap = load(text);
    assert_eq!(snap.cluster.pod("a/p").unwrap().priority, 1000);
    assert_eq!(
        snap.report.warnings,
        [
            "read 1 PriorityClass (scheduling.k8s.io/v1beta1) as its current version (the fields the scheduler reads are the same)"
        ]
    );
    // Other kinds keep refusing an older version whose schema differs.
    let (e, _) = load_err(
        "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: p, namespace: n}\n",
        "s.yaml",
    );
    assert!(matches!(e, SnapshotError::UnsupportedApiVersion { .. }));
}

/// Insights archives of older clusters hold policy/v1beta1 PDBs: read as v1 (what
/// the API server serves the scheduler) and said; preemption counts them.
#[test]
fn a_v1beta1_pod_disruption_budget_is_read_as_v1_and_said() {
    let text = "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: a}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: db}}\nstatus: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}\n";
    let snap = load(text);
    let pdb = &snap.cluster.pod_disruption_budgets["a/db"];
    let selector = pdb.spec.as_ref().and_then(|s| s.selector.as_ref()).unwrap();
    assert_eq!(selector.match_labels.as_ref().unwrap()["app"], "db");
    assert_eq!(pdb.status.as_ref().unwrap().disruptions_allowed, 0);
    assert_eq!(
        snap.report.warnings,
        [
            "read 1 PodDisruptionBudget (policy/v1beta1) as its current version (the fields the scheduler reads are the same)"
        ]
    );
}

#[test]
fn bound_pods_on_missing_nodes_and_a_single_namespace_are_warned_about() {
    let pod = |ns: &str, name: &str, node: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, image: x}}]\n"
        )
    };
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
    let text = [
        node.to_string(),
        pod("a", "p1", "n1"),
        pod("a", "p2", "gone"),
    ]
    .join("---\n");
    let w = load(&text).report.warnings.join("\n");
    assert!(
        w.contains("1 pod is bound to nodes missing from the snapshot (a/p2 on gone)"),
        "{w}"
    );
    assert!(
        w.contains("every pod in the snapshot is in namespace a"),
        "{w}"
    );
    let text = [node.to_string(), pod("a", "p1", "n1"), pod("b", "p2", "n1")].join("---\n");
    assert!(load(&text).report.warnings.is_empty());
    // A cluster-wide dump lists its namespaces: one that holds every pod is no sign
    // of `kubectl get pods` without -A.
    let ns = |n: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {n}}}\n");
    let text = [
        node.to_string(),
        ns("a"),
        ns("kube-system"),
        pod("a", "p1", "n1"),
    ]
    .join("---\n");
    assert!(
        load(&text).report.warnings.is_empty(),
        "{}",
        load(&text).report
    );
    let text = [node.to_string(), ns("a"), pod("a", "p1", "n1")].join("---\n");
    assert!(
        load(&text)
            .report
            .warnings
            .join("\n")
            .contains("every pod in the snapshot is in namespace a")
    );
}

#[test]
fn dra_objects_in_a_yaml_file_holding_json_are_kept() {
    // A `.yaml` file holding JSON takes the JSON path through a trial loader; its DRA
    // objects were once dropped when the trial was merged.
    let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}},
      {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
       "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "g0"}]}},
      {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "a"},
       "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    ]}"#;
    let snap = load_snapshot_str(text, "dump.yaml").unwrap();
    let r = &snap.report;
    assert_eq!(r.count("DeviceClass"), 1, "{r}");
    assert_eq!(r.count("ResourceSlice"), 1, "{r}");
    assert_eq!(r.count("ResourceClaim"), 1, "{r}");
}

#[test]
fn a_bare_json_array_is_not_called_a_list_and_a_non_string_kind_is_named() {
    let (_, msg) = load_err(
        r#"[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": 5}}]"#,
        "arr.json",
    );
    assert!(msg.contains("document 1, array element 0 ("), "{msg}");
    assert!(!msg.contains("items[0]"), "{msg}");
    for (text, found) in [
        ("apiVersion: v1\nkind: null\nmetadata: {name: a}\n", "null"),
        ("apiVersion: v1\nkind: 5\nmetadata: {name: a}\n", "5"),
    ] {
        let (_, msg) = load_err(text, "k.yaml");
        assert!(
            msg.ends_with(&format!(
                "(line 2): object a: field kind: expected the object's kind as a string (such as Pod), found {found}"
            )),
            "{msg}"
        );
        assert!(!msg.contains("quote the value"), "{msg}");
    }
}

#[test]
fn csi_storage_capacities_load_and_decide_volume_binding() {
    // Only zone b has capacity for the `cap` class: the pod's claim fits there only.
    let text = r#"
apiVersion: v1
kind: Node
metadata: {name: za, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: zb, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: cap}
provisioner: cap.csi
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: cap.csi}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-b, namespace: kube-system}
storageClassName: cap
capacity: 100Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: b}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {storageClassName: cap, accessModes: [ReadWriteOnce], resources: {requests: {storage: 5Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"#;
    let snap = load(text);
    assert_eq!(
        snap.report.count("CSIStorageCapacity"),
        1,
        "{}",
        snap.report
    );
    assert!(
        snap.cluster
            .csi_storage_capacities
            .contains_key("kube-system/cap-b")
    );
    let trace = schedscope::explain::explain(
        &snap.cluster,
        &schedscope::engine::SchedulerConfig::defaults(),
        "default/db",
        &schedscope::engine::cycle::CycleOptions {
            all_filters: false,
            now: "2026-01-01T00:00:00Z".parse().unwrap(),
            ..Default::default()
        },
    )
    .unwrap();
    let json = schedscope::render::json::to_json(&trace);
    assert_eq!(json["best_nodes"], serde_json::json!(["zb"]), "{json}");
    assert!(
        json.to_string().contains(r#""za":{"code":"UnschedulableAndUnresolvable","feasible":false,"plugin":"VolumeBinding","reasons":["node(s) did not have enough free storage"]}"#),
        "{json}"
    );
}

/// A file read by path may take the streaming path (a JSON List read in pieces):
/// whatever it takes, the model, the report and any error message are those of the
/// precise path that reads the whole text.
#[test]
fn path_load_streaming_agrees_with_text_load() {
    let pod = |i: usize, extra: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "p{i}", "namespace": "ns", "labels": {{"app": "a{}"}}}}, "spec": {{"nodeName": "n{}", "containers": [{{"name": "c", "image": "img:{i}", "resources": {{"requests": {{"cpu": "100m"}}}}}}], "priority": {i}, "volumes": [{{"name": "t", "projected": {{"sources": []}}}}, {{"name": "d", "persistentVolumeClaim": {{"claimName": "c{i}"}}}}]{extra}}}}}"#,
            i % 7,
            i % 5
        )
    };
    let node = |i: usize| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n{i}", "labels": {{"zone": "z{}"}}}}, "status": {{"allocatable": {{"cpu": "4", "memory": "8Gi", "pods": "110"}}, "images": [{{"names": ["img:{i}"], "sizeBytes": 1000000}}]}}}}"#,
            i % 3
        )
    };
    let mut items: Vec<String> = (0..5).map(node).collect();
    items.extend((0..1500).map(|i| pod(i, "")));
    // A later duplicate replaces the earlier one.
    items.push(pod(3, r#", "schedulerName": "other""#));
    let list = |items: &[String], head: &str, tail: &str| {
        format!("{{{head}\"items\": [{}]{tail}}}", items.join(",\n"))
    };
    let plain = list(&items, r#""apiVersion": "v1", "kind": "List", "#, "");
    let mut bad = items.clone();
    bad[1400] = bad[1400].replace(r#""containers""#, r#""containers": 5, "x""#);
    bad[700] = bad[700].replace(r#""priority": 695"#, r#""priority": "high""#);
    let mut quantity = items.clone();
    quantity[900] = quantity[900].replace("100m", "lots");
    let mut kindless = items.clone();
    kindless[1000] = kindless[1000].replace(r#""kind": "Pod", "#, "");
    let cases: Vec<(&str, String, bool)> = vec![
        ("plain", plain.clone(), true),
        // kubectl's key order: kind after the items.
        (
            "kind last",
            list(
                &items,
                r#""apiVersion": "v1", "#,
                r#", "kind": "List", "metadata": {"resourceVersion": ""}"#,
            ),
            true,
        ),
        (
            "bad item",
            list(&bad, r#""apiVersion": "v1", "kind": "List", "#, ""),
            false,
        ),
        (
            "bad quantity",
            list(&quantity, r#""kind": "List", "#, ""),
            false,
        ),
        (
            "typed list item",
            list(&kindless, r#""kind": "PodList", "apiVersion": "v1", "#, ""),
            false,
        ),
        (
            "not a list",
            list(&items, r#""apiVersion": "v1", "kind": "Pod", "#, ""),
            false,
        ),
        ("two documents", format!("{plain}\n{plain}"), false),
        ("truncated", plain[..plain.len() - 500].to_string(), false),
        (
            "syntax",
            plain.replacen("\"items\": [", "\"items\": [,", 1),
            false,
        ),
        (
            "empty list",
            r#"{"apiVersion": "v1", "kind": "List", "items": []}"#.into(),
            true,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, text, streams) in cases {
        let path = dir.path().join("c.json");
        std::fs::write(&path, &text).unwrap();
        let name = path.display().to_string();
        let by_path = load_snapshot(&path);
        let by_text = load_snapshot_str(&text, &name);
        match (by_path, by_text) {
            (Ok(p), Ok(t)) => {
                assert_eq!(p.report, t.report, "{what}");
                assert_eq!(
                    format!("{:?}", p.cluster.nodes()),
                    format!("{:?}", t.cluster.nodes()),
                    "{what}"
                );
                let pods = |s: &schedscope::source::Snapshot| {
                    format!("{:?}", s.cluster.pods().collect::<Vec<_>>())
                };
                assert_eq!(pods(&p), pods(&t), "{what}");
                assert_eq!(p.stats.streamed, streams, "{what}");
                assert_eq!(p.stats.bytes, text.len() as u64, "{what}");
                assert_eq!(p.stats.objects, t.stats.objects, "{what}");
            }
            (Err(p), Err(t)) => assert_eq!(p.to_string(), t.to_string(), "{what}"),
            (p, t) => panic!(
                "{what}: by path {:?}, by text {:?}",
                p.map(|s| s.report),
                t.map(|s| s.report)
            ),
        }
    }
    // The scheduler never reads kubelet-local volumes: the model keeps the claim only.
    let snap = load_snapshot_str(&plain, "c.json").unwrap();
    let p = snap.cluster.pod("ns/p1").unwrap();
    assert_eq!(p.volumes.len(), 1);
    assert_eq!(p.volumes[0].name, "d");
}

/// A snapshot piped in (`--snapshot <(kubectl get ... -o yaml)`) can be read only
/// once: YAML, and JSON that is not a list the streaming loader takes, load from a
/// named pipe as from a file (before, the second read of the pipe waited forever).
#[cfg(unix)]
#[test]
fn snapshot_from_a_named_pipe_loads_once() {
    let demo = std::fs::read_to_string("examples/demo-cluster.yaml").unwrap();
    let from_file = load_snapshot(Path::new("examples/demo-cluster.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("snapshot.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let (fifo, demo) = (fifo.clone(), demo.clone());
        std::thread::spawn(move || std::fs::write(fifo, demo).unwrap())
    };
    // A second read of the pipe would wait forever: fail instead.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(load_snapshot(&fifo));
    });
    let from_pipe = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the load of a named pipe ends")
        .expect("the piped snapshot loads");
    writer.join().unwrap();
    assert_eq!(
        from_pipe.cluster.nodes().len(),
        from_file.cluster.nodes().len()
    );
    let keys = |s: &schedscope::source::Snapshot| -> Vec<String> {
        s.cluster.pods().map(|p| p.key()).collect()
    };
    assert_eq!(keys(&from_pipe), keys(&from_file));
}

/// Issue 26 item 14: an object larger than any cluster can hold (the API server
/// takes at most 3 MiB per request) is refused before it is decoded, in YAML (alone
/// or as a List item) and in JSON; objects of ordinary size beside it are fine.
#[test]
fn objects_past_what_a_cluster_can_hold_are_refused_before_decoding() {
    let containers: String = (0..400_000)
        .map(|i| format!("  - {{name: c{i}, image: x}}\n"))
        .collect();
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: huge, namespace: default}}\nspec:\n  containers:\n{containers}"
    );
    assert!(pod.len() > 8 << 20);
    let (_, msg) = load_err(&pod, "huge.yaml");
    assert!(msg.starts_with("huge.yaml: document 1"), "{msg}");
    assert!(
        msg.contains("the API server accepts at most 3 MiB per object"),
        "{msg}"
    );
    // As an item of a List, after an ordinary one.
    let item = pod.replace('\n', "\n  ");
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {{name: n1}}\n- {}\n",
        item.trim_end()
    );
    let (_, msg) = load_err(&list, "list.yaml");
    assert!(
        msg.contains("the API server accepts at most 3 MiB per object"),
        "{msg}"
    );
    // JSON.
    let json_containers: Vec<String> = (0..300_000)
        .map(|i| format!("{{\"name\":\"c{i}\",\"image\":\"x\"}}"))
        .collect();
    let json = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"huge\",\"namespace\":\"default\"}},\"spec\":{{\"containers\":[{}]}}}}]}}",
        json_containers.join(",")
    );
    assert!(json.len() > 8 << 20);
    let (_, msg) = load_err(&json, "huge.json");
    assert!(
        msg.contains("the API server accepts at most 3 MiB per object"),
        "{msg}"
    );
}
