//! A simulated API server on 127.0.0.1 for measuring a live session at scale:
//! `cargo run --example fake_apiserver -- NODES PODS KUBECONFIG_OUT`, then
//! `schedscope --kubeconfig KUBECONFIG_OUT`. Serves list/watch for every kind the
//! live source reads (the test server of `tests/live.rs`), until killed.

#[path = "../tests/support/fake_api.rs"]
mod fake_api;

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nodes: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let pods: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(150_000);
    let out = args.get(3).cloned().unwrap_or_else(|| "kubeconfig".into());
    let api = fake_api::FakeApi::start().await;
    api.populate(nodes, pods);
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
