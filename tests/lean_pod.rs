//! The lean pod decode (only the scheduler's fields, see `source::lean_pod`) gives the
//! model exactly what decoding the whole `k8s_openapi` Pod gives: on every pod of
//! every fixture, fidelity scenario and example, and on a pod that sets every field
//! the scheduler reads beside the ones it skips.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1 as core;
use schedscope::model::Pod;
use schedscope::source::convert::convert_pod;
use schedscope::source::lean_pod::LeanPod;
use serde::Deserialize;
use serde_json::{Value, json};

/// The model's view and the conversion flags, or the conversion error.
fn converted(p: &core::Pod) -> Result<Option<(Pod, bool, bool, bool)>, String> {
    convert_pod(p)
        .map(|c| {
            c.map(|c| {
                (
                    c.pod,
                    c.explicit_priority,
                    c.explicit_policy,
                    c.needs_overhead,
                )
            })
        })
        .map_err(|e| e.to_string())
}

/// Decode `v` both ways and compare what the model gets; false when neither decodes
/// (both must then fail).
fn same_either_way(v: &Value, what: &str) -> bool {
    let full = core::Pod::deserialize(v);
    let lean = LeanPod::deserialize(v);
    match (full, lean) {
        (Ok(full), Ok(lean)) => {
            assert_eq!(converted(&full), converted(&lean.0), "{what}");
            true
        }
        (Err(_), Err(_)) => false,
        (full, lean) => panic!(
            "{what}: one decode failed: full {:?}, lean {:?}",
            full.err(),
            lean.err()
        ),
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(p);
        }
    }
}

/// Every object of a file (documents, List items), leniently: files that are not
/// cluster objects (configs, expected outputs, deliberately broken inputs) give none.
fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let docs: Vec<Value> = if path.extension().is_some_and(|x| x == "json") {
        serde_json::from_str::<Value>(&text).into_iter().collect()
    } else {
        serde_saphyr::from_multiple::<Value>(&text).unwrap_or_default()
    };
    let mut out = Vec::new();
    for d in docs {
        match d.get("items").and_then(Value::as_array) {
            Some(items) => out.extend(items.iter().cloned()),
            None => out.push(d),
        }
    }
    out
}

#[test]
fn every_shipped_pod_models_the_same_from_the_lean_decode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/fidelity", "tests/fixtures", "examples"] {
        files_under(&root.join(dir), &mut files);
    }
    files.sort();
    let mut pods = 0;
    for f in &files {
        for (i, o) in objects(f).iter().enumerate() {
            if o.get("kind").and_then(Value::as_str) == Some("Pod") {
                let what = format!("{} object {i}", f.display());
                if same_either_way(o, &what) {
                    pods += 1;
                }
            }
        }
    }
    // A test that found nothing to compare would prove nothing.
    assert!(pods > 300, "pods compared: {pods}");
}

/// A running pod as kubectl prints it, with everything the scheduler reads set and
/// the usual bulk it skips (probes, mounts, env, statuses' states, managed fields,
/// annotations, a projected token volume).
fn everything_pod() -> Value {
    let container = |name: &str, cpu: &str| {
        json!({
            "name": name,
            "image": format!("registry.example/{name}:1.2"),
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/app", "--flag"],
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "ports": [{"containerPort": 8080, "hostPort": 18080, "hostIP": "10.0.0.1",
                       "protocol": "UDP", "name": "http"},
                      {"containerPort": 9090}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
            "resources": {"requests": {"cpu": cpu, "memory": "128Mi", "example.com/gpu": "1"},
                          "limits": {"memory": "256Mi", "ephemeral-storage": "2Gi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "securityContext": {"runAsNonRoot": true}
        })
    };
    let mut sidecar = container("sidecar", "20m");
    sidecar["restartPolicy"] = json!("Always");
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "uid": "u-1",
            "generation": 3,
            "resourceVersion": "42",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"big\":true}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                 "uid": "o-1", "controller": true}],
            "creationTimestamp": "2025-11-16T20:37:22Z",
            "deletionTimestamp": "2025-11-17T20:37:22Z",
            "finalizers": ["example.com/keep"],
            "managedFields": [{"manager": "kubectl", "operation": "Apply",
                               "fieldsV1": {"f:spec": {"f:containers": {}}}}]
        },
        "spec": {
            "nodeName": "node-a",
            "schedulerName": "my-scheduler",
            "priorityClassName": "high",
            "priority": 1000,
            "preemptionPolicy": "Never",
            "runtimeClassName": "kata",
            "overhead": {"cpu": "250m", "memory": "64Mi"},
            "hostNetwork": true,
            "nodeSelector": {"disk": "ssd"},
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}},
                     "topologyKey": "kubernetes.io/hostname"}]}
            },
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web",
                             "effect": "NoSchedule"},
                            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2}],
            "schedulingGates": [{"name": "example.com/wait"}],
            "readinessGates": [{"conditionType": "example.com/ready"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
            "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
            "containers": [container("app", "500m"), container("log", "100m")],
            "initContainers": [container("init", "1"), sidecar],
            "volumes": [
                {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
                {"name": "cfg", "configMap": {"name": "c"}},
                {"name": "scratch", "emptyDir": {}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0", "readOnly": true}},
                {"name": "eph", "ephemeral": {"volumeClaimTemplate": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                             "resources": {"requests": {"storage": "1Gi"}}}}}},
                {"name": "pd", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": true}},
                {"name": "inline", "csi": {"driver": "csi.example.com", "volumeAttributes": {"a": "b"}}}
            ],
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "web",
            "terminationGracePeriodSeconds": 30
        },
        "status": {
            "phase": "Running",
            "nominatedNodeName": "node-b",
            "startTime": "2025-11-16T20:37:23Z",
            "qosClass": "Burstable",
            "hostIP": "10.0.0.1",
            "conditions": [
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                 "lastTransitionTime": "2025-11-16T20:37:23Z"},
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/3 nodes are available", "lastProbeTime": null}
            ],
            "containerStatuses": [
                {"name": "app", "image": "x", "imageID": "y", "ready": true, "restartCount": 0,
                 "state": {"running": {"startedAt": "2025-11-16T20:37:23Z"}},
                 "resources": {"requests": {"cpu": "800m", "memory": "100Mi"}},
                 "allocatedResources": {"cpu": "700m", "memory": "300Mi"}}
            ],
            "initContainerStatuses": [
                {"name": "sidecar", "image": "x", "imageID": "y", "ready": true, "restartCount": 1,
                 "resources": {"requests": {"cpu": "40m"}}}
            ],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-0-gpu-abc"}]
        }
    })
}

#[test]
fn a_pod_with_every_read_field_models_the_same_and_skips_the_rest() {
    let v = everything_pod();
    assert!(same_either_way(&v, "everything pod"));

    let lean = LeanPod::deserialize(&v).unwrap().0;
    // What is skipped is not built.
    assert!(lean.metadata.annotations.is_none());
    assert!(lean.metadata.managed_fields.is_none());
    let spec = lean.spec.as_ref().unwrap();
    assert!(spec.containers[0].env.is_none());
    assert!(spec.containers[0].readiness_probe.is_none());
    assert!(spec.containers[0].volume_mounts.is_none());
    let names: Vec<&str> = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(names, ["data", "eph", "pd", "inline"]);

    // And what is read reaches the model.
    let (pod, explicit_priority, explicit_policy, needs_overhead) =
        converted(&lean).unwrap().unwrap();
    assert!(explicit_priority && explicit_policy && !needs_overhead);
    assert_eq!(pod.volumes.len(), 4);
    assert_eq!(pod.host_ports.len(), 6, "{:?}", pod.host_ports);
    assert!(pod.preemption_in_progress);
    assert_eq!(pod.not_scheduled.as_ref().unwrap().0, "Unschedulable");
    assert_eq!(pod.scheduling_gates, ["example.com/wait"]);
    assert_eq!(pod.readiness_gates, 1);
    assert_eq!(pod.generation, 3);
}

#[test]
fn nulls_and_missing_fields_decode_as_the_full_type_does() {
    let cases = [
        json!({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": null}}),
        json!({"metadata": {"name": "a", "labels": null}, "spec": {"containers": [{"name": null}],
               "volumes": [{"name": "v", "persistentVolumeClaim": null}]},
               "status": {"conditions": [{"type": null}], "containerStatuses": null}}),
        json!({"metadata": null, "spec": null, "status": null}),
        json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
               "status": {"phase": "Succeeded"}}),
    ];
    for (i, v) in cases.iter().enumerate() {
        same_either_way(v, &format!("case {i}"));
    }
}

#[test]
fn a_wrong_type_in_a_read_field_is_an_error_at_its_path() {
    let cases = [
        (
            json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": {"a": 1}}}}]}}),
            "spec.containers[0].resources.requests.cpu",
        ),
        (
            json!({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": 3}}]}}),
            "persistentVolumeClaim.claimName",
        ),
        (
            json!({"status": {"containerStatuses": [{"name": "c", "allocatedResources": []}]}}),
            "status.containerStatuses[0].allocatedResources",
        ),
    ];
    for (v, path) in cases {
        let e = serde_path_to_error::deserialize::<_, LeanPod>(&v).unwrap_err();
        let said = format!("{}: {}", e.path(), e.inner());
        assert!(said.contains(path), "{said}");
    }
    // A wrong type where the scheduler never reads is not its business.
    let skipped = json!({"spec": {"containers": [{"name": "c", "readinessProbe": 7}]}});
    assert!(LeanPod::deserialize(&skipped).is_ok());
}
