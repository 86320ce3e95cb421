//! DRA objects (`resource.k8s.io/v1`) in snapshots: defaulting, dropped gate-off
//! fields, and clear errors (file, document, object, field; exit 2) for bad ones.

use std::process::Command;

use schedscope::source::{SnapshotError, load_snapshot_str};

const CLASS: &str = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == \"gpu.example.com\"'}
";

const SLICE: &str = "apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: gpu-0
    taints: [{key: k, effect: NoSchedule}]
    attributes:
      model: {string: a100}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 40Gi}
";

const CLAIM: &str = "apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, tolerations: [{operator: Exists}]}
    - name: any
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com, allocationMode: All}
      - {name: small, deviceClassName: gpu.example.com}
";

const TEMPLATE: &str = "apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t1, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, count: 2}
";

fn err(text: &str) -> String {
    match load_snapshot_str(text, "dra.yaml") {
        Ok(s) => panic!("expected an error, loaded: {}", s.report),
        Err(e) => {
            assert!(matches!(e, SnapshotError::InvalidObject { .. }), "{e:?}");
            e.to_string()
        }
    }
}

#[test]
fn dra_objects_load_with_api_defaulting() {
    let text = [CLASS, SLICE, CLAIM, TEMPLATE].join("---\n");
    let snap = load_snapshot_str(&text, "dra.yaml").unwrap();
    let c = &snap.cluster;
    let r = &snap.report;
    assert!(r.skipped_kinds.is_empty(), "{r}");
    for kind in [
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
    ] {
        assert_eq!(r.objects.get(kind), Some(&1), "{kind}: {r}");
    }
    // DRAExtendedResource and DRADeviceTaints are off: their fields are dropped.
    assert!(
        c.device_classes["gpu.example.com"]
            .spec
            .extended_resource_name
            .is_none()
    );
    let dev = &c.resource_slices()["n1-gpu"].spec.devices.as_ref().unwrap()[0];
    assert!(dev.taints.is_none());
    // A claim without a namespace lands in `default`; ExactCount/1 is the default.
    let claim = c
        .resource_claim("default", "c1")
        .expect("claim keyed default/c1");
    let reqs = claim
        .spec
        .devices
        .as_ref()
        .unwrap()
        .requests
        .as_ref()
        .unwrap();
    let ex = reqs[0].exactly.as_ref().unwrap();
    assert_eq!(ex.allocation_mode.as_deref(), Some("ExactCount"));
    assert_eq!(ex.count, Some(1));
    assert!(ex.tolerations.is_none());
    let subs = reqs[1].first_available.as_ref().unwrap();
    assert_eq!(subs[0].allocation_mode.as_deref(), Some("All"));
    assert_eq!(subs[0].count, None);
    assert_eq!(subs[1].count, Some(1));
    assert!(c.resource_claim_templates.contains_key("ml/t1"));
}

#[test]
fn bad_capacity_quantity_names_the_field() {
    let msg = err(&SLICE.replace("value: 40Gi", "value: forty"));
    assert!(msg.contains("dra.yaml"), "{msg}");
    assert!(msg.contains("ResourceSlice n1-gpu"), "{msg}");
    assert!(
        msg.contains("spec.devices[0].capacity.memory.value"),
        "{msg}"
    );
}

#[test]
fn attribute_with_two_values_is_rejected() {
    let msg = err(&SLICE.replace("{string: a100}", "{string: a100, int: 3}"));
    assert!(msg.contains("spec.devices[0].attributes.model"), "{msg}");
    assert!(msg.contains("exactly one of"), "{msg}");
}

#[test]
fn bad_version_attribute_is_rejected() {
    let msg = err(&SLICE.replace("version: 1.2.3", "version: one"));
    assert!(
        msg.contains("spec.devices[0].attributes.driverVersion.version"),
        "{msg}"
    );
    assert!(msg.contains("semantic version"), "{msg}");
}

#[test]
fn slice_without_driver_or_pool_is_rejected() {
    // `driver` is a required field of the API type: the decoder names it.
    let msg = err(&SLICE.replace("  driver: gpu.example.com\n", ""));
    assert!(msg.contains("driver"), "{msg}");
    let msg = err(&SLICE.replace("resourceSliceCount: 1", "resourceSliceCount: 0"));
    assert!(msg.contains("spec.pool.resourceSliceCount"), "{msg}");
}

#[test]
fn claim_request_errors_name_the_request() {
    let msg = err(&CLAIM.replace(
        "exactly: {deviceClassName: gpu.example.com, tolerations: [{operator: Exists}]}",
        "exactly: {deviceClassName: gpu.example.com, allocationMode: Most}",
    ));
    assert!(msg.contains("ResourceClaim default/c1"), "{msg}");
    assert!(
        msg.contains("spec.devices.requests[0].exactly.allocationMode"),
        "{msg}"
    );
    let msg = err(&CLAIM.replace(
        "exactly: {deviceClassName: gpu.example.com, tolerations: [{operator: Exists}]}",
        "exactly: {deviceClassName: gpu.example.com, count: 0}",
    ));
    assert!(
        msg.contains("spec.devices.requests[0].exactly.count"),
        "{msg}"
    );
    let msg = err(&CLAIM.replace(
        "      exactly: {deviceClassName: gpu.example.com, tolerations: [{operator: Exists}]}\n",
        "",
    ));
    assert!(msg.contains("spec.devices.requests[0]"), "{msg}");
    assert!(msg.contains("`exactly`, `firstAvailable`"), "{msg}");
    let msg = err(&TEMPLATE.replace("count: 2", "count: -1"));
    assert!(
        msg.contains("spec.spec.devices.requests[0].exactly.count"),
        "{msg}"
    );
}

#[test]
fn wrong_type_is_a_decode_error_with_the_path() {
    let msg = err(&SLICE.replace("generation: 1", "generation: one"));
    assert!(msg.contains("ResourceSlice n1-gpu"), "{msg}");
    assert!(msg.contains("generation"), "{msg}");
}

#[test]
fn unsupported_version_of_a_dra_kind_is_an_error() {
    match load_snapshot_str(
        &CLASS.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1"),
        "dra.yaml",
    ) {
        Err(SnapshotError::UnsupportedApiVersion { .. }) => {}
        other => panic!("{:?}", other.map(|s| s.report.to_string())),
    }
}

#[test]
fn binary_exits_2_on_a_malformed_dra_object() {
    let dir = std::env::temp_dir().join(format!("schedscope-dra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad-dra.yaml");
    std::fs::write(&path, SLICE.replace("value: 40Gi", "value: forty")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(["explain", "-s"])
        .arg(&path)
        .arg("default/p")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad-dra.yaml"), "{stderr}");
    assert!(
        stderr.contains("spec.devices[0].capacity.memory.value"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn duplicate_device_names_in_a_slice_are_rejected() {
    // The API server validates a slice's devices as a set by name; the allocator
    // relies on that and checks only pools of several slices for repeats.
    let twice = SLICE.replace(
        "    capacity:\n      memory: {value: 40Gi}\n",
        "    capacity:\n      memory: {value: 40Gi}\n  - name: gpu-0\n",
    );
    let msg = err(&twice);
    assert!(msg.contains("spec.devices[1].name"), "{msg}");
    assert!(msg.contains("Duplicate value: \"gpu-0\""), "{msg}");
}
