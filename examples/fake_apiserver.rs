//! A simulated API server on 127.0.0.1 for measuring a live session at scale:
//! `cargo run --example fake_apiserver -- NODES PODS KUBECONFIG_OUT`, then
//! `schedscope --kubeconfig KUBECONFIG_OUT`. Serves list/watch for every kind the
//! live source reads (the test server of `tests/live.rs`), until killed.

#[path = "../tests/support/fake_api.rs"]
mod fake_api;

use serde_json::json;

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nodes: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let pods: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(150_000);
    let out = args.get(3).cloned().unwrap_or_else(|| "kubeconfig".into());
    let api = fake_api::FakeApi::start().await;
    for ns in ["default", "kube-system", "team-a", "team-b"] {
        api.apply("namespaces", json!({"metadata": {"name": ns}}));
    }
    for i in 0..nodes {
        let zone = format!("zone-{}", i % 3);
        api.apply(
            "nodes",
            json!({"metadata": {"name": format!("node-{i:05}"), "labels": {
                "kubernetes.io/hostname": format!("node-{i:05}"),
                "topology.kubernetes.io/zone": zone}},
              "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                         "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                         "conditions": [{"type": "Ready", "status": "True"}],
                         "images": [{"names": ["registry.example.com/app:1.0"], "sizeBytes": 180000000}]}}),
        );
    }
    for i in 0..pods {
        let ns = ["default", "team-a", "team-b"][i % 3];
        let mut p = json!({"metadata": {"name": format!("pod-{i:06}"), "namespace": ns,
                "uid": format!("uid-{i}"), "labels": {"app": format!("app-{}", i % 500), "tier": "web"},
                "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"schedulerName": "default-scheduler", "priority": 0,
                "containers": [{"name": "main", "image": "registry.example.com/app:1.0",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "ports": [{"containerPort": 8080}]}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": 300}]},
            "status": {"phase": "Running"}});
        // Every 1000th pod pending.
        if i % 1000 == 0 {
            p["status"] = json!({"phase": "Pending"});
        } else {
            p["spec"]["nodeName"] = json!(format!("node-{:05}", i % nodes.max(1)));
        }
        api.apply("pods", p);
    }
    api.compact();
    std::fs::write(
        &out,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: sim\nclusters:\n- name: sim\n  cluster:\n    server: {}\ncontexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\nusers:\n- name: sim\n  user: {{}}\n",
            api.url()
        ),
    )
    .expect("write kubeconfig");
    println!(
        "serving {nodes} nodes and {pods} pods at {} (kubeconfig {out})",
        api.url()
    );
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    }
}
