//! Text of any length reaches the outputs without a panic: names of 70,000
//! characters (past the 65,535 a formatter width may be), and 20,000 control
//! characters, each spelled out as a four-character escape. Every human output
//! caps what one column shows (cut in the middle, with the length said), so columns
//! stay readable and no width handed to a formatter is unbounded. Issue 26, item 1.

mod support {
    pub mod bin;
    pub mod sources;
}

use std::path::PathBuf;

use support::bin::{run, s, stderr, stdout};

fn snapshot(name: &str, node: &str, scheduler: &str, label: &str) -> PathBuf {
    let text = format!(
        r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: "{node}"
    labels: {{kubernetes.io/hostname: n, "{label}": v}}
  spec:
    taints: [{{key: "{label}", value: x, effect: NoSchedule}}]
  status:
    allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {{name: small, labels: {{kubernetes.io/hostname: small}}}}
  status:
    allocatable: {{cpu: "1", memory: 1Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: "{name}", namespace: default}}
  spec:
    schedulerName: "{scheduler}"
    nodeSelector: {{"{label}": v}}
    containers:
    - name: c
      image: x
      resources: {{requests: {{cpu: "2"}}}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: plain, namespace: default}}
  spec:
    containers:
    - name: c
      image: x
      resources: {{requests: {{cpu: "8"}}}}
"#
    );
    let dir = std::env::temp_dir().join(format!("schedscope-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{}.yaml", text.len()));
    std::fs::write(&p, text).unwrap();
    p
}

/// Every command a person reads, on the snapshot: none may panic (exit 101).
fn every_output(snap: &std::path::Path, pods: &[&str]) {
    let mut runs: Vec<Vec<String>> = vec![
        vec!["pods".into(), "--verdicts".into()],
        vec!["pods".into(), "--group-by".into(), "reason".into()],
        vec!["simulate".into()],
    ];
    for pod in pods {
        let p = format!("default/{pod}");
        runs.push(vec!["explain".into(), p.clone()]);
        runs.push(vec!["explain".into(), p.clone(), "--all-filters".into()]);
        runs.push(vec!["explain".into(), p.clone(), "--suggest".into()]);
        runs.push(vec!["capacity".into(), p.clone()]);
    }
    for args in runs {
        let mut all = vec!["-s", s(snap)];
        all.extend(args.iter().map(String::as_str));
        let o = run(&all);
        let code = o.status.code();
        assert!(
            code == Some(0) || code == Some(2),
            "{:?} exited {code:?}: {}",
            &args,
            stderr(&o).chars().take(2000).collect::<String>()
        );
        // The tables cap their columns: no line carries a whole name. (`explain`
        // and `capacity` name the pod and nodes in full in their sentences.)
        if args[0] == "pods" || args[0] == "simulate" {
            let longest = stdout(&o).lines().map(|l| l.chars().count()).max();
            assert!(
                longest.unwrap_or(0) < 4_000,
                "{args:?}: a line of {longest:?} chars"
            );
        }
    }
}

#[test]
fn names_of_70000_characters_do_not_panic_and_are_capped() {
    let long = "a".repeat(70_000);
    let node = format!("n-{}", "b".repeat(70_000));
    let snap = snapshot(&long, &node, &"s".repeat(70_000), "k");
    every_output(&snap, &[&long, "plain"]);
    let snap = snapshot(&long, &node, "default-scheduler", &"l".repeat(70_000));
    every_output(&snap, &[&long, "plain"]);
}

#[test]
fn control_characters_spelled_out_do_not_panic() {
    // 20,000 escapes of four characters each: 80,000 once spelled out.
    let written = "\\x01".repeat(20_000);
    let name = format!("p{}", "\u{1}".repeat(20_000));
    let snap = snapshot(
        &format!("p{written}"),
        &format!("n{written}"),
        "default-scheduler",
        "k",
    );
    every_output(&snap, &[&name, "plain"]);
}

/// The class, not the instance: no format string in the sources takes its width
/// from a variable (`{:<w$}`), which panics past 65,535; `report::format::pad` and
/// `pad_left` write the padding out. Zero-padded numbers (`{:0w$}`, digits of a
/// quantity) are bounded and allowed.
#[test]
fn no_format_width_comes_from_a_variable() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let files = ["src", "crates"]
        .iter()
        .flat_map(|d| support::sources::rust_files(&root.join(d)));
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("$}") {
                let spec = &rest[..i];
                let open = spec.rfind('{').map(|o| &spec[o..]).unwrap_or("");
                if !open.contains(":0") {
                    found.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                }
                rest = &rest[i + 2..];
            }
        }
    }
    assert!(
        found.is_empty(),
        "widths from variables:\n{}",
        found.join("\n")
    );
}
