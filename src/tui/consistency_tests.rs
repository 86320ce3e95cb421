//! The `explain` table and the inspector draw one trace from the same presentation
//! model (`crate::report`): they must state the same rejection groups with the same
//! counts, the same ranks and the same ties. Rendered for real: the table as
//! `explain` prints it, the inspector on a ratatui `TestBackend`.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::fixtures::{engine_init, t0};
use super::waiting::ManualClock;

/// The demo cluster with two more GPU nodes like gpu-c1 (same image) but empty, so
/// `ml/notebook` (rejected by several plugins for several reasons) ties between them
/// at the top.
fn demo_with_twin_nodes() -> crate::model::Cluster {
    let demo = std::fs::read_to_string("examples/demo-cluster.yaml").expect("demo snapshot");
    let twin = |name: &str| {
        format!(
            "---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels:
    kubernetes.io/hostname: {name}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    topology.kubernetes.io/zone: eu-west-1c
    topology.kubernetes.io/region: eu-west-1
    pool: gpu
    nvidia.com/gpu.product: A100
spec:
  taints:
  - key: nvidia.com/gpu
    value: present
    effect: NoSchedule
status:
  capacity: {{cpu: '32', memory: 256Gi, pods: '110', nvidia.com/gpu: '2'}}
  allocatable: {{cpu: '32', memory: 256Gi, pods: '110', nvidia.com/gpu: '2'}}
  conditions:
  - type: Ready
    status: 'True'
  images:
  - names:
    - registry.example.com/ml/pytorch:2.4
    sizeBytes: 4500000000
"
        )
    };
    let text = format!("{demo}\n{}{}", twin("gpu-x1"), twin("gpu-x2"));
    crate::source::load_snapshot_str(&text, "demo+twins")
        .expect("snapshot loads")
        .cluster
}

fn app(cluster: crate::model::Cluster) -> App {
    App::new(engine_init(
        cluster,
        "snapshot demo+twins",
        Arc::new(ManualClock::new(t0())),
    ))
}

fn settle(app: &mut App) {
    while let Some(job) = app.take_job() {
        let (k, t, v) = job.run_with_view();
        app.trace_ready(k, t, v);
    }
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        let code = if c == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
        settle(app);
    }
}

fn screen(app: &mut App, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

/// `(count, plugin, reason)` of the table's rejection groups.
fn table_groups(table: &str) -> Vec<(usize, String, String)> {
    let filter = table
        .split("\nFilter ")
        .nth(1)
        .expect("a Filter section")
        .split("\n\n")
        .next()
        .expect("its lines");
    filter
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NODES"))
        .skip(1)
        .filter(|l| !l.starts_with(crate::render::table::CAUSE_INDENT))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let count = f[0].parse().expect("a count");
            let plugin = f[1].to_string();
            // After the code: the reason, then `  [examples]`.
            let after_code = l.split_once(f[2]).expect("after the code").1;
            let reason = after_code
                .trim_start()
                .rsplit_once("  [")
                .expect("examples")
                .0
                .to_string();
            (count, plugin, reason)
        })
        .collect()
}

/// The cause lines under each of the table's rejection groups, in group order.
fn table_causes(table: &str) -> Vec<Vec<String>> {
    let filter = table.split("\nFilter ").nth(1).expect("a Filter section");
    let mut out: Vec<Vec<String>> = Vec::new();
    for l in filter
        .split("\n\n")
        .next()
        .expect("its lines")
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NODES"))
        .skip(1)
    {
        match l.strip_prefix(crate::render::table::CAUSE_INDENT) {
            Some(c) => out.last_mut().expect("a group first").push(c.to_string()),
            None => out.push(Vec::new()),
        }
    }
    out
}

/// The lines under each group of the inspector's filter summary (up to a blank line).
fn tui_causes(lines: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut open = false;
    for l in lines {
        let Some(right) = l.split('┃').nth(1) else {
            continue;
        };
        // A group row starts with its node count (the legend line has marks too).
        let row_with = |mark: &str| {
            right.split_once(mark).is_some_and(|(head, _)| {
                // The selected row starts with `›`, apart from its count or not.
                head.trim_start_matches('›')
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.replace(',', "").parse::<usize>().is_ok())
            })
        };
        let is_group = row_with(" ✗ ");
        if row_with(" ✓ ") {
            // The feasible nodes' row: no causes under it.
            open = false;
        } else if is_group {
            out.push(Vec::new());
            open = true;
        } else if open && !right.trim().is_empty() {
            out.last_mut()
                .expect("a group")
                .push(right.trim().to_string());
        } else {
            open = false;
        }
    }
    out
}

/// `node → rank` of the table's score rows, and the tie line's nodes.
fn table_ranks(table: &str) -> (Vec<(String, usize)>, Vec<String>) {
    let scores = table.split("\nScores ").nth(1).expect("a Scores section");
    let ranks = scores
        .lines()
        .skip(2)
        .take_while(|l| {
            l.split_whitespace()
                .nth(usize::from(!l.starts_with(' ')))
                .is_some_and(|r| r.parse::<usize>().is_ok())
        })
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i = usize::from(!l.starts_with(' '));
            (f[i + 1].to_string(), f[i].parse().expect("rank"))
        })
        .collect();
    let ties = scores
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("= tie for the best total: "))
        .map(|l| {
            l.split_once('.')
                .expect("sentence")
                .0
                .split(", ")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    (ranks, ties)
}

#[test]
fn explain_table_and_inspector_state_the_same_groups_ranks_and_ties() {
    let cluster = demo_with_twin_nodes();
    let mut app = app(cluster.clone());
    settle(&mut app);
    keys(&mut app, ":pod ml/notebook\n");
    assert_eq!(app.selected_pod_key(), Some("ml/notebook"));

    // The table, from the same cluster and configuration through `explain`.
    let config = crate::engine::SchedulerConfig::defaults();
    let (trace, view) = replay(&cluster, &config, "ml/notebook");
    let table = crate::render::table::render_view(
        &trace,
        &view,
        &crate::render::table::TableOptions::default(),
    );
    let groups = table_groups(&table);
    let (ranks, ties) = table_ranks(&table);
    assert!(groups.len() >= 3, "several rejection groups:\n{table}");
    assert_eq!(ties, ["gpu-x1", "gpu-x2"], "a tie at the top:\n{table}");
    assert_eq!(
        groups.iter().map(|g| g.0).sum::<usize>(),
        trace.filter.iter().filter(|v| !v.feasible).count(),
        "each rejected node in one group:\n{table}"
    );

    // JSON carries the same groups and ranks.
    let json = crate::render::json::to_json_view(&trace, &view);
    let json_groups: Vec<(usize, String, String)> = json["rejection_groups"]
        .as_array()
        .expect("rejection_groups")
        .iter()
        .map(|g| {
            (
                g["nodes"].as_array().expect("nodes").len(),
                g["plugin"].as_str().expect("plugin").to_string(),
                g["reason"].as_str().expect("reason").to_string(),
            )
        })
        .collect();
    assert_eq!(json_groups, groups);
    // Each group's cause lines: the table shows the most shared of JSON's details.
    let causes = table_causes(&table);
    assert!(
        causes.iter().filter(|c| !c.is_empty()).count() >= 2,
        "cause lines under several groups:\n{table}"
    );
    for (want, shown) in json_causes(&json, trace.filter_all.is_some())
        .iter()
        .zip(&causes)
    {
        assert_eq!(want, shown, "JSON details against the table:\n{table}");
    }
    for (node, rank) in &ranks {
        assert_eq!(json["ranks"][node.as_str()], *rank, "JSON rank of {node}");
    }

    // The inspector's filter summary: one row per group (count, share bar, plugin,
    // mark, reason), the rejected ones in the table's order.
    keys(&mut app, "2v");
    let lines = screen(&mut app, 220, 40);
    let shown: Vec<(usize, String, String)> = lines
        .iter()
        .filter_map(|l| {
            let right = l.split('┃').nth(1)?;
            let (head, reason) = right.split_once(" ✗ ")?;
            let words: Vec<&str> = head.split_whitespace().collect();
            let count = words.first()?.trim_start_matches('›').replace(',', "");
            Some((
                count.parse().ok()?,
                words.last()?.to_string(),
                reason.trim_end().to_string(),
            ))
        })
        .collect();
    assert_eq!(shown, groups, "{}", lines.join("\n"));
    assert_eq!(tui_causes(&lines), causes, "{}", lines.join("\n"));

    // The inspector's scores: each node's rank, and the tie named in the header.
    keys(&mut app, "3");
    let lines = screen(&mut app, 220, 40);
    for (node, rank) in &ranks {
        let row = lines
            .iter()
            .find(|l| {
                l.split_whitespace().any(|w| w == node.as_str())
                    && !l.contains("tied:")
                    && !l.contains("chosen with")
            })
            .unwrap_or_else(|| panic!("{node} row\n{}", lines.join("\n")));
        let words: Vec<&str> = row.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| *w == node.as_str())
            .expect("node");
        let tui_rank: usize = words[..at]
            .iter()
            .rev()
            .find_map(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("a rank before {node}: {row}"));
        assert_eq!(tui_rank, *rank, "rank of {node}\n{}", lines.join("\n"));
    }
    let head = lines
        .iter()
        .find(|l| l.contains("chosen with"))
        .expect("score header");
    let chosen = trace.selected_node.clone().expect("a node is chosen");
    assert!(head.contains(&format!("★ {chosen} chosen")), "{head}");
    for other in ties.iter().filter(|n| **n != chosen) {
        assert!(head.contains(&format!("tied: {other}")), "{head}");
    }
}

/// The causes added for InterPodAffinity and VolumeBinding are the same lines in the
/// table, JSON's `details` and the inspector's filter summary, and every rejection
/// group of these pods has some.
#[test]
fn affinity_and_volume_causes_agree_in_table_json_and_inspector() {
    let cluster = demo_with_twin_nodes();
    let config = crate::engine::SchedulerConfig::defaults();
    for (key, plugin) in [
        ("shop/cache-3", "InterPodAffinity"),
        ("db/postgres-1", "VolumeBinding"),
    ] {
        let (trace, view) = replay(&cluster, &config, key);
        let table = crate::render::table::render_view(
            &trace,
            &view,
            &crate::render::table::TableOptions::default(),
        );
        let groups = table_groups(&table);
        let causes = table_causes(&table);
        assert!(
            groups.iter().any(|g| g.1 == plugin),
            "{key}: a {plugin} group\n{table}"
        );
        assert!(
            causes.iter().all(|c| !c.is_empty()),
            "{key}: causes under every group\n{table}"
        );
        let json = crate::render::json::to_json_view(&trace, &view);
        assert_eq!(
            json_causes(&json, trace.filter_all.is_some()),
            causes,
            "{key}: JSON against the table\n{table}"
        );

        let mut app = app(cluster.clone());
        settle(&mut app);
        keys(&mut app, &format!(":pod {key}\n"));
        assert_eq!(app.selected_pod_key(), Some(key));
        keys(&mut app, "2v");
        let lines = screen(&mut app, 400, 40);
        assert_eq!(tui_causes(&lines), causes, "{key}\n{}", lines.join("\n"));
    }
}

/// `key` explained as the CLI does, with the view (the rejections' causes included)
/// every output draws.
fn replay(
    cluster: &crate::model::Cluster,
    config: &crate::engine::SchedulerConfig,
    key: &str,
) -> (crate::engine::trace::Trace, crate::report::TraceView) {
    assert!(cluster.pod(key).is_some(), "{key} is in the cluster");
    let trace = crate::explain::explain(
        cluster,
        config,
        key,
        &crate::engine::cycle::CycleOptions::default(),
    )
    .expect("explained");
    let view = crate::report::TraceView::of_replay(&trace, cluster, &config.profiles);
    (trace, view)
}

/// Each JSON rejection group's cause lines as the table shows them: the details
/// [`crate::report::causes::shown`] draws, then `(+N more)`.
fn json_causes(json: &serde_json::Value, every: bool) -> Vec<Vec<String>> {
    use crate::report::causes::{line_text, more_line, shown};
    json["rejection_groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            let details: Vec<(&str, usize)> = g["details"]
                .as_array()
                .expect("details")
                .iter()
                .map(|d| {
                    (
                        d["cause"].as_str().expect("cause"),
                        d["nodes"].as_array().expect("nodes").len(),
                    )
                })
                .collect();
            let nodes = g["nodes"].as_array().map_or(0, Vec::len);
            let drawn = shown(&details, nodes, every);
            drawn
                .iter()
                .map(|&i| line_text(details[i].0, details[i].1))
                .chain(
                    (details.len() > drawn.len()).then(|| more_line(details.len() - drawn.len())),
                )
                .collect()
        })
        .collect()
}

/// `(label, entry)` rows of the table's Needs section: a label column, then entries
/// (a continuation row has no label and belongs to the one above).
fn table_needs(table: &str) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut in_section = false;
    for line in table.lines() {
        if line.starts_with("Needs ") {
            in_section = true;
        } else if !line.starts_with("           ") {
            in_section = false;
        }
        if in_section {
            rows.push(line[11..].to_string());
        }
    }
    label_rows(&rows)
}

/// Rows of a label column: the entry starts after the label's padding, at the same
/// column on every row.
fn label_rows(rows: &[String]) -> Vec<(String, String)> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let label_end = first.find("  ").expect("a label column");
    let column = label_end + first[label_end..].len() - first[label_end..].trim_start().len();
    let mut out: Vec<(String, String)> = Vec::new();
    for r in rows {
        let chars: Vec<char> = r.chars().collect();
        let label: String = chars[..column.min(chars.len())].iter().collect();
        let entry: String = chars[column.min(chars.len())..].iter().collect();
        let label = match label.trim() {
            "" => out.last().map(|(l, _)| l.clone()).unwrap_or_default(),
            l => l.to_string(),
        };
        out.push((label, entry.trim_end().to_string()));
    }
    out
}

/// The same rows from the `needs` JSON object, as its fields name them.
fn json_needs(n: &serde_json::Value) -> Vec<(String, String)> {
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .expect("array")
            .iter()
            .map(|s| s.as_str().expect("string").to_string())
            .collect()
    };
    let amounts = |v: &serde_json::Value| -> Vec<String> {
        v.as_object()
            .expect("object")
            .iter()
            .map(|(k, a)| format!("{k} {}", a.as_str().expect("amount")))
            .collect()
    };
    let mut out = Vec::new();
    let mut row = |label: &str, entry: String| out.push((label.to_string(), entry));
    let requests = amounts(&n["requests"]);
    if !requests.is_empty() {
        let overhead = amounts(&n["overhead"]);
        let mut entry = requests.join(", ");
        if !overhead.is_empty() {
            entry.push_str(&format!(" (incl. overhead {})", overhead.join(", ")));
        }
        row("requests", entry);
    }
    let selector = strings(&n["node_selector"]);
    if !selector.is_empty() {
        row("nodeSelector", selector.join(", "));
    }
    for (label, key) in [
        ("node affinity", "node_affinity"),
        ("pod affinity", "pod_affinity"),
        ("pod anti-affinity", "pod_anti_affinity"),
    ] {
        for e in strings(&n[key]["required"]) {
            row(label, format!("required: {e}"));
        }
        for e in strings(&n[key]["preferred"]) {
            row(label, format!("preferred {e}"));
        }
    }
    for e in strings(&n["tolerations"]) {
        row("tolerations", e);
    }
    for e in strings(&n["topology_spread_constraints"]) {
        row("topology spread", e);
    }
    let ports = strings(&n["host_ports"]);
    if !ports.is_empty() {
        row("host ports", ports.join(", "));
    }
    for e in strings(&n["volumes"]) {
        row("volumes", e);
    }
    for e in strings(&n["resource_claims"]) {
        row("resource claims", e);
    }
    let priority = n["priority"].as_i64().expect("priority");
    let policy = n["preemption_policy"].as_str().expect("policy");
    if priority != 0 || !n["priority_class"].is_null() || policy == "Never" {
        let class = n["priority_class"]
            .as_str()
            .map(|c| format!(" (class {c})"))
            .unwrap_or_default();
        row(
            "priority",
            format!("{priority}{class}, preemptionPolicy {policy}"),
        );
    }
    let gates = strings(&n["scheduling_gates"]);
    if !gates.is_empty() {
        row("scheduling gates", gates.join(", "));
    }
    let scheduler = n["scheduler_name"].as_str().expect("scheduler");
    if scheduler != "default-scheduler" {
        row("schedulerName", scheduler.to_string());
    }
    out
}

/// Requests in a fixed order: JSON keeps them as an object, sorted by name.
fn sorted_requests(mut rows: Vec<(String, String)>) -> Vec<(String, String)> {
    for (label, entry) in &mut rows {
        if label == "requests" {
            let (amounts, overhead) = match entry.split_once(" (incl. overhead ") {
                Some((a, o)) => (a.to_string(), Some(o.trim_end_matches(')').to_string())),
                None => (entry.clone(), None),
            };
            let sort = |s: &str| {
                let mut v: Vec<&str> = s.split(", ").collect();
                v.sort();
                v.join(", ")
            };
            *entry = match overhead {
                Some(o) => format!("{} (incl. overhead {})", sort(&amounts), sort(&o)),
                None => sort(&amounts),
            };
        }
    }
    rows
}

#[test]
fn explain_table_json_and_inspector_state_the_same_needs() {
    let cluster = demo_with_twin_nodes();
    let mut app = app(cluster.clone());
    settle(&mut app);
    let config = crate::engine::SchedulerConfig::defaults();
    let mut labels_seen = std::collections::BTreeSet::new();
    for key in [
        "ml/trainer-big",
        "shop/checkout",
        "shop/cache-3",
        "shop/ingress-canary",
        "db/postgres-1",
        "default/migration-job",
        "ops/log-shipper-highmem",
    ] {
        let (trace, _) = replay(&cluster, &config, key);
        let answer = crate::report::Answer::of_replay(&trace, &cluster, &config.profiles);
        let table = crate::render::table::render_answer(
            &trace,
            &answer,
            &crate::render::table::TableOptions::default(),
        );
        let from_table = table_needs(&table);
        assert!(from_table.len() >= 2, "{key}: a Needs section:\n{table}");
        if key == "ml/trainer-big" {
            let row = |l: &str, e: &str| (l.to_string(), e.to_string());
            assert_eq!(
                from_table,
                [
                    row("requests", "cpu 16, memory 128Gi, nvidia.com/gpu 4"),
                    row("tolerations", "nvidia.com/gpu:NoSchedule op=Exists"),
                    row("priority", "1000 (class research), preemptionPolicy Never"),
                ],
                "the table's rows as read here"
            );
        }
        labels_seen.extend(from_table.iter().map(|(l, _)| l.clone()));

        let json = crate::render::json::answer_json(&trace, &answer)["needs"].clone();
        assert_eq!(
            sorted_requests(json_needs(&json)),
            sorted_requests(from_table.clone()),
            "{key}: JSON against the table:\n{table}"
        );

        keys(&mut app, &format!(":pod {key}\n0"));
        assert_eq!(app.selected_pod_key(), Some(key));
        let lines = screen(&mut app, 220, 40);
        let rows: Vec<String> = lines
            .iter()
            .skip(2)
            .filter_map(|l| l.split('┃').nth(1).map(str::to_string))
            // The needs, not the what-if edits listed under them.
            .take_while(|r| !r.starts_with("what-if:"))
            .filter(|r| !r.trim().is_empty())
            .collect();
        assert_eq!(
            label_rows(&rows),
            from_table,
            "{key}: the inspector against the table:\n{}",
            lines.join("\n")
        );
    }
    // The pods chosen cover most kinds of need.
    for label in [
        "requests",
        "nodeSelector",
        "node affinity",
        "pod anti-affinity",
        "tolerations",
        "topology spread",
        "host ports",
        "volumes",
        "priority",
        "scheduling gates",
    ] {
        assert!(labels_seen.contains(label), "{label}: {labels_seen:?}");
    }
}

/// What an output says first about a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Said {
    Schedulable,
    Unschedulable,
    NotReplayed,
    Gated,
    Error,
}

fn said_by_headline(h: &crate::report::Headline) -> Said {
    use crate::report::Headline;
    match h {
        Headline::Schedulable { .. } => Said::Schedulable,
        Headline::Preempting { .. } | Headline::Unschedulable => Said::Unschedulable,
        Headline::NotReplayed { .. } => Said::NotReplayed,
        Headline::Gated { .. } => Said::Gated,
        Headline::Error { .. } => Said::Error,
    }
}

/// The `pods --verdicts` VERDICT column, read back.
fn said_by_pods_label(label: &str) -> Option<Said> {
    [
        ("schedulable on ", Said::Schedulable),
        ("unschedulable", Said::Unschedulable),
        ("not replayed: ", Said::NotReplayed),
        ("gated by ", Said::Gated),
        ("error: ", Said::Error),
    ]
    .into_iter()
    .find(|(p, _)| label.starts_with(p))
    .map(|(_, s)| s)
}

/// The inspector's pods pane verdict cell, read back by its symbol.
fn said_by_symbol(symbol: &str) -> Option<Said> {
    match symbol {
        "✓" => Some(Said::Schedulable),
        "✗" => Some(Said::Unschedulable),
        "?" => Some(Said::NotReplayed),
        "⊘" => Some(Said::Gated),
        "!" => Some(Said::Error),
        _ => None,
    }
}

/// `(key, VERDICT)` of each `schedscope pods --verdicts` row, in order.
fn cli_pods_rows(text: &str) -> Vec<(String, String)> {
    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    let at = header.find("VERDICT").expect("a VERDICT column");
    lines
        .map(|l| {
            let key = l.split_whitespace().next().unwrap_or_default().to_string();
            let verdict: String = l.chars().skip(header[..at].chars().count()).collect();
            (key, verdict)
        })
        .collect()
}

/// The demo's pending pods, and a DRA pod whose claims cannot be read from this
/// source (a live role without ResourceClaims): DynamicResources refuses it at
/// PreFilter, which is no verdict on the pod.
fn headline_clusters() -> Vec<crate::model::Cluster> {
    let demo = crate::source::load_snapshot(std::path::Path::new("examples/demo-cluster.yaml"))
        .expect("demo snapshot")
        .cluster;
    let mut dra = crate::source::load_snapshot(std::path::Path::new(
        "tests/fidelity/d01-single-gpu-fits/snapshot.yaml",
    ))
    .expect("DRA snapshot")
    .cluster;
    dra.dra_objects_known = false;
    dra.unreadable_kinds
        .insert("ResourceClaim".into(), "forbidden".into());
    vec![demo, dra]
}

/// The headline of every pending pod, and the pods list: the `explain` table, the
/// Pipeline pane, `pods --verdicts` and the inspector's pods pane say the same thing
/// of each pod (schedulable, unschedulable, not replayed, gated, error), in the same
/// order of pods, including a pod that was not replayed.
#[test]
fn headline_and_pods_list_agree_in_table_pipeline_cli_list_and_inspector_list() {
    let config = crate::engine::SchedulerConfig::defaults();
    let mut seen = std::collections::BTreeSet::new();
    for cluster in headline_clusters() {
        // `schedscope pods --verdicts`, as cli::pods_text prints it.
        let (listing, verdicts) =
            crate::explain::pods_listing(&cluster, &config.profiles, None, Some(t0()));
        let cli = crate::render::pods::render(&listing, verdicts.as_deref(), false);
        let rows = cli_pods_rows(&cli);
        assert!(!rows.is_empty(), "{cli}");
        let mut app = app(cluster.clone());
        app.take_verdicts_sync();
        settle(&mut app);
        let list = screen(&mut app, 220, 80);
        let mut last_line = 0;
        for (key, label) in &rows {
            let label = label.trim();
            let from_cli = said_by_pods_label(label);
            // The explain table and the Pipeline pane, for the same pod.
            let (trace, _) = replay(&cluster, &config, key);
            let answer = crate::report::Answer::of_replay(&trace, &cluster, &config.profiles);
            let said = said_by_headline(&answer.headline);
            let table = crate::render::table::render_answer(
                &trace,
                &answer,
                &crate::render::table::TableOptions::default(),
            );
            let verdict_line = format!("Verdict    {}", answer.headline.sentence());
            assert!(table.contains(&verdict_line), "{key}: {table}");
            assert_eq!(
                from_cli,
                Some(said),
                "{key}: pods says {label:?}, explain {verdict_line:?}"
            );
            // The inspector's pods pane: the pod's row, in the CLI's order, with the
            // same verdict.
            let (ns, name) = key.split_once('/').expect("a key");
            let (at, row) = list
                .iter()
                .enumerate()
                .find(|(_, l)| {
                    // The namespace in a column of its own, or the key in one.
                    (l.contains(&format!(" {ns} ")) && l.contains(&format!(" {name} ")))
                        || l.split(['┃', '│'])
                            .nth(1)
                            .is_some_and(|pane| pane.contains(&format!(" {key} ")))
                })
                .unwrap_or_else(|| panic!("{key} in the pods pane:\n{}", list.join("\n")));
            assert!(at > last_line, "{key}: listed in the CLI's order");
            last_line = at;
            // The pods pane is the first bordered pane; its verdict cell's symbol is
            // the last on the row (the state's, some alike, comes first).
            let pane = row.split(['┃', '│']).nth(1).unwrap_or(row);
            let verdict = pane.split_whitespace().rev().find_map(said_by_symbol);
            assert_eq!(verdict, Some(said), "{key}: {row}");
            // The Pipeline pane's first line.
            keys(&mut app, &format!(":pod {key}\n"));
            let pipeline = screen(&mut app, 220, 40);
            let first = format!("{} {}", answer.headline.symbol(), answer.headline.short());
            let first: String = first.chars().take(60).collect();
            assert!(
                pipeline.iter().any(|l| l.contains(&first)),
                "{key}: {first:?} in\n{}",
                pipeline.join("\n")
            );
            seen.insert(said);
        }
    }
    for said in [
        Said::Schedulable,
        Said::Unschedulable,
        Said::NotReplayed,
        Said::Gated,
    ] {
        assert!(seen.contains(&said), "{said:?} among {seen:?}");
    }
}
