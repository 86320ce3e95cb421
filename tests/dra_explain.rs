//! What `explain` shows of a pod's ResourceClaims: the Claims section of the table
//! and the `claims` key of the JSON, per rejected node in numbers (the FitError
//! keeps upstream's "cannot allocate all claims" byte for byte).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fidelity")
        .join(name)
        .join("snapshot.yaml")
}

fn explain(name: &str, pod: &str, json: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedscope"));
    cmd.args(["explain", pod, "-s"]).arg(scenario(name));
    if json {
        cmd.args(["-o", "json"]);
    }
    let o = cmd.output().expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn devices_in_use_are_counted_and_their_claims_named() {
    let out = explain("d08-devices-in-use", "default/pending", false);
    assert!(
        out.contains("\nClaim      gpu (default/pending-gpu)\n"),
        "{out}"
    );
    assert!(
        out.contains("  request    gpu: 1 device of class gpu.example.com\n"),
        "{out}"
    );
    assert!(
        out.contains("  n1  request gpu: needs 1 of class gpu.example.com: 2 match on the node, 0 free (2 in use: n1/gpu-0 by default/train-a-gpu, n1/gpu-1 by team-b/train-b-gpu)\n"),
        "{out}"
    );
    // Upstream's own words stay as they are.
    assert!(
        out.contains("cannot allocate all claims  [n1, n3]"),
        "{out}"
    );
}

#[test]
fn the_selector_that_leaves_no_device_is_named() {
    let out = explain(
        "d05-cel-attribute-capacity-selectors",
        "default/pending",
        false,
    );
    assert!(
        out.contains("  n1  request gpu: none of the 1 device of class gpu.example.com matches `device.attributes[\"gpu.example.com\"].model == \"a100\"`\n"),
        "{out}"
    );
    assert!(
        out.contains("  n2  request gpu: none of the 1 device of class gpu.example.com matches `device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0` (1 passes the selectors before it)\n"),
        "{out}"
    );
}

#[test]
fn constraints_alternatives_classes_templates_and_allocations() {
    let out = explain("d06-match-attribute-constraint", "default/pending", false);
    assert!(
        out.contains("  constraint matchAttribute resource.kubernetes.io/pcieRoot over gpu, nic\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "  n1  each request finds enough free devices on its own, but not all together"
        ),
        "{out}"
    );
    let out = explain("d10-first-available-fallback", "default/pending", false);
    assert!(
        out.contains("request gpu/big: none of the 1 device of class gpu.example.com matches"),
        "{out}"
    );
    assert!(
        out.contains("request gpu/small: needs 2 of class gpu.example.com matching"),
        "{out}"
    );
    let out = explain("d13-unknown-deviceclass", "default/pending", false);
    assert!(
        out.contains("  n1  request gpu: device class tpu.example.com does not exist\n"),
        "{out}"
    );
    let out = explain("d16-claim-template", "default/pending", false);
    assert!(
        out.contains("Claim      gpu (default/pending-gpu-7xk2p, from template big-gpu)"),
        "{out}"
    );
    let out = explain("d07-allocated-claim-pinned", "default/pending", false);
    assert!(
        out.contains("  allocated  gpu: gpu.example.com/n2/gpu-0\n"),
        "{out}"
    );
    assert!(
        out.contains("  n1  allocated already, to devices this node cannot reach\n"),
        "{out}"
    );
}

#[test]
fn json_carries_the_claims_beside_the_measured_fields() {
    let v: Value = serde_json::from_str(&explain(
        "d03-count-two-one-per-node",
        "default/pending",
        true,
    ))
    .unwrap();
    let c = &v["claims"][0];
    assert_eq!(c["claim"], "default/pending-gpus");
    assert_eq!(c["requests"][0], "gpus: 2 devices of class gpu.example.com");
    let n3 = c["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "n3")
        .unwrap();
    assert_eq!(
        n3["reasons"][0],
        "request gpus: needs 2 of class gpu.example.com: 2 match on the node, 1 free (1 in use: n3/gpu-1 by default/busy-gpu)"
    );
    assert_eq!(c["nodes_not_diagnosed"], 0);
    assert_eq!(
        v["fit_error"],
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    // A pod without claims has no `claims` key at all.
    let pod =
        std::fs::read_to_string(scenario("h01-basic-least-allocated").with_file_name("pod.txt"))
            .unwrap_or_else(|_| "default/pending".into());
    let v: Value =
        serde_json::from_str(&explain("h01-basic-least-allocated", pod.trim(), true)).unwrap();
    assert!(v.get("claims").is_none(), "{v}");
}

#[test]
fn the_devices_reserve_allocates_are_those_the_real_scheduler_picked() {
    // Measured on the real kube-scheduler v1.35.4 (see the scenarios' notes.txt): two
    // GPUs sharing a model on n3 (the allocator backtracks past gpu-1), three for an
    // All request on n4, a firstAvailable sub-request on n4.
    for (name, pod, line) in [
        (
            "r03-c-two-gpus-match-attribute",
            "dra-c/pending",
            "  allocates  gpu: gpu.example.com/n3/gpu-0, gpu: gpu.example.com/n3/gpu-2 (on n3, at Reserve)\n",
        ),
        (
            "r12-j-allocation-mode-all",
            "dra-j/pending",
            "  allocates  gpu: gpu.example.com/n4/gpu-0, gpu: gpu.example.com/n4/gpu-1, gpu: gpu.example.com/n4/gpu-2 (on n4, at Reserve)\n",
        ),
        (
            "r16-n-first-available-score",
            "dra-n/pending",
            "  allocates  gpu/h100: gpu.example.com/n4/gpu-0 (on n4, at Reserve)\n",
        ),
    ] {
        let out = explain(name, pod, false);
        assert!(out.contains(line), "{name}:\n{out}");
    }
    let json: Value =
        serde_json::from_str(&explain("r01-a-one-gpu-fits", "dra-a/pending", true)).unwrap();
    assert_eq!(
        json["claims"][0]["allocates"][0], "gpu: gpu.example.com/n1/gpu-0",
        "{json:#}"
    );
    assert_eq!(json["claims"][0]["allocates_on"], "n1");
}
