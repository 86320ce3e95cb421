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
