//! The binary, run as a user would: exit codes, messages, output formats.

mod support {
    pub mod bin;
}

use std::path::PathBuf;

use support::bin::{bin, demo, root, run, s, stderr, stdout};

fn tmp_file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedscope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

#[test]
fn explain_table_on_the_demo_names_the_verdict() {
    let o = run(&["explain", "--snapshot", s(&demo()), "shop/web-7d9f-5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Pod        shop/web-7d9f-5"), "{out}");
    assert!(out.contains("schedulable"), "{out}");
    assert!(out.contains("Scores"), "{out}");
}

/// `--timings`: one `phase: value ms` line per phase on stderr, in phase order, then
/// the peak memory (Linux); the answer on stdout is the one without the flag.
#[test]
fn explain_timings_prints_each_phase_on_stderr() {
    let demo = demo();
    let args = ["explain", "--snapshot", s(&demo), "shop/web-7d9f-5"];
    let plain = run(&args);
    let o = run(&[&args[..], &["--timings"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&plain));
    assert!(stderr(&plain).is_empty(), "{}", stderr(&plain));
    let err = stderr(&o);
    let mut lines: Vec<&str> = err.lines().collect();
    if cfg!(target_os = "linux") {
        let peak = lines.pop().expect("a peak memory line");
        let mb = peak
            .strip_prefix("peak memory: ")
            .and_then(|v| v.strip_suffix(" MB"));
        assert!(
            mb.is_some_and(|v| v.parse::<f64>().is_ok_and(|v| v > 0.0)),
            "{peak}"
        );
    }
    let phases: Vec<&str> = lines
        .into_iter()
        .map(|l| {
            let (phase, value) = l.split_once(": ").unwrap_or_else(|| panic!("{l}"));
            let number = value.strip_suffix(" ms").unwrap_or_else(|| panic!("{l}"));
            assert!(number.parse::<f64>().is_ok_and(|v| v >= 0.0), "{l}");
            phase
        })
        .collect();
    assert_eq!(
        phases,
        [
            "read",
            "decode",
            "model",
            "load",
            "scheduling cycle",
            "PreFilter",
            "Filter",
            "Score",
            "answer",
            "render"
        ]
    );
}

#[test]
fn explain_unschedulable_pod_prints_the_fit_error() {
    let o = run(&["explain", "-s", s(&demo()), "ml/trainer-big"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("0/12 nodes are available:"), "{out}");
    assert!(out.contains("Insufficient nvidia.com/gpu"), "{out}");
}

/// Each rejection group of the table has its exact causes under it (the taints, the
/// labels, the resource numbers), and JSON carries them as the group's `details`.
#[test]
fn explain_names_the_exact_cause_under_each_rejection_group() {
    let o = run(&["explain", "-s", s(&demo()), "batch/quarterly-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for cause in [
        "untolerated taint ",
        "nodeSelector ",
        "node cordoned (spec.unschedulable)",
        "cpu: needs ",
    ] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(cause))
            .unwrap_or_else(|| panic!("a line starting {cause:?}:\n{out}"));
        assert!(
            line.starts_with("          "),
            "indented under its group: {line}"
        );
    }
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "batch/quarterly-report",
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid json");
    for g in v["rejection_groups"].as_array().expect("groups") {
        let details = g["details"].as_array().expect("details on every group");
        assert!(!details.is_empty(), "a cause for {g}");
        // Every node of the group is under at least one cause.
        for n in g["nodes"].as_array().unwrap() {
            assert!(
                details
                    .iter()
                    .any(|d| d["nodes"].as_array().unwrap().contains(n)),
                "{n} has a cause in {g}"
            );
        }
    }
}

/// The acceptance of issue 13: on every demo snapshot, for every pod `pods` lists as
/// pending, each rejection group carries its specific cause in JSON (every node of
/// the group under one) and in the table (a cause line under each group), and so do
/// the all-filters groups.
#[test]
fn every_rejection_group_of_every_pending_demo_pod_carries_a_cause() {
    let mut pods_checked = 0;
    let mut groups_checked = 0;
    for snapshot in ["demo-cluster.yaml", "dra-demo.yaml", "gang-demo.yaml"] {
        let path = root().join("examples").join(snapshot);
        let o = run(&["pods", "-s", s(&path)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let listing = stdout(&o);
        let pending: Vec<&str> = listing
            .lines()
            .skip(1)
            .filter(|l| l.trim_end().ends_with(" pending"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert!(
            !pending.is_empty(),
            "pending pods in {snapshot}:\n{listing}"
        );
        for pod in pending {
            pods_checked += 1;
            let o = run(&["explain", "-s", s(&path), pod, "-o", "json"]);
            assert!(o.status.success(), "{pod}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid json");
            for key in ["rejection_groups", "all_filter_groups"] {
                for g in v[key].as_array().expect("groups") {
                    if g["plugin"].is_null() {
                        continue; // outside the PreFilter node subset: no plugin said no
                    }
                    groups_checked += 1;
                    let details = g["details"].as_array().expect("details on every group");
                    for n in g["nodes"].as_array().unwrap() {
                        assert!(
                            details
                                .iter()
                                .any(|d| d["nodes"].as_array().unwrap().contains(n)),
                            "{snapshot} {pod} {key}: node {n} has no cause in {g}"
                        );
                    }
                }
            }
            // The table: a cause line right under each rejection group's line.
            let o = run(&["explain", "-s", s(&path), pod, "--all-filters"]);
            assert!(o.status.success(), "{pod}: {}", stderr(&o));
            let out = stdout(&o);
            let lines: Vec<&str> = out.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let is_group = l.len() > 10
                    && l[..8].trim().parse::<usize>().is_ok()
                    && l.contains('[')
                    && !l.starts_with("          ");
                if is_group && (l.contains("Unschedulable") || l.contains("Error")) {
                    let next = lines.get(i + 1).copied().unwrap_or_default();
                    assert!(
                        next.starts_with("          ") && !next.trim().is_empty(),
                        "{snapshot} {pod}: no cause under\n{l}\n{out}"
                    );
                }
            }
        }
    }
    assert!(pods_checked >= 20, "{pods_checked} pending pods");
    assert!(groups_checked >= 40, "{groups_checked} groups");
}

/// Paper cut 5: `--all-filters` changes the table, adding every plugin's verdicts
/// beyond each node's first, with their causes, and the nodes several plugins reject.
#[test]
fn all_filters_table_differs_from_the_plain_table_with_the_extra_verdicts() {
    let demo = demo();
    let args = ["explain", "-s", s(&demo), "batch/quarterly-report"];
    let plain = stdout(&run(&args));
    let o = run(&[&args[..], &["--all-filters"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let all = stdout(&o);
    assert_ne!(all, plain, "--all-filters changes the table");
    // Everything else is the plain table: the section is an addition.
    let start = all.find("\nAll filters").expect("the all-filters section");
    let end = start + 2 + all[start + 1..].find("\n\n").expect("its end");
    assert_eq!(format!("{}{}", &all[..start], &all[end..]), plain);
    assert!(
        all.contains("(22 rejections, 10 beyond each node's first)"),
        "{all}"
    );
    // gen-a1 is first rejected by NodeAffinity; its NodeResourcesFit verdict and its
    // cause show only with --all-filters.
    assert!(
        all.contains("\n    gen-a1    NodeAffinity, NodeResourcesFit\n"),
        "{all}"
    );
    assert!(
        all.contains("cpu: needs 6, free 3500m of 8  (1 node)"),
        "{all}"
    );
    assert!(!plain.contains("free 3500m"), "{plain}");
}

/// A profile's own arguments can be the cause: its `addedAffinity` (the
/// scheduler-enforced affinity) and its default spread constraints for a pod with
/// none; the causes say they are the profile's.
#[test]
fn causes_name_the_profiles_added_affinity_and_default_constraints() {
    let config = tmp_file(
        "causes-profile.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: topology.kubernetes.io/zone, operator: NotIn, values: [eu-west-1c]}
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
",
    );
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "--config",
        s(&config),
        "shop/web-7d9f-5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for line in [
        "          profile default-scheduler addedAffinity (NodeAffinity args): topology.kubernetes.io/zone NotIn [eu-west-1c]: node has topology.kubernetes.io/zone=eu-west-1c  (2 nodes)\n",
        "          default constraint of profile default-scheduler (the pod has none): topologyKey kubernetes.io/hostname (maxSkew 1, pods app=web, pod-template-hash=7d9f): kubernetes.io/hostname=gen-b1 would have 3 matching pods, skew 3 over the minimum 0  (1 node)\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
}

#[test]
fn explain_json_matches_the_fidelity_schema() {
    let dir = root().join("tests/fidelity/h01-basic-least-allocated");
    let o = run(&[
        "explain",
        "--snapshot",
        s(&dir.join("snapshot.yaml")),
        "default/pending",
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid json");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    for key in [
        "pod",
        "nodes_total",
        "prefilter",
        "filter",
        "filter_all",
        "scores",
        "total",
        "best_nodes",
        "fit_error",
        "postfilter",
    ] {
        assert_eq!(v[key], expected[key], "{key}");
    }
}

#[test]
fn explain_yaml_is_parseable() {
    let o = run(&["explain", "-s", s(&demo()), "shop/web-7d9f-5", "-o", "yaml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("pod: shop/web-7d9f-5"), "{text}");
}

#[test]
fn missing_pod_is_a_clear_error_with_exit_2() {
    let o = run(&["explain", "-s", s(&demo()), "shop/nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("\"shop/nope\" is not in the snapshot"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_snapshot_file_is_a_clear_error() {
    let o = run(&["explain", "-s", "/nonexistent/cluster.yaml", "a/b"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("/nonexistent/cluster.yaml"), "{err}");
}

#[test]
fn malformed_yaml_names_the_file() {
    let p = tmp_file(
        "bad.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: [\n",
    );
    let o = run(&["explain", "-s", s(&p), "default/x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("bad.yaml"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn unknown_quantity_names_object_and_field() {
    let p = tmp_file(
        "qty.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: 2 cores}\n",
    );
    let o = run(&["explain", "-s", s(&p), "default/x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("n1"), "{err}");
    assert!(err.contains("cpu"), "{err}");
}

#[test]
fn invalid_config_gives_the_upstream_message() {
    let cfg = tmp_file(
        "cfg.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n      enabled:\n      - name: NoSuchPlugin\n",
    );
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "-c",
        s(&cfg),
        "shop/web-7d9f-5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("NoSuchPlugin"), "{err}");
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn pods_lists_pending_pods_in_queue_order() {
    let o = run(&["pods", "-s", s(&demo())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let high = out.find("batch/quarterly-report").expect("listed");
    let normal = out.find("shop/web-7d9f-5").expect("listed");
    assert!(high < normal, "higher priority first:\n{out}");
    assert!(out.contains("gated"), "{out}");
}

/// `--verdicts`: each pending pod's replay, in the list: the node `explain` names, or
/// the largest rejection group of its Filter table (with the preemption nominee).
#[test]
fn pods_verdicts_name_the_node_or_the_main_reason() {
    let plain = stdout(&run(&["pods", "-s", s(&demo())]));
    assert!(!plain.contains("VERDICT"), "off by default:\n{plain}");
    let o = run(&["pods", "-s", s(&demo()), "--verdicts"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |pod: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{pod} ")))
            .unwrap_or_else(|| panic!("{pod} listed:\n{out}"))
            .to_string()
    };
    assert!(
        out.lines().next().unwrap().ends_with("STATE    VERDICT"),
        "{out}"
    );
    let cases = [
        (
            "batch/quarterly-report",
            "pending  unschedulable: 5 node(s) had untolerated taint(s); preemption would nominate gen-b1",
        ),
        ("shop/web-7d9f-5", "pending  schedulable on gen-c1"),
        (
            "default/migration-job",
            "gated    gated by SchedulingGates: waiting for scheduling gates: [example.com/approval]",
        ),
    ];
    for (pod, verdict) in cases {
        assert!(line(pod).ends_with(verdict), "{pod}: {}", line(pod));
    }
    // The same answers as `explain`: its verdict line, its biggest group.
    let explain = |pod: &str| stdout(&run(&["explain", "-s", s(&demo()), pod]));
    assert!(explain("shop/web-7d9f-5").contains("Verdict    schedulable on gen-c1 "));
    assert!(
        explain("batch/quarterly-report")
            .contains("       5  TaintToleration              UnschedulableAndUnresolvable   node(s) had untolerated taint(s)")
    );
    // The queue order is kept.
    let plain_pods: Vec<&str> = plain
        .lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let pods: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(pods, plain_pods);
}

/// `--group-by reason`: one section per main reason with its count, the most pods
/// first; every pending pod in exactly one section; `-n` narrows them.
#[test]
fn pods_group_by_reason_prints_one_section_per_reason() {
    let o = run(&["pods", "-s", s(&demo()), "--group-by", "reason"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // (header, rows under it)
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for l in out.lines().skip(1).filter(|l| !l.is_empty()) {
        match l.strip_prefix("  ") {
            Some(row) => sections
                .last_mut()
                .expect("a section")
                .1
                .push(row.to_string()),
            None => sections.push((l.to_string(), Vec::new())),
        }
    }
    let headers: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        headers,
        [
            "6 pods · schedulable",
            "1 pod · Insufficient cpu, Insufficient memory, Insufficient nvidia.com/gpu",
            "1 pod · node(s) didn't match Pod's node affinity/selector",
            "1 pod · node(s) had untolerated taint(s)",
            "1 pod · waiting for scheduling gates: [example.com/approval]",
        ],
        "{out}"
    );
    for (header, rows) in &sections {
        let n: usize = header.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(rows.len(), n, "{header}");
    }
    let listed: usize = sections.iter().map(|(_, r)| r.len()).sum();
    let plain = stdout(&run(&["pods", "-s", s(&demo())]));
    assert_eq!(listed, plain.lines().count() - 1, "every pod once");
    assert!(sections[3].1[0].starts_with("batch/quarterly-report "));

    let shop = stdout(&run(&[
        "pods",
        "-s",
        s(&demo()),
        "-n",
        "shop",
        "--group-by",
        "reason",
    ]));
    let headers: Vec<&str> = shop
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    assert_eq!(headers, ["4 pods · schedulable"], "{shop}");
}

#[test]
fn simulate_is_deterministic_and_settles_every_pod() {
    let a = run(&["simulate", "-s", s(&demo()), "-o", "json"]);
    assert!(a.status.success(), "{}", stderr(&a));
    let b = run(&["simulate", "-s", s(&demo()), "-o", "json"]);
    assert_eq!(a.stdout, b.stdout, "same snapshot, same simulation");
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert!(v.to_string().contains("quarterly-report"));
    let text = stdout(&run(&["simulate", "-s", s(&demo())]));
    assert!(text.contains("bound to"), "{text}");
    assert!(text.contains("gated by SchedulingGates"), "{text}");
}

#[test]
fn pods_refuses_a_missing_config() {
    let o = run(&[
        "pods",
        "-s",
        s(&demo()),
        "--config",
        "/nonexistent/cfg.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("invalid scheduler configuration /nonexistent/cfg.yaml"),
        "{err}"
    );
    assert!(err.contains("cannot read the file"), "{err}");
}

#[test]
fn a_scheduler_configuration_given_as_snapshot_is_refused() {
    let cfg = tmp_file(
        "ksc-as-snapshot.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
    );
    let o = run(&["pods", "-s", s(&cfg)]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("KubeSchedulerConfiguration: this is a scheduler configuration, not a cluster object; pass it with --config"),
        "{err}"
    );
}

/// A negative request (which made NodeResourcesFit score above 100 and the table
/// panic) is refused at load, in every output format, with the API server's message.
#[test]
fn negative_request_is_refused_in_every_format() {
    let snap = std::fs::read_to_string(
        root().join("tests/fidelity/h01-basic-least-allocated/snapshot.yaml"),
    )
    .unwrap();
    let neg = snap.replacen(
        "cpu: '1'\n        memory: 2Gi\nstatus:",
        "cpu: '-2'\n        memory: 2Gi\nstatus:",
        1,
    );
    assert_ne!(neg, snap, "the pending pod's request was found");
    let p = tmp_file("neg.yaml", &neg);
    for format in ["table", "json", "yaml"] {
        let o = run(&["explain", "-s", s(&p), "default/pending", "-o", format]);
        assert_eq!(o.status.code(), Some(2), "{format}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("Pod default/pending: field spec.containers[0].resources.requests.cpu: Invalid value: \"-2\": must be greater than or equal to 0"),
            "{format}: {err}"
        );
    }
}

#[test]
fn a_snapshot_directory_says_what_it_read_and_left_out_on_stderr() {
    let dir = root().join("tests/fixtures/dir");
    let o = run(&["pods", "--snapshot", s(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("read 5 files (") && err.contains("2 Node, 3 Pod, 1 PriorityClass"),
        "{err}"
    );
    assert!(
        err.contains("warning: left out 3 files holding no Kubernetes objects:")
            && err.contains("notes.yaml (no Kubernetes objects)")
            && err.contains("README.txt (not YAML or JSON)"),
        "{err}"
    );
    // The answer stays alone on stdout.
    assert!(stdout(&o).starts_with("POD "), "{}", stdout(&o));
    // A single file is read without a summary.
    let o = run(&["pods", "--snapshot", s(&demo())]);
    assert_eq!(stderr(&o), "");
}

#[test]
fn explaining_a_finished_pod_says_it_finished() {
    let dir = root().join("tests/fixtures/dir");
    let o = run(&["explain", "--snapshot", s(&dir), "default/done"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("error: pod default/done has finished (phase Succeeded); the scheduler does not place pods that ran to completion"),
        "{err}"
    );
    assert!(!err.contains("is not in the snapshot"), "{err}");
}

#[test]
fn namespace_flag_scopes_pods_and_bare_names_with_a_snapshot() {
    let o = run(&["pods", "-s", s(&demo()), "-n", "shop"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(!rows.is_empty(), "{out}");
    assert!(rows.iter().all(|r| r.starts_with("shop/")), "{out}");
    // A bare name is looked up in -n's namespace, as kubectl does.
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "-n",
        "batch",
        "quarterly-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("batch/quarterly-report"),
        "{}",
        stdout(&o)
    );
    // A full key ignores -n.
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "-n",
        "shop",
        "batch/quarterly-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn pods_table_stays_aligned_with_long_names() {
    let name = "a-very-long-pod-name-generated-by-a-controller-0123456789abcdef";
    let snap = tmp_file(
        "long-names.yaml",
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec: {{containers: [{{name: c, image: x}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: short, namespace: default}}\nspec: {{containers: [{{name: c, image: x}}]}}\n"
        ),
    );
    let o = run(&["pods", "-s", s(&snap)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let ends: Vec<usize> = out
        .lines()
        .skip(1)
        .map(|l| l.find("  default-scheduler").unwrap())
        .collect();
    assert_eq!(ends.len(), 2, "{out}");
    assert_eq!(ends[0], ends[1], "{out}");
    assert!(out.contains(&format!("default/{name} ")), "{out}");
}

#[test]
fn the_missing_pod_hint_is_a_command_that_works() {
    let o = run(&["explain", "-s", s(&demo()), "-n", "shop", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let hint = err
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in: {err}"));
    let words: Vec<&str> = hint.split(' ').collect();
    assert_eq!(words[..2], ["schedscope", "pods"], "{err}");
    let o = run(&words[1..]);
    assert!(o.status.success(), "{hint}: {}", stderr(&o));
    assert!(
        stdout(&o).contains("batch/quarterly-report"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn completions_and_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("explain") && out.contains("--snapshot"),
            "{shell}: {out}"
        );
    }
    let o = run(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(".ie \\n(.g .ds Aq") || out.contains(".TH schedscope"),
        "{out}"
    );
    assert!(out.contains("explain"), "{out}");
}

/// Paper cut 9: each subcommand's help lists only the options it uses: `--theme`
/// only where a terminal UI is drawn, `--snapshot` not for `snapshot save` (which
/// reads a live cluster).
#[test]
fn help_lists_only_the_options_a_subcommand_uses() {
    // The options listed (`  -s, --snapshot <PATH>  ...`), not mentions in prose.
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--help");
        let o = run(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let l = l.strip_prefix("-s, ").unwrap_or(l);
                l.starts_with("--")
                    .then(|| l.split_whitespace().next().unwrap_or("").to_string())
            })
            .collect::<Vec<String>>()
            .join(" ")
    };
    for cmd in [
        &["explain"][..],
        &["pods"],
        &["simulate"],
        &["snapshot", "save"],
        &["completions"],
        &["man"],
    ] {
        assert!(!help(cmd).contains("--theme"), "{cmd:?} lists --theme");
    }
    assert!(!help(&["snapshot", "save"]).contains("--snapshot"));
    for cmd in [&["explain"][..], &["pods"], &["simulate"]] {
        assert!(help(cmd).contains("--snapshot"), "{cmd:?} lacks --snapshot");
    }
    assert!(help(&["tui"]).contains("--theme"));
}

/// The commands the example files tell the reader to run, run as written.
#[test]
fn commands_in_example_headers_work() {
    let mut ran = 0;
    let mut files: Vec<_> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for line in text.lines() {
            // Commands are indented under the `#` (`#   schedscope ...`); prose is not.
            let Some(cmd) = line
                .strip_prefix("#  ")
                .map(str::trim_start)
                .and_then(|l| l.strip_prefix("schedscope "))
            else {
                continue;
            };
            let args: Vec<&str> = cmd.split_whitespace().collect();
            let o = bin().current_dir(root()).args(&args).output().unwrap();
            assert!(
                o.status.success(),
                "{}: `schedscope {cmd}`: {}",
                f.display(),
                stderr(&o)
            );
            ran += 1;
        }
    }
    assert!(ran >= 2, "commands found: {ran}");
}

/// Every `$ schedscope explain|capacity|pods ...` sample in the README and in the
/// pages of `docs/` is what the binary prints; a line `...` stands for lines left out
/// (any number, none too).
#[test]
fn readme_samples_are_current() {
    let mut files = vec![root().join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    let mut checked = 0;
    let mut files_with_samples = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let before = checked;
        let mut rest = text.as_str();
        while let Some(i) = rest.find("\n$ schedscope ") {
            let block = &rest[i + 3..];
            let end = block.find("\n```").expect("the sample block ends");
            let (cmd, shown) = block[..end].split_once('\n').unwrap();
            rest = &block[end..];
            let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
            if !["explain", "capacity", "pods"].contains(&args[0]) {
                continue;
            }
            let o = bin().current_dir(root()).args(&args).output().unwrap();
            assert!(o.status.success(), "{cmd}: {}", stderr(&o));
            let out = stdout(&o);
            assert!(
                matches_with_elisions(&out, shown),
                "{} sample of `{cmd}`:\n{shown}\n--- the binary prints:\n{out}",
                file.display()
            );
            checked += 1;
        }
        files_with_samples += usize::from(checked > before);
    }
    // The README held 7 samples before its reference moved to docs/, and an excerpt
    // was added at its top: fewer means a page with samples was not read.
    assert!(
        checked >= 8 && files_with_samples >= 3,
        "samples checked: {checked}, in {files_with_samples} files"
    );
}

/// `shown` is `out` with runs of lines replaced by `...` lines.
fn matches_with_elisions(out: &str, shown: &str) -> bool {
    let out: Vec<&str> = out.trim_end().lines().collect();
    let lines: Vec<&str> = shown.trim_end().lines().collect();
    let parts: Vec<&[&str]> = lines.split(|l| *l == "...").collect();
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        let fits = |start: usize| {
            out.len() >= start + part.len()
                && out[start..start + part.len()] == part[..]
                && (!last || start + part.len() == out.len())
        };
        let found = if i == 0 {
            fits(0).then_some(0)
        } else {
            (at..=out.len()).find(|&s| fits(s))
        };
        match found {
            Some(s) => at = s + part.len(),
            None => return false,
        }
    }
    true
}

#[test]
fn elided_samples_match_only_what_they_show() {
    let out = "a\nb\nc\nd\n";
    assert!(matches_with_elisions(out, "a\n...\nd"));
    assert!(matches_with_elisions(out, "a\nb\n...\nc\nd"));
    assert!(matches_with_elisions(out, "a\nb\nc\nd"));
    assert!(!matches_with_elisions(out, "a\n...\nc"));
    assert!(!matches_with_elisions(out, "b\n...\nd"));
    assert!(!matches_with_elisions(out, "a\n...\nx\nd"));
}

#[test]
fn snapshot_save_from_a_directory_reads_what_snapshot_reads() {
    let dir = root().join("tests/fixtures/dir");
    let o = run(&["snapshot", "save", "--from", s(&dir), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The nested must-gather pod is read (twice, as the files hold it twice); the
    // file without Kubernetes objects is not an error.
    assert_eq!(out.matches("name: cart").count(), 2, "{out}");
    assert!(!out.contains("team-a"), "{out}");
}

/// A snapshot of `n` identical nodes (the first `labelled` labelled `pick=yes`) and
/// one pending pod, selecting `pick=yes` when `select` is set.
fn identical_nodes(n: usize, labelled: usize, select: bool) -> PathBuf {
    let mut s = String::new();
    for i in 0..n {
        let label = if i < labelled { ", pick: \"yes\"" } else { "" };
        s.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i:03}, labels: {{kubernetes.io/hostname: node-{i:03}{label}}}}}\nstatus: {{allocatable: {{cpu: \"4\", memory: 8Gi, pods: \"110\"}}}}\n"
        ));
    }
    let selector = if select {
        "  nodeSelector: {pick: \"yes\"}\n"
    } else {
        ""
    };
    s.push_str(&format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n{selector}  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]\n"
    ));
    tmp_file(&format!("identical-{n}-{labelled}-{select}.yaml"), &s)
}

#[test]
fn long_tie_lists_are_cut_and_counted() {
    let snap = identical_nodes(30, 0, false);
    let o = run(&["explain", "-s", s(&snap), "default/p"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("shared by 30 nodes (node-000, node-001, node-002, node-003, node-004, node-005, node-006, node-007, and 22 more (all in -o json)); this replay picks node-000"),
        "{out}"
    );
    assert!(
        out.contains("  = tie for the best total: node-000, node-001, node-002, node-003, node-004, node-005, node-006, node-007, and 22 more (all in -o json). "),
        "{out}"
    );
    assert!(!out.contains("node-029,"), "{out}");
    let o = run(&["explain", "-s", s(&snap), "default/p", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["best_nodes"].as_array().unwrap().len(), 30);
}

#[test]
fn the_search_limit_note_appears_only_when_it_can_matter() {
    // 200 nodes: kube-scheduler looks for 100 feasible ones.
    let one = identical_nodes(200, 1, true);
    let out = stdout(&run(&["explain", "-s", s(&one), "default/p"]));
    assert!(out.contains("schedulable on node-000"), "{out}");
    assert!(
        !out.contains("the real pick may be another"),
        "one feasible node: {out}"
    );
    let all = identical_nodes(200, 200, true);
    let out = stdout(&run(&["explain", "-s", s(&all), "default/p"]));
    assert!(
        out.contains("kube-scheduler stops after 100 feasible nodes"),
        "{out}"
    );
}

#[test]
fn explaining_a_bound_pod_says_where_it_is_bound() {
    let o = run(&["explain", "-s", s(&demo()), "shop/web-7d9f-0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "\nBound      to gen-a1 now; replayed as if it were pending again\nVerdict    "
        ),
        "{out}"
    );
    let o = run(&["explain", "-s", s(&demo()), "shop/web-7d9f-0", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bound_to"], "gen-a1");
    // A pending pod has neither.
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "batch/quarterly-report",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("bound_to").is_none());
}

#[test]
fn all_filters_shows_every_plugins_answer_in_the_table() {
    let o = run(&[
        "explain",
        "-s",
        s(&demo()),
        "batch/quarterly-report",
        "--all-filters",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\nAll filters  every plugin's own answer on every node (22 rejections, 10 beyond each node's first)\n"),
        "{out}"
    );
    // NodeAffinity rejects 8 nodes, 4 of them first rejected by another plugin.
    assert!(out.contains("       8  NodeAffinity                 UnschedulableAndUnresolvable   node(s) didn't match Pod's node affinity/selector  [gen-a1, gen-a2, gen-a3, …]"), "{out}");
    let plain = stdout(&run(&[
        "explain",
        "-s",
        s(&demo()),
        "batch/quarterly-report",
    ]));
    assert!(!plain.contains("All filters"), "{plain}");
}

/// The pod's own needs come right under the verdict, one line per need it sets,
/// before the PreFilter line.
#[test]
fn explain_table_lists_the_pods_own_needs_under_the_verdict() {
    let o = run(&["explain", "--snapshot", s(&demo()), "ml/trainer-big"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let want = "\
Needs      requests     cpu 16, memory 128Gi, nvidia.com/gpu 4
           tolerations  nvidia.com/gpu:NoSchedule op=Exists
           priority     1000 (class research), preemptionPolicy Never
";
    let at = out.find(want).unwrap_or_else(|| panic!("{out}"));
    assert!(at > out.find("FitError").expect("fit error"), "{out}");
    assert!(at < out.find("PreFilter").expect("prefilter"), "{out}");

    // A gated pod: its gate is listed, though nothing else runs.
    let o = run(&["explain", "--snapshot", s(&demo()), "default/migration-job"]);
    let out = stdout(&o);
    assert!(
        out.contains("           scheduling gates  example.com/approval\n"),
        "{out}"
    );
}

/// JSON and YAML carry the same needs under a new `needs` key, every field present.
#[test]
fn explain_json_and_yaml_carry_the_needs() {
    let o = run(&["explain", "-s", s(&demo()), "shop/checkout", "-o", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid json");
    let n = &v["needs"];
    assert_eq!(
        n["requests"],
        serde_json::json!({"cpu": "1", "memory": "1Gi"})
    );
    assert_eq!(
        n["node_affinity"]["preferred"],
        serde_json::json!(["weight 50: topology.kubernetes.io/zone In [eu-west-1c]"])
    );
    assert_eq!(n["node_affinity"]["required"], serde_json::json!([]));
    assert_eq!(
        n["topology_spread_constraints"],
        serde_json::json!([
            "maxSkew 1, topologyKey topology.kubernetes.io/zone, DoNotSchedule, selector app=web"
        ])
    );
    assert_eq!(n["preemption_policy"], "PreemptLowerPriority");
    assert_eq!(n["scheduler_name"], "default-scheduler");
    assert_eq!(n["priority"], 0);
    assert!(n["priority_class"].is_null(), "{n}");

    let o = run(&["explain", "-s", s(&demo()), "db/postgres-1", "-o", "yaml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y: serde_json::Value = serde_saphyr::from_str(&stdout(&o)).expect("valid yaml");
    assert_eq!(
        y["needs"]["volumes"],
        serde_json::json!(["data: pvc data-postgres-1 (unbound, storageClass local-ssd)"])
    );
}

/// `snapshot save --from` reads YAML with the loader's own limits (issue 26 items
/// 4 and 13): more than 1,024 documents, which the parser's default budget refused,
/// and errors in the loader's words (file, document, line), not a parser snippet.
#[test]
fn save_from_reads_yaml_with_the_loaders_limits() {
    let mut text = String::new();
    for i in 0..1_100 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: '1'}}}}\n"
        ));
    }
    let f = tmp_file("many-docs.yaml", &text);
    let o = run(&["snapshot", "save", "--from", s(&f), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("kind: Node").count(), 1_100);
    let bad = tmp_file(
        "bad.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: [\n",
    );
    let o = run(&["snapshot", "save", "--from", s(&bad), "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("bad.yaml: document 2 (line "), "{e}");
}

/// Issue 25 item 2: a directory that also holds a scheduler configuration loads,
/// the configuration left out and named; a file that is no snapshot at all (a
/// README) says what was expected instead of the YAML parser's complaint.
#[test]
fn a_config_beside_a_dump_is_skipped_and_a_readme_is_not_a_snapshot() {
    let o = bin()
        .current_dir(root())
        .args(["pods", "-s", "examples/"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "examples/coscheduling-config.yaml (a scheduler configuration (pass it with --config))"
        ),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .current_dir(root())
        .args(["pods", "-s", "README.md"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("README.md: not a snapshot (not YAML or JSON at line ")
            && e.contains("expected Kubernetes objects as printed by `kubectl get"),
        "{e}"
    );
    let f = tmp_file("plain.yaml", "hello: world\n");
    let e = stderr(&run(&["pods", "-s", s(&f)]));
    assert!(
        e.contains("not a snapshot (it names no `kind` anywhere)"),
        "{e}"
    );
}
