//! `--act` stopped by a signal (systemd and Kubernetes send SIGTERM) gives its Lease
//! back like a clean quit, headless or in the inspector, and exits with the shell's
//! code for the signal. Against the test API server on 127.0.0.1; every wait is
//! bounded.

mod support {
    pub mod fake_api;
    pub mod pty;
}

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::fake_api::FakeApi;

const WAIT: Duration = Duration::from_secs(30);
const LEASE: &str = "kube-system/default-scheduler";

/// One node, its name holding a window-title sequence (the log must not print it
/// raw), and one pending pod for the acting scheduler.
async fn cluster() -> Arc<FakeApi> {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply(
        "pods",
        json!({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p",
                            "creationTimestamp": "2026-01-10T09:00:00Z"},
               "spec": {"schedulerName": "default-scheduler", "priority": 0,
                        "containers": [{"name": "c", "image": "nginx",
                                        "resources": {"requests": {"cpu": "1"}}}]},
               "status": {"phase": "Pending"}}),
    );
    api.apply(
        "nodes",
        json!({"metadata": {"name": "n\u{1b}]0;pwned\u{7}", "labels": {"kubernetes.io/hostname": "n1"}},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                          "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}),
    );
    api
}

fn holder(api: &FakeApi) -> Value {
    api.objects("leases")
        .get(LEASE)
        .map(|l| l["spec"]["holderIdentity"].clone())
        .unwrap_or(Value::Null)
}

fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kubeconfig(api: &FakeApi, test: &str) -> String {
    let dir = std::env::temp_dir().join(format!("schedscope-{test}-{}", std::process::id()));
    api.write_kubeconfig(&dir).display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_act_releases_the_lease_on_each_stop_signal() {
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let api = cluster().await;
        let kc = kubeconfig(&api, &format!("headless-{signal}"));
        let watcher = api.clone();
        let (status, log) = tokio::task::spawn_blocking(move || {
            let mut child = Command::new(env!("CARGO_BIN_EXE_schedscope"))
                .args(["--act", "--headless", "--kubeconfig", &kc])
                .args(["--scheduler-name", "default-scheduler"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            let log = Arc::new(Mutex::new(String::new()));
            let mut stderr = child.stderr.take().expect("stderr");
            let sink = log.clone();
            let reader = std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
            until("the pod to be bound", || {
                log.lock().unwrap().contains("bound default/p to ") && holder(&watcher).is_string()
            });
            let st = Command::new("kill")
                .args(["-s", signal, &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(st.success());
            let deadline = Instant::now() + WAIT;
            let status = loop {
                if let Some(st) = child.try_wait().expect("wait") {
                    break st;
                }
                assert!(Instant::now() < deadline, "did not stop on SIG{signal}");
                std::thread::sleep(Duration::from_millis(20));
            };
            reader.join().expect("reader");
            let log = log.lock().unwrap().clone();
            (status, log)
        })
        .await
        .expect("headless run");
        assert_eq!(status.code(), Some(code), "SIG{signal}: {status:?}\n{log}");
        assert!(log.contains("stopped; Lease released"), "{log}");
        assert!(!log.contains("error:"), "{log}");
        assert!(
            log.contains(r"bound default/p to n\x1b]0;pwned\x07"),
            "{log}"
        );
        assert!(
            !log.contains(['\x1b', '\x07']),
            "control characters in the log: {log:?}"
        );
        assert!(holder(&api).is_null(), "SIG{signal}: Lease still held");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_inspector_releases_the_lease_on_sigterm() {
    let api = cluster().await;
    let kc = kubeconfig(&api, "inspector-term");
    let watcher = api.clone();
    let (status, restored) = tokio::task::spawn_blocking(move || {
        let mut s = support::pty::Session::start(&[
            "--act",
            "--kubeconfig",
            &kc,
            "--scheduler-name",
            "default-scheduler",
        ]);
        s.wait_for("acting as scheduler");
        assert!(holder(&watcher).is_string());
        s.signal("TERM");
        let status = s.wait_exit();
        s.wait_output_end();
        let restored = {
            let parser = s.parser.lock().unwrap();
            let screen = parser.screen();
            !screen.alternate_screen()
                && !screen.hide_cursor()
                && screen.mouse_protocol_mode() == vt100::MouseProtocolMode::None
        } && !s.tty_is_raw();
        (status, restored)
    })
    .await
    .expect("pty session");
    assert_eq!(
        (status.exit_code(), status.signal()),
        (143, None),
        "{status:?}"
    );
    assert!(restored, "terminal not restored");
    assert!(holder(&api).is_null(), "Lease still held");
}
