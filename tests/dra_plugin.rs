//! DynamicResources through a whole cycle: messages and codes at each point,
//! including kube-scheduler v1.35.4's Score bug, reproduced and explained.

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::render::json::to_json;
use schedscope::source::load_snapshot_str;
use serde_json::Value;

const BASE: &str = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == \"gpu.example.com\"'}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices: [{name: gpu-0, attributes: {model: {string: a100}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  nodeName: n2
  devices: [{name: gpu-0, attributes: {model: {string: a100}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: net}
spec:
  driver: gpu.example.com
  pool: {name: net, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices: [{name: link-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: new, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com, selectors: [{cel: {expression: SELECTOR}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: old, namespace: default}
spec:
  devices:
    requests:
    - {name: link, exactly: {deviceClassName: gpu.example.com}}
status:
  allocation:
    devices:
      results: [{request: link, driver: gpu.example.com, pool: net, device: link-0}]
";

fn pod(claims: &[&str]) -> String {
    let mut s = String::from(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: p-uid}\n\
         spec:\n  containers: [{name: c, image: x}]\n  resourceClaims:\n",
    );
    for c in claims {
        s.push_str(&format!("  - {{name: {c}, resourceClaimName: {c}}}\n"));
    }
    s
}

fn answer(snapshot: &str) -> Value {
    let snap = load_snapshot_str(snapshot, "dra.yaml").unwrap();
    let opts = CycleOptions {
        all_filters: true,
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    let trace = explain(
        &snap.cluster,
        &SchedulerConfig::defaults(),
        "default/p",
        &opts,
    )
    .expect("explain");
    to_json(&trace)
}

fn snapshot(selector: &str, claims: &[&str]) -> String {
    BASE.replace("SELECTOR", &format!("'{selector}'")) + &pod(claims)
}

const ANY: &str = "device.attributes[\"gpu.example.com\"].model == \"a100\"";

#[test]
fn score_fails_with_an_allocated_and_a_new_claim_as_upstream_does() {
    let a = answer(&snapshot(ANY, &["old", "new"]));
    assert_eq!(
        a["fit_error"],
        "running Score plugins: plugin \"DynamicResources\" failed with: number of allocations 1 is smaller than number of claims",
        "{a:#}"
    );
    assert!(a["postfilter"].is_null(), "{a:#}");
    assert_eq!(a["best_nodes"], serde_json::json!([]));
    let note = &a["upstream_behaviour"][0];
    assert_eq!(note["plugin"], "DynamicResources");
    assert!(
        note["what"]
            .as_str()
            .unwrap()
            .contains("kube-scheduler v1.35.4 itself fails here"),
        "{a:#}"
    );
}

#[test]
fn allocated_claims_alone_score_zero_and_bind() {
    let a = answer(&snapshot(ANY, &["old"]));
    assert_eq!(a["fit_error"], Value::Null, "{a:#}");
    assert_eq!(a["scores"]["DynamicResources"]["raw"]["n1"], 0, "{a:#}");
    assert!(
        a.get("upstream_behaviour")
            .is_none_or(|v| v.as_array().is_none_or(Vec::is_empty))
    );
}

#[test]
fn cel_runtime_error_aborts_the_cycle() {
    let a = answer(&snapshot(
        "device.attributes[\"gpu.example.com\"].memory == 1",
        &["new"],
    ));
    assert_eq!(
        a["fit_error"],
        "running \"DynamicResources\" filter plugin: claim default/new: selector #0: CEL runtime error: no such key: memory",
        "{a:#}"
    );
    assert!(a["postfilter"].is_null(), "{a:#}");
}

#[test]
fn no_matching_device_is_unresolvable_on_every_node() {
    let a = answer(&snapshot(
        "device.attributes[\"gpu.example.com\"].model == \"h100\"",
        &["new"],
    ));
    assert_eq!(
        a["fit_error"],
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        "{a:#}"
    );
    assert_eq!(
        a["filter"]["n1"]["code"], "UnschedulableAndUnresolvable",
        "{a:#}"
    );
}

#[test]
fn missing_claim_is_held_at_pre_enqueue() {
    let a = answer(&snapshot(ANY, &["gone"]));
    assert_eq!(a["prefilter"]["plugin"], "DynamicResources", "{a:#}");
    assert_eq!(
        a["prefilter"]["reasons"][0],
        "could not find ResourceClaim \"default/gone\""
    );
    assert_eq!(a["fit_error"], Value::Null);
}

/// `simulate` writes each bound pod's allocation into its claim: the second pod
/// finds the only GPU taken.
#[test]
fn simulate_applies_allocations_to_later_pods() {
    use schedscope::engine::scheduler::{Placement, SimOptions, simulate};
    let text = BASE.replace("SELECTOR", &format!("'{ANY}'")).replace(
        "metadata: {name: n2-gpu}",
        "metadata: {name: n2-gpu, labels: {unused: x}}",
    ) + "---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: new2, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
" + &pod(&["new"])
        + &pod(&["new2"])
            .replace("name: p,", "name: q,")
            .replace("p-uid", "q-uid");
    // Only one GPU in the cluster: n2's slice is dropped.
    let text = text.replace("nodeName: n2\n", "nodeName: n9\n");
    let snap = load_snapshot_str(&text, "dra.yaml").unwrap();
    let r = simulate(
        snap.cluster,
        SchedulerConfig::defaults(),
        SimOptions {
            start: Some("2026-01-01T00:00:00Z".parse().unwrap()),
            ..Default::default()
        },
    );
    let placement = |key: &str| {
        r.pods
            .iter()
            .find(|p| p.pod == key)
            .map(|p| p.placement.clone())
            .unwrap()
    };
    assert_eq!(
        placement("default/p"),
        Placement::Bound { node: "n1".into() }
    );
    match placement("default/q") {
        Placement::Unschedulable { message, .. } => {
            assert!(message.contains("cannot allocate all claims"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// A pod naming one claim twice, as measured against the real kube-apiserver v1.35.6
/// and kube-scheduler v1.35.4: n1 has one GPU, n2 two; the claim asks for one.
const SAME_CLAIM_TWICE: &str = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == \"gpu.example.com\"'}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  nodeName: n2
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: pending-gpu, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
STATUS---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, uid: p-uid}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
  resourceClaims:
  - {name: gpu, resourceClaimName: pending-gpu}
  - {name: gpu2, resourceClaimName: pending-gpu}
";

#[test]
fn a_claim_named_twice_fails_at_pre_bind_as_upstream_does() {
    // First cycle: both entries are allocated (n1 cannot hold two, n2 can); the second
    // write of the claim finds the first one's allocation.
    let a = answer(&SAME_CLAIM_TWICE.replace("STATUS", ""));
    assert_eq!(
        a["filter"]["n1"]["reasons"][0],
        "cannot allocate all claims"
    );
    assert_eq!(a["filter"]["n2"]["feasible"], true, "{a:#}");
    assert_eq!(a["outcome"]["kind"], "error", "{a:#}");
    assert_eq!(
        a["outcome"]["message"],
        "running PreBind plugin \"DynamicResources\": claim default/pending-gpu got allocated elsewhere in the meantime",
        "{a:#}"
    );
    // Every later cycle: the claim is allocated on n2 and reserved for nobody; the
    // pod is appended to reservedFor twice, which the API server refuses.
    let allocated = "status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n2, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n2]}]}]
";
    let a = answer(&SAME_CLAIM_TWICE.replace("STATUS", allocated));
    assert_eq!(
        a["outcome"]["message"],
        "running PreBind plugin \"DynamicResources\": add reservation to claim default/pending-gpu: \
         ResourceClaim.resource.k8s.io \"pending-gpu\" is invalid: status.reservedFor[1]: \
         Duplicate value: \"p-uid\"",
        "{a:#}"
    );
}

#[test]
fn simulate_applies_post_filter_deallocation_and_the_next_attempt_binds() {
    // Measured on the real control plane (scenario r06): the claim is allocated on a
    // node whose cpu is short and reserved by nobody; PostFilter deallocates it, and
    // the real scheduler's next attempt allocated it anew and bound the pod to n1,
    // scoring n1 474 and n3 449.
    use schedscope::engine::scheduler::{Placement, SimOptions, simulate};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fidelity/r06-d3-unreserved-claim-deallocated/snapshot.yaml");
    let snap = load_snapshot_str(&std::fs::read_to_string(path).unwrap(), "r06.yaml").unwrap();
    let r = simulate(
        snap.cluster,
        SchedulerConfig::defaults(),
        SimOptions {
            keep_traces: true,
            ..Default::default()
        },
    );
    let pod = r.pods.iter().find(|p| p.pod == "dra-d3/pending").unwrap();
    assert_eq!(pod.placement, Placement::Bound { node: "n1".into() });
    let traces: Vec<_> = r.attempts.iter().filter_map(|a| a.trace.as_ref()).collect();
    assert_eq!(traces.len(), 2, "{:?}", r.attempts);
    assert!(
        traces[0]
            .fit_error
            .as_deref()
            .unwrap_or_default()
            .contains("deallocation of ResourceClaim completed")
    );
    assert_eq!(
        to_json(traces[1])["total"],
        serde_json::json!({"n1": 474, "n3": 449})
    );
}
