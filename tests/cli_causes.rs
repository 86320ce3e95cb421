//! Issue 25 item 4, run as a user would: the only fix is never hidden behind
//! `(+N more)`, a DaemonSet pod's PreFilter rejection has its cause line, a namespace
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
