//! Issue 25 item 4, run as a user would: the only fix is never hidden behind
//! `(+N more)` (in a small group, and in a big one when it is the only one of its
//! kind), a DaemonSet pod's PreFilter rejection has its cause line, a namespace
//! without pods says so, and counts of one are singular.

mod support {
    pub mod bin;
}

use support::bin::{demo, run, s, stderr, stdout};

const REAL_NAMES: &str = "tests/fixtures/real-names.yaml";

/// `ops/log-shipper-highmem`: mem-a1, the only `pool=highmem` node, has a taint the
/// pod does not tolerate; it is one of five nodes of the TaintToleration group, and
/// its cause is listed (a group of few nodes shows every cause).
#[test]
fn the_only_fix_is_listed_under_a_small_group() {
    let o = run(&["explain", "-s", s(&demo()), "ops/log-shipper-highmem"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("untolerated taint pool=highmem:NoSchedule  (1 node)"),
        "{out}"
    );
    assert!(!out.contains("more)"), "{out}");
}

/// Groups of 12 and 13 nodes (`tests/fixtures/causes-cap.yaml`): the three most
/// shared causes, then the cause of one node that no line shown names the subject of
/// (highmem-1's taint, its `disk=hdd`), then `(+N more)` for the rest (a taint of two
/// nodes; `pool=batch` of one node, whose subject `nodeSelector pool=highmem` is
/// shown); `--all-filters` lists every one.
#[test]
fn the_only_cause_of_its_kind_is_listed_in_a_big_group() {
    const CAP: &str = "tests/fixtures/causes-cap.yaml";
    let table = |pod: &str, all: bool| {
        let mut args = vec!["explain", "-s", CAP, pod];
        if all {
            args.push("--all-filters");
        }
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        // The cause lines, as drawn under the group.
        stdout(&o)
            .lines()
            .skip_while(|l| !l.contains("  UnschedulableAndUnresolvable  "))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .map(|l| l.trim().to_string())
            .collect::<Vec<_>>()
    };
    let more = "(+1 more; explain --all-filters lists every cause)";
    assert_eq!(
        table("ops/log-shipper", false),
        [
            "untolerated taint dedicated=batch:NoSchedule  (4 nodes)",
            "untolerated taint dedicated=ml:NoSchedule  (3 nodes)",
            "untolerated taint dedicated=infra:NoSchedule  (2 nodes)",
            "untolerated taint pool=highmem:NoSchedule  (1 node)",
            more,
        ]
    );
    assert_eq!(
        table("shop/report-highmem", false),
        [
            "nodeSelector pool=highmem: node has pool=general  (6 nodes)",
            "nodeSelector pool=highmem: node lacks label pool  (3 nodes)",
            "nodeSelector pool=highmem: node has pool=gpu  (2 nodes)",
            "nodeSelector disk=ssd: node has disk=hdd  (1 node)",
            more,
        ]
    );
    let all = table("shop/report-highmem", true);
    assert!(
        all.contains(&"nodeSelector pool=highmem: node has pool=batch  (1 node)".to_string()),
        "{all:?}"
    );
    assert!(!all.iter().any(|l| l.contains("more")), "{all:?}");
    let all = table("ops/log-shipper", true);
    assert!(
        all.contains(&"untolerated taint nvidia.com/gpu=present:NoSchedule  (2 nodes)".to_string()),
        "{all:?}"
    );
}

/// A DaemonSet pod pinned by `matchFields` to a node missing from the dump: every
/// node is left out at PreFilter, with one cause line naming the field selector and
/// the missing node; Needs names the term a field selector, not a label.
#[test]
fn a_prefilter_node_subset_has_its_cause_and_a_field_selector_is_named_so() {
    let o = run(&["explain", "-s", REAL_NAMES, "kube-system/aws-node-xk4t2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "field selector metadata.name In [ip-10-0-63-88.ec2.internal] (matchFields, as a \
             DaemonSet pod has): not this node; ip-10-0-63-88.ec2.internal not in the snapshot  (4 nodes)"
        ),
        "{out}"
    );
    assert!(
        out.contains("required: field selector metadata.name In [ip-10-0-63-88.ec2.internal]"),
        "{out}"
    );
}

/// `pods -n` with a namespace that has no pods: an error (exit 2, as `explain` on a
/// missing pod) naming the namespaces that have some; a namespace with pods but none
/// pending still lists (an empty table).
#[test]
fn pods_in_a_namespace_without_pods_says_so() {
    let o = run(&["pods", "-s", s(&demo()), "-n", "nosuchns"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "namespace \"nosuchns\" has no pods; namespaces with pods: batch, db, default, ml, ops, shop"
        ),
        "{err}"
    );
    let o = run(&["pods", "-s", REAL_NAMES, "-n", "payments"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Counts of one are singular: `1 of 1 evaluated node feasible (1 node in the cluster)`.
#[test]
fn one_node_is_singular() {
    let dir = std::env::temp_dir().join(format!("schedscope-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("one.yaml");
    std::fs::write(
        &p,
        "apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: '2', memory: 2Gi, pods: '10'}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, uid: u1}
spec: {containers: [{name: c, image: x}]}
status: {phase: Pending}
",
    )
    .unwrap();
    let o = run(&["explain", "-s", s(&p), "default/p"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("1 of 1 evaluated node feasible (1 node in the cluster)"),
        "{out}"
    );
}

/// The score table's columns are as wide as their widest shown value: a 68-character
/// node name and 10-digit totals under weights in the millions stay aligned with
/// the header (they pushed every later cell right before).
#[test]
fn the_score_table_stays_aligned_at_real_name_lengths() {
    let o = run(&[
        "explain",
        "-s",
        REAL_NAMES,
        "--config",
        "tests/fixtures/real-names-weights.yaml",
        "openshift-monitoring/prometheus-k8s-0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Scores"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("TT = "))
        .collect();
    assert_eq!(table.len(), 5, "{out}");
    assert!(
        table.iter().any(|l| l.contains(
            "ocp4-prod-7xk2p-worker-highmem-us-east-1c-r6i-8xlarge-zq8vd.internal 4970000000"
        )),
        "{out}"
    );
    let ends = |line: &str| -> Vec<usize> {
        let chars: Vec<char> = line.chars().collect();
        (0..chars.len())
            .filter(|&i| chars[i] != ' ' && chars.get(i + 1).is_none_or(|c| *c == ' '))
            .collect()
    };
    // Every right-aligned column (TOTAL and each plugin's) ends where its header does.
    let header = ends(table[0]);
    for row in &table[1..] {
        let row_ends = ends(row);
        for end in &header[2..] {
            assert!(row_ends.contains(end), "{row:?} vs header {:?}", table[0]);
        }
        assert_eq!(row.chars().count(), table[0].chars().count(), "{out}");
    }
}
