//! Builders for tests: objects from JSON literals, as a manifest would give them.

use serde_json::Value;

use super::{Cluster, Node, Pod};

/// A pod from a manifest literal (`metadata.namespace` defaults to `default`).
pub fn pod(v: Value) -> Pod {
    let k: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).expect("pod json");
    Pod::from_k8s(&k).expect("valid pod")
}

pub fn node(v: Value) -> Node {
    let k: k8s_openapi::api::core::v1::Node = serde_json::from_value(v).expect("node json");
    Node::from_k8s(&k).expect("valid node")
}

/// A cluster of the given nodes and pods.
pub fn cluster(nodes: Vec<Value>, pods: Vec<Value>) -> Cluster {
    let mut c = Cluster::new();
    for n in nodes {
        c.upsert_node(node(n));
    }
    for p in pods {
        c.upsert_pod(pod(p));
    }
    c
}

/// A ready node with cpu (e.g. "4"), memory (e.g. "8Gi") and 110 pods.
pub fn simple_node(name: &str, cpu: &str, memory: &str) -> Value {
    serde_json::json!({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}
    })
}

/// A pod with one container requesting cpu/memory; `node` binds it.
pub fn simple_pod(name: &str, cpu: &str, memory: &str, node: Option<&str>) -> Value {
    let mut v = serde_json::json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
        "spec": {"containers": [{"name": "c", "image": "img",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    });
    if let Some(n) = node {
        v["spec"]["nodeName"] = Value::String(n.into());
    }
    v
}

/// Storage objects from manifest literals with their `kind` (claims in `default`),
/// into the cluster's maps as the snapshot loader keys them.
pub fn add_storage_objects(c: &mut Cluster, objs: Vec<Value>) {
    for o in objs {
        let name = o["metadata"]["name"].as_str().unwrap().to_string();
        match o["kind"].as_str().unwrap() {
            "PersistentVolumeClaim" => {
                c.persistent_volume_claims.insert(
                    format!("default/{name}"),
                    serde_json::from_value(o).unwrap(),
                );
            }
            "PersistentVolume" => {
                c.persistent_volumes
                    .insert(name, serde_json::from_value(o).unwrap());
            }
            "StorageClass" => {
                c.storage_classes
                    .insert(name, serde_json::from_value(o).unwrap());
            }
            "CSINode" => {
                c.csi_nodes.insert(name, serde_json::from_value(o).unwrap());
            }
            "CSIDriver" => {
                c.csi_drivers
                    .insert(name, serde_json::from_value(o).unwrap());
            }
            "CSIStorageCapacity" => {
                c.csi_storage_capacities
                    .insert(name, serde_json::from_value(o).unwrap());
            }
            k => panic!("{k}"),
        }
    }
}
