//! Names, messages and keys from a snapshot or a configuration may hold terminal
//! escape sequences (a window title, a screen clear). Human-readable output prints
//! them spelled out (`\x1b`), JSON and YAML escape them, and the inspector drops
//! them; none reaches the terminal raw.

mod support {
    pub mod pty;
}

use std::path::PathBuf;
use std::process::{Command, Output};

/// A window-title sequence and a screen clear, as they would reach a terminal.
const TITLE: &str = "\x1b]0;pwned\x07";
const CLEAR: &str = "\x1b[2J";

/// A pod and two nodes with both sequences in names, a taint key and value: the pod
/// fits on one node and is rejected by the other's taint.
const SNAPSHOT: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: "tainted\e[2J"
  labels: {kubernetes.io/hostname: tainted}
spec:
  taints:
  - {key: "evil\e]0;pwned\a", value: "\e[2J", effect: NoSchedule}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: "ok\e]0;pwned\a"
  labels: {kubernetes.io/hostname: ok}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: "web\e]0;pwned\a\e[2J"
  namespace: default
  uid: u1
  creationTimestamp: "2026-01-10T09:00:00Z"
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: "1"}}
status: {phase: Pending}
"#;

fn file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedscope-escape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn snapshot() -> String {
    file("snapshot.yaml", SNAPSHOT).display().to_string()
}

fn pod() -> String {
    format!("default/web{TITLE}{CLEAR}")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// No escape character or bell at all in `text`.
fn assert_inert(what: &str, text: &str) {
    assert!(
        !text.contains(['\x1b', '\x07', '\u{9b}']),
        "{what} prints control characters raw:\n{text:?}"
    );
}

#[test]
fn human_outputs_spell_control_characters_out() {
    let snap = snapshot();
    let pod = pod();
    let spelled = r"default/web\x1b]0;pwned\x07\x1b[2J";
    for args in [
        vec!["pods"],
        vec!["explain", &pod],
        vec!["explain", &pod, "--all-filters"],
        vec!["simulate"],
    ] {
        let out = run(&[&["--snapshot", &snap][..], &args].concat());
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_inert(&format!("{args:?}"), &text);
        assert!(text.contains(spelled), "{args:?}:\n{text}");
    }
    let out = run(&["--snapshot", &snap, "explain", &pod]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // The feasible node by name, the tainted one among the rejected.
    assert!(text.contains(r"on ok\x1b]0;pwned\x07"), "{text}");
    assert!(text.contains(r"[tainted\x1b[2J]"), "{text}");
}

#[test]
fn json_and_yaml_escape_control_characters() {
    let snap = snapshot();
    let pod = pod();
    for (args, spelled) in [
        (
            vec!["explain", &pod, "-o", "json"],
            r"web\u001b]0;pwned\u0007\u001b[2J",
        ),
        (vec!["explain", &pod, "-o", "yaml"], r"web\e]0;pwned\a\e[2J"),
        (
            vec!["simulate", "-o", "json"],
            r"web\u001b]0;pwned\u0007\u001b[2J",
        ),
    ] {
        let out = run(&[&["--snapshot", &snap][..], &args].concat());
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_inert(&format!("{args:?}"), &text);
        assert!(text.contains(spelled), "{args:?}:\n{text}");
    }
}

#[test]
fn error_messages_spell_control_characters_out() {
    let snap = snapshot();
    let pod = pod();
    // A configuration key the user wrote, quoted back by the error.
    let config = file(
        "config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n\
         \"bad\\e]0;pwned\\a\\e[2J\": 1\n",
    );
    let out = run(&[
        "--snapshot",
        &snap,
        "--config",
        config.to_str().unwrap(),
        "explain",
        &pod,
    ]);
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_inert("config error", &err);
    assert!(
        err.contains(r"bad\x1b]0;pwned\x07\x1b[2J: unknown field"),
        "{err}"
    );

    // Pod names listed by a lookup that failed.
    let out = run(&["--snapshot", &snap, "explain", "default/nope"]);
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_inert("lookup error", &err);
    assert!(err.contains(r"web\x1b]0;pwned\x07\x1b[2J"), "{err}");

    // A snapshot error naming the object.
    let bad = file(
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: \"x\\e]0;pwned\\a\", namespace: default}\nspec: 5\n",
    );
    let out = run(&["--snapshot", bad.to_str().unwrap(), "pods"]);
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_inert("snapshot error", &err);
    assert!(err.contains(r"x\x1b]0;pwned\x07"), "{err}");
}

/// The inspector's widgets drop control characters: the pod is listed, but no title
/// sequence of the snapshot's reaches the terminal.
#[test]
fn inspector_never_writes_the_snapshots_sequences() {
    let snap = snapshot();
    let mut s = support::pty::Session::start(&["--snapshot", &snap]);
    s.wait_for("default/web]0;pwned[2J");
    s.keys("q");
    assert!(s.wait_exit().success());
    s.wait_output_end();
    let raw = s.raw_output();
    let title = TITLE.as_bytes();
    assert!(
        !raw.windows(title.len()).any(|w| w == title),
        "the title sequence reached the terminal"
    );
}

/// Line feeds in names, taints and the reasons quoting them, bidi controls and
/// zero-width characters: the pod is rejected by one node's taint and fits the other.
const SPOOF_SNAPSHOT: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: "tainted\nFAKE LINE node"
  labels: {kubernetes.io/hostname: tainted}
spec:
  taints:
  - {key: "k\nFAKE LINE taint", value: "v\u202Eevil\u200B", effect: NoSchedule}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: "ok\u2066\u200D\uFEFF"
  labels: {kubernetes.io/hostname: ok}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: "web\nFAKE LINE pod\u202E\x9b"
  namespace: default
  uid: u1
  creationTimestamp: "2026-01-10T09:00:00Z"
spec:
  schedulerName: "default-scheduler"
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: "1"}}
status: {phase: Pending}
"#;

/// No line of human output starts with text a value injected, and every bidi or
/// zero-width character is spelled out; `-o json` escapes them and the C1 controls.
#[test]
fn line_feeds_bidi_and_zero_width_characters_never_spoof_output() {
    let snap = file("spoof.yaml", SPOOF_SNAPSHOT).display().to_string();
    let pod = "default/web\nFAKE LINE pod\u{202e}\u{9b}";
    let spoofing = [
        '\u{202e}', '\u{2066}', '\u{200b}', '\u{200d}', '\u{feff}', '\u{9b}',
    ];
    for args in [
        vec!["pods"],
        vec!["explain", pod],
        vec!["explain", pod, "--all-filters"],
        vec!["simulate"],
        vec!["capacity", pod],
    ] {
        let out = run(&[&["--snapshot", &snap][..], &args].concat());
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(out.status.success(), "{args:?}: {text}");
        assert!(
            !text.lines().any(|l| l.starts_with("FAKE LINE")),
            "{args:?}: a value added a line:\n{text}"
        );
        assert!(!text.contains(spoofing), "{args:?}: raw:\n{text}");
        assert!(
            text.contains(r"web\nFAKE LINE pod\u{202e}\u{9b}"),
            "{args:?}:\n{text}"
        );
    }
    let out = run(&["--snapshot", &snap, "explain", pod]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains(r"ok\u{2066}\u{200d}\u{feff}"), "{text}");
    assert!(text.contains(r"k\nFAKE LINE taint"), "{text}");
    assert!(text.contains(r"v\u{202e}evil\u{200b}"), "{text}");

    for args in [
        vec!["explain", pod, "-o", "json"],
        vec!["simulate", "-o", "json"],
        vec!["capacity", pod, "-o", "json"],
    ] {
        let out = run(&[&["--snapshot", &snap][..], &args].concat());
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(out.status.success(), "{args:?}: {text}");
        assert!(!text.contains(spoofing), "{args:?}: raw:\n{text}");
        assert!(
            text.contains(r"web\nFAKE LINE pod\u202e\u009b"),
            "{args:?}:\n{text}"
        );
        // The values themselves are exact.
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        if args[0] == "explain" {
            assert_eq!(v["pod"], "default/web\nFAKE LINE pod\u{202e}\u{9b}");
        }
    }

    // An error message quoting a name.
    let out = run(&["--snapshot", &snap, "explain", "default/nope\u{202e}"]);
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains(spoofing), "{err}");
    assert!(err.contains(r"nope\u{202e}"), "{err}");
}
