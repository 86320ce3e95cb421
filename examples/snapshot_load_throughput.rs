//! Measures snapshot load throughput on a synthetic `kubectl get ... -A -o json` List
//! of a large cluster (default 5,000 nodes, 150,000 pods), shaped like kubectl output
//! (sorted keys, 4-space indent, status blocks, managedFields omitted as kubectl does).
//!
//! cargo run --release --example snapshot_load_throughput -- [NODES PODS [FILE]]
//!
//! The file is generated once (default under the system temp directory) and reused.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

fn node(i: usize) -> Value {
    let name = format!("node-{i:05}");
    let zone = format!("zone-{}", i % 3);
    let images: Vec<Value> = (0..30)
        .map(|k| {
            json!({
                "names": [
                    format!("registry.example.com/team-{k}/service@sha256:{:064x}", k * 7919 + i),
                    format!("registry.example.com/team-{k}/service:v1.{k}.0"),
                ],
                "sizeBytes": 10_000_000 + k * 1_234_567
            })
        })
        .collect();
    let cond = |t: &str, s: &str, reason: &str| {
        json!({"lastHeartbeatTime": "2025-01-01T10:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z",
               "message": format!("kubelet reports {t} {s}"), "reason": reason, "status": s, "type": t})
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"
            },
            "creationTimestamp": "2025-01-01T00:00:00Z",
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.4xlarge",
                "topology.kubernetes.io/region": "region-1", "topology.kubernetes.io/zone": zone
            },
            "name": name,
            "resourceVersion": format!("{}", 100000 + i),
            "uid": format!("{:08x}-0000-4000-8000-{:012x}", i, i)
        },
        "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256), "providerID": format!("aws:///{zone}/i-{i:017x}")},
        "status": {
            "addresses": [{"address": format!("10.0.{}.{}", i / 256, i % 256), "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": "15890m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "62604164Ki", "pods": "110"},
            "capacity": {"cpu": "16", "ephemeral-storage": "103680636Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "64009092Ki", "pods": "110"},
            "conditions": [cond("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                           cond("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                           cond("PIDPressure", "False", "KubeletHasSufficientPID"),
                           cond("Ready", "True", "KubeletReady")],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": format!("{i:032x}"),
                         "containerRuntimeVersion": "containerd://1.7.20", "kernelVersion": "6.1.0",
                         "kubeProxyVersion": "v1.35.0", "kubeletVersion": "v1.35.0",
                         "machineID": format!("{i:032x}"), "operatingSystem": "linux",
                         "osImage": "Ubuntu 24.04 LTS", "systemUUID": format!("{i:032x}")}
        }
    })
}

fn pod(i: usize, nodes: usize) -> Value {
    let app = format!("app-{}", i % 500);
    let hash = format!("{:010x}", (i % 500) * 2654435761usize % 0xffffffffff);
    let name = format!("{app}-{hash}-{:05x}", i);
    let node = format!("node-{:05}", i % nodes);
    let ns = format!("team-{}", i % 40);
    let containers: Vec<Value> = (0..1 + i % 2)
        .map(|c| {
            json!({
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "image": format!("registry.example.com/{app}/c{c}:v1.2.3"),
                "imagePullPolicy": "IfNotPresent",
                "livenessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                  "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
                "name": format!("c{c}"),
                "ports": [{"containerPort": 8080 + c, "name": "http", "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "512Mi"},
                              "requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                  "name": "kube-api-access-abcde", "readOnly": true}]
            })
        })
        .collect();
    let statuses: Vec<Value> = (0..1 + i % 2)
        .map(|c| {
            json!({
                "allocatedResources": {"cpu": "100m", "memory": "128Mi"},
                "containerID": format!("containerd://{:064x}", i * 31 + c),
                "image": format!("registry.example.com/{app}/c{c}:v1.2.3"),
                "imageID": format!("registry.example.com/{app}/c{c}@sha256:{:064x}", i % 500),
                "lastState": {}, "name": format!("c{c}"), "ready": true,
                "resources": {"limits": {"cpu": "500m", "memory": "512Mi"},
                              "requests": {"cpu": "100m", "memory": "128Mi"}},
                "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": "2025-01-01T00:01:00Z"}},
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                  "name": "kube-api-access-abcde", "readOnly": true, "recursiveReadOnly": "Disabled"}]
            })
        })
        .collect();
    let cond = |t: &str| json!({"lastProbeTime": null, "lastTransitionTime": "2025-01-01T00:01:00Z", "status": "True", "type": t});
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2025-01-01T00:00:30Z",
            "generateName": format!("{app}-{hash}-"),
            "labels": {"app": app, "pod-template-hash": hash, "tier": "backend"},
            "name": name,
            "namespace": ns,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                                 "kind": "ReplicaSet", "name": format!("{app}-{hash}"),
                                 "uid": format!("{:08x}-1111-4000-8000-{:012x}", i % 500, i % 500)}],
            "resourceVersion": format!("{}", 200000 + i),
            "uid": format!("{:08x}-2222-4000-8000-{:012x}", i, i)
        },
        "spec": {
            "containers": containers,
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "nodeName": node,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
            ],
            "volumes": [{"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}
            ]}}]
        },
        "status": {
            "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"),
                           cond("ContainersReady"), cond("PodScheduled")],
            "containerStatuses": statuses,
            "hostIP": format!("10.0.{}.{}", (i % nodes) / 256, (i % nodes) % 256),
            "hostIPs": [{"ip": format!("10.0.{}.{}", (i % nodes) / 256, (i % nodes) % 256)}],
            "phase": "Running",
            "podIP": format!("10.{}.{}.{}", 100 + i / 65536, (i / 256) % 256, i % 256),
            "podIPs": [{"ip": format!("10.{}.{}.{}", 100 + i / 65536, (i / 256) % 256, i % 256)}],
            "qosClass": "Burstable",
            "startTime": "2025-01-01T00:00:31Z"
        }
    })
}

fn generate(path: &PathBuf, nodes: usize, pods: usize) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut first = true;
    let mut emit = |v: Value, w: &mut std::io::BufWriter<std::fs::File>| -> std::io::Result<()> {
        if !first {
            w.write_all(b",\n")?;
        }
        first = false;
        let mut ser = serde_json::Serializer::with_formatter(&mut *w, fmt.clone());
        v.serialize(&mut ser).map_err(std::io::Error::other)
    };
    for i in 0..nodes {
        emit(node(i), &mut w)?;
    }
    for i in 0..pods {
        emit(pod(i, nodes), &mut w)?;
    }
    w.write_all(b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")?;
    w.flush()
}

/// User + system CPU time of this process (Linux; `None` elsewhere). On a shared
/// machine the wall-clock figure depends on other load; this one shows the work done.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are 14th and 15th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nodes: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(5_000);
    let pods: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(150_000);
    let path = args.get(2).map(PathBuf::from).unwrap_or_else(|| {
        std::env::temp_dir().join(format!("schedscope-bench-{nodes}n-{pods}p.json"))
    });
    if !path.exists() {
        eprintln!("generating {} ...", path.display());
        if let Err(e) = generate(&path, nodes, pods) {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    // Warm the page cache so the figure measures parsing, not the disk.
    let size = std::fs::read(&path).map(|b| b.len()).unwrap_or(0);
    for run in 1..=3 {
        let t = Instant::now();
        let cpu0 = process_cpu_seconds();
        let snap = match schedscope::source::load_snapshot(&path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let secs = t.elapsed().as_secs_f64();
        let cpu = process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let mb = size as f64 / 1e6;
        let cpu_note = cpu.map_or(String::new(), |c| {
            format!(", {c:.2} s CPU over all threads")
        });
        println!(
            "run {run}: {mb:.1} MB in {secs:.2} s = {:.1} MB/s{cpu_note} ({} nodes, {} pods)",
            mb / secs,
            snap.cluster.nodes().len(),
            snap.cluster.pod_count()
        );
        if run == 1 {
            println!("  {}", snap.report);
        }
        // Dropping a cluster this size takes a while; keep it out of the next timing.
        drop(snap);
    }
}
