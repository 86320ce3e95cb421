//! What-if edits under `--act` change only what the inspector shows: the acting
//! scheduler keeps scheduling on the real model, so a pod that fits only under an
//! edit is not bound, and no write reaches the test API server because of the
//! edit. `--headless` has no view to edit: `--what-if` is refused there. Against
//! the test API server on 127.0.0.1; every wait is bounded.

mod support {
    pub mod fake_api;
    pub mod pty;
}

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::fake_api::FakeApi;

const WAIT: Duration = Duration::from_secs(30);

/// One cordoned node, and one pending pod for the acting scheduler that only that
/// node could take.
async fn cordoned_cluster() -> Arc<FakeApi> {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply(
        "nodes",
        json!({"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
               "spec": {"unschedulable": true,
                        "taints": [{"key": "node.kubernetes.io/unschedulable",
                                    "effect": "NoSchedule"}]},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                          "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}),
    );
    api.apply(
        "pods",
        json!({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p",
                            "creationTimestamp": "2026-01-10T09:00:00Z"},
               "spec": {"schedulerName": "default-scheduler", "priority": 0,
                        "containers": [{"name": "c", "image": "nginx",
                                        "resources": {"requests": {"cpu": "1"}}}]},
               "status": {"phase": "Pending"}}),
    );
    api
}

fn kubeconfig(api: &FakeApi, test: &str) -> String {
    let dir = std::env::temp_dir().join(format!("schedscope-{test}-{}", std::process::id()));
    api.write_kubeconfig(&dir).display().to_string()
}

fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The inspector shows the pod scheduled on the uncordoned node under the WHAT-IF
/// banner, while the acting session, on the real (cordoned) model, records it as
/// unschedulable and never binds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_under_act_is_shown_and_never_written() {
    let api = cordoned_cluster().await;
    let kc = kubeconfig(&api, "act-whatif");
    let watcher = api.clone();
    let status = tokio::task::spawn_blocking(move || {
        let mut s = support::pty::Session::start(&[
            "--act",
            "--kubeconfig",
            &kc,
            "--scheduler-name",
            "default-scheduler",
            "--what-if",
            "node.uncordon=n1",
        ]);
        s.wait_for("WHAT-IF");
        // The edited model's answer, in the inspector: it would fit on n1.
        let screen = s.wait_for("would be bound to n1");
        assert!(screen.contains("node.uncordon=n1"), "{screen}");
        // The session has tried the pod on the real model: its failure is written
        // back (PodScheduled=False), as without any edit.
        until("the real model's failure written back", || {
            watcher.objects("pods").get("default/p").is_some_and(|p| {
                p["status"]["conditions"]
                    .to_string()
                    .contains("Unschedulable")
            })
        });
        // Some more cycles' time: still never bound.
        std::thread::sleep(Duration::from_millis(1500));
        let pods = watcher.objects("pods");
        assert!(
            pods["default/p"]["spec"]["nodeName"].is_null(),
            "{}",
            pods["default/p"]
        );
        let writes = watcher.writes();
        assert!(
            writes.iter().all(|(_, path)| !path.ends_with("/binding")),
            "{writes:?}"
        );
        // Nothing touched the node the edit names.
        assert!(
            writes.iter().all(|(_, path)| !path.contains("/nodes")),
            "{writes:?}"
        );
        let nodes = watcher.objects("nodes");
        assert_eq!(nodes["n1"]["spec"]["unschedulable"], json!(true));
        s.keys("q");
        s.wait_exit()
    })
    .await
    .expect("pty session");
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn what_if_is_refused_with_headless() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(["--act", "--headless", "--what-if", "node.cordon=n1"])
        .args(["--kubeconfig", "/nonexistent/kubeconfig"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--what-if edits what the inspector shows, and --headless has no inspector"),
        "{err}"
    );
}

#[test]
fn a_malformed_edit_is_a_plain_error_before_the_inspector_starts() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(["--snapshot", "examples/demo-cluster.yaml"])
        .args(["--what-if", "node.cordon"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("what-if edit \"node.cordon\": expected node.cordon=NODE"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Not a terminal: nothing was drawn.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// In a terminal (the snapshot is read behind the loading screen, which a slow
/// load shows): the error comes after the terminal is put back, and the exit
/// status says it failed.
#[test]
fn an_edit_naming_a_node_the_snapshot_lacks_is_an_error_with_a_did_you_mean() {
    let mut s = support::pty::Session::start(&[
        "--snapshot",
        "examples/demo-cluster.yaml",
        "--what-if",
        "node.uncordon=gen-a33",
    ]);
    let status = s.wait_exit();
    assert!(!status.success(), "{status:?}");
    let screen = s.screen();
    assert!(
        screen.contains("no node \"gen-a33\"; did you mean \"gen-a3\"?"),
        "{screen}"
    );
    let parser = s.parser.lock().expect("parser");
    assert!(!parser.screen().alternate_screen(), "terminal restored");
}
