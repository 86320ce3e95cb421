//! View models: what the panes show, derived once when their inputs change (never on
//! redraw). Pure data, no terminal.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::engine::status::Code;
use crate::engine::trace::{Outcome, PluginResult, Trace};
use crate::model::{Cluster, Pod};

use super::action::Tab;
use super::waiting::WaitingPod;

/// One verdict mark. The symbol carries the meaning; colour only repeats it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mark {
    /// The first rejecting filter of a node (the one kube-scheduler reports).
    RejectFirst,
    Reject,
    Error,
    Wait,
    Skip,
    Pass,
    NotRun,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::RejectFirst | Mark::Reject => "✗",
            Mark::Error => "!",
            Mark::Wait => "◷",
            Mark::Skip => "∅",
            Mark::Pass => "✓",
            Mark::NotRun => "·",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Mark::RejectFirst => "rejects (first)",
            Mark::Reject => "rejects",
            Mark::Error => "error",
            Mark::Wait => "wait",
            Mark::Skip => "skip",
            Mark::Pass => "pass",
            Mark::NotRun => "not run",
        }
    }

    pub fn of_code(code: Code) -> Mark {
        match code {
            Code::Success => Mark::Pass,
            Code::Skip => Mark::Skip,
            Code::Wait => Mark::Wait,
            Code::Error => Mark::Error,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending => {
                Mark::Reject
            }
        }
    }
}

/// The state column of the pods list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PodState {
    Pending,
    Gated,
    Unschedulable,
    Nominated,
    Waiting,
    Bound,
}

impl PodState {
    pub fn label(self) -> &'static str {
        match self {
            PodState::Pending => "pending",
            PodState::Gated => "gated",
            PodState::Unschedulable => "unschedulable",
            PodState::Nominated => "nominated",
            PodState::Waiting => "waiting",
            PodState::Bound => "bound",
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            PodState::Pending => "○",
            PodState::Gated => "⊘",
            PodState::Unschedulable => "✗",
            PodState::Nominated => "→",
            PodState::Waiting => "◷",
            PodState::Bound => "●",
        }
    }
}

/// One row of the pods list. Text (key, reason) is made at draw time for visible rows
/// only, so rebuilding the list at 150,000 pods allocates nothing per pod.
#[derive(Clone, Debug)]
pub struct PodRow {
    pub pod: Arc<Pod>,
    pub state: PodState,
}

impl PodRow {
    pub fn key(&self) -> String {
        self.pod.key()
    }
    /// Whether this is the pod `namespace/name`, without allocating.
    pub fn is(&self, key: &str) -> bool {
        is_key(&self.pod, key)
    }
}

pub fn is_key(pod: &Pod, key: &str) -> bool {
    key.len() == pod.namespace.len() + 1 + pod.name.len()
        && key.starts_with(pod.namespace.as_str())
        && key.as_bytes().get(pod.namespace.len()) == Some(&b'/')
        && key.ends_with(pod.name.as_str())
}

/// `0/5 nodes are available: 3 Insufficient cpu.` → `3 Insufficient cpu.`
pub fn short_fit_message(msg: &str) -> &str {
    if let Some(rest) = msg.strip_prefix("0/")
        && let Some(i) = rest.find(" nodes are available: ")
    {
        return &rest[i + " nodes are available: ".len()..];
    }
    msg
}

pub fn pod_state(pod: &Pod, waiting: &[WaitingPod]) -> PodState {
    if waiting.iter().any(|w| is_key(pod, &w.pod)) {
        PodState::Waiting
    } else if pod.is_bound() {
        PodState::Bound
    } else if !pod.scheduling_gates.is_empty() {
        PodState::Gated
    } else if pod.nominated_node_name.is_some() {
        PodState::Nominated
    } else if pod
        .not_scheduled
        .as_ref()
        .is_some_and(|(r, _)| r == "Unschedulable" || r == "SchedulerError")
    {
        PodState::Unschedulable
    } else {
        PodState::Pending
    }
}

/// The short reason of the list (a waiting pod's countdown is added at draw time).
pub fn pod_reason(pod: &Pod, state: PodState, waiting: &[WaitingPod]) -> String {
    match state {
        PodState::Waiting => waiting
            .iter()
            .find(|w| is_key(pod, &w.pod))
            .map(|w| format!("Permit on {}", w.node))
            .unwrap_or_default(),
        PodState::Bound => format!("on {}", pod.node_name.as_deref().unwrap_or_default()),
        PodState::Gated => format!(
            "waiting for scheduling gates: [{}]",
            pod.scheduling_gates.join(" ")
        ),
        PodState::Nominated => format!(
            "nominated to {}",
            pod.nominated_node_name.as_deref().unwrap_or_default()
        ),
        PodState::Unschedulable => match &pod.not_scheduled {
            Some((reason, msg)) => {
                let short = short_fit_message(msg);
                if short.is_empty() { reason } else { short }.to_string()
            }
            None => String::new(),
        },
        PodState::Pending => String::new(),
    }
}

/// Case-insensitive substring test; `needle` is already lowercase.
pub fn contains_ci(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if hay.is_ascii() && needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        return h
            .windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b));
    }
    hay.to_lowercase().contains(needle)
}

/// PrioritySort order (priority, then age) for pending pods; bound pods after them.
/// Queue timestamps are not in a snapshot, so creation time stands for them. The sort
/// is stable over the cluster's key order, so ties stay in key order.
pub fn queue_order(a: &PodRow, b: &PodRow) -> std::cmp::Ordering {
    let bound = |r: &PodRow| r.state == PodState::Bound;
    bound(a).cmp(&bound(b)).then_with(|| {
        if bound(a) {
            return std::cmp::Ordering::Equal;
        }
        b.pod.priority.cmp(&a.pod.priority).then_with(|| {
            match (a.pod.creation_timestamp, b.pod.creation_timestamp) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        })
    })
}

pub struct PodQuery<'a> {
    pub all: bool,
    pub namespace: Option<&'a str>,
    pub filter: &'a str,
    /// Bound pods listed even without `all` (a simulation's pods stay in view as they
    /// bind).
    pub keep: Option<&'a std::collections::BTreeSet<String>>,
}

/// The pods list: pending pods (or all), in queue order, narrowed by namespace and
/// filter text (matched case-insensitively against key, state and reason).
pub fn pod_rows(cluster: &Cluster, waiting: &[WaitingPod], q: &PodQuery) -> Vec<PodRow> {
    let needle = q.filter.to_lowercase();
    let mut rows: Vec<PodRow> = cluster
        .pods()
        .filter(|p| q.namespace.is_none_or(|ns| p.namespace == ns))
        .filter_map(|p| {
            let state = pod_state(p, waiting);
            if !q.all && state == PodState::Bound && !q.keep.is_some_and(|k| k.contains(&p.key())) {
                return None;
            }
            if !needle.is_empty() {
                let hit = contains_ci(&p.name, &needle)
                    || contains_ci(&p.namespace, &needle)
                    || (needle.contains('/') && contains_ci(&p.key(), &needle))
                    || state.label().contains(&needle)
                    || contains_ci(&pod_reason(p, state, waiting), &needle);
                if !hit {
                    return None;
                }
            }
            Some(PodRow {
                pod: p.clone(),
                state,
            })
        })
        .collect();
    rows.sort_by(queue_order);
    rows
}

/// A node's row of the filter matrix.
#[derive(Clone, Debug)]
pub struct FilterRow {
    pub node: String,
    pub feasible: bool,
    /// Excluded before Filter (PreFilter node subset).
    pub excluded: bool,
    pub plugin: Option<String>,
    pub reasons: String,
    /// Index into `trace.filter_all`, when present.
    pub all: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupKind {
    Feasible,
    Rejected,
    Excluded,
}

/// Nodes sharing one rejection reason (a node with two reasons counts in both, as in
/// the FitError histogram).
#[derive(Clone, Debug)]
pub struct Group {
    pub kind: GroupKind,
    pub plugin: Option<String>,
    pub reason: String,
    /// Rows of the filter matrix.
    pub rows: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct StagePlugin {
    pub name: String,
    pub mark: Mark,
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct Stage {
    pub name: &'static str,
    pub mark: Mark,
    pub summary: String,
    pub plugins: Vec<StagePlugin>,
    /// The tab that explains this stage in detail.
    pub tab: Option<Tab>,
}

/// Everything the trace panes need, computed once per trace.
pub struct TraceView {
    pub plugins: Vec<String>,
    pub abbrevs: Vec<String>,
    pub rows: Vec<FilterRow>,
    /// `rows.len() × plugins.len()`, row-major.
    pub cells: Vec<Mark>,
    pub row_of: HashMap<String, usize>,
    pub summary: Vec<Group>,
    /// Per filter plugin: nodes it rejected first.
    pub first_rejects: Vec<usize>,
    pub feasible_of: HashMap<String, usize>,
    /// Competition rank (1, 1, 3) per feasible index.
    pub ranks: Vec<usize>,
    /// Feasible indices, best total first (ties in evaluation order).
    pub rank_order: Vec<usize>,
    pub max_total: i64,
    pub stages: Vec<Stage>,
    /// The "0/N nodes are available: ..." line, or "k/N nodes are available".
    pub headline: String,
}

impl TraceView {
    pub fn cell(&self, row: usize, plugin: usize) -> Mark {
        self.cells
            .get(row * self.plugins.len() + plugin)
            .copied()
            .unwrap_or(Mark::NotRun)
    }

    /// The plugin's own answer on a row's node, when the trace has all-filters data.
    pub fn cell_reasons<'t>(
        &self,
        trace: &'t Trace,
        row: usize,
        plugin: usize,
    ) -> Option<&'t PluginResult> {
        let all = self.rows.get(row)?.all?;
        let name = self.plugins.get(plugin)?;
        trace
            .filter_all
            .as_ref()?
            .get(all)?
            .results
            .iter()
            .find(|r| &r.plugin == name)
    }

    pub fn new(trace: &Trace) -> TraceView {
        let plugins = trace.filter_plugins.clone();
        let abbrevs = abbreviations(&plugins);
        let np = plugins.len();
        let prefilter_skipped: Vec<bool> = plugins
            .iter()
            .map(|p| {
                trace
                    .pre_filter
                    .plugins
                    .iter()
                    .any(|r| &r.plugin == p && r.code == Code::Skip)
            })
            .collect();
        let all_index: HashMap<&str, usize> = trace
            .filter_all
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, v)| (v.node.as_str(), i))
            .collect();

        let mut rows = Vec::with_capacity(trace.filter.len());
        let mut cells = Vec::with_capacity(trace.filter.len() * np);
        let mut first_rejects = vec![0usize; np];
        for v in &trace.filter {
            let excluded = !v.feasible && v.plugin.is_none();
            let all = all_index.get(v.node.as_str()).copied();
            let first = v
                .plugin
                .as_ref()
                .and_then(|p| plugins.iter().position(|x| x == p));
            if let Some(i) = first {
                first_rejects[i] += 1;
            }
            for (j, p) in plugins.iter().enumerate() {
                let mark = if excluded {
                    Mark::NotRun
                } else if let Some(ai) = all {
                    let res = trace
                        .filter_all
                        .as_ref()
                        .and_then(|fa| fa.get(ai))
                        .and_then(|a| a.results.iter().find(|r| &r.plugin == p));
                    match res {
                        // Success entries may be omitted in all-filters mode.
                        None => Mark::Pass,
                        Some(r) => match Mark::of_code(r.code) {
                            Mark::Reject if first == Some(j) => Mark::RejectFirst,
                            m => m,
                        },
                    }
                } else if prefilter_skipped[j] {
                    Mark::Skip
                } else {
                    match first {
                        Some(f) if j < f => Mark::Pass,
                        Some(f) if j == f => Mark::RejectFirst,
                        Some(_) => Mark::NotRun,
                        None if v.feasible => Mark::Pass,
                        None => Mark::NotRun,
                    }
                };
                cells.push(mark);
            }
            rows.push(FilterRow {
                node: v.node.clone(),
                feasible: v.feasible,
                excluded,
                plugin: v.plugin.clone(),
                reasons: v.reasons.join(", "),
                all,
            });
        }
        let row_of = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node.clone(), i))
            .collect();

        let summary = summarize(trace, &rows);

        let feasible_of: HashMap<String, usize> = trace
            .feasible
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let mut rank_order: Vec<usize> = (0..trace.feasible.len()).collect();
        let total = |i: usize| trace.totals.get(i).copied().unwrap_or(0);
        rank_order.sort_by(|a, b| total(*b).cmp(&total(*a)).then(a.cmp(b)));
        let mut ranks = vec![0; trace.feasible.len()];
        for (pos, &i) in rank_order.iter().enumerate() {
            ranks[i] = if pos > 0 && total(rank_order[pos - 1]) == total(i) {
                ranks[rank_order[pos - 1]]
            } else {
                pos + 1
            };
        }
        let max_total = rank_order.first().map(|&i| total(i)).unwrap_or(0);

        let headline = match (&trace.fit_error, &trace.outcome) {
            (Some(e), _) => e.clone(),
            (None, Outcome::Gated { plugin, message }) => {
                format!("not queued: {plugin} says {message}")
            }
            (None, Outcome::Error { message }) => format!("cycle error: {message}"),
            _ => format!(
                "{}/{} nodes are available",
                trace.feasible.len(),
                trace.nodes_total
            ),
        };

        let mut view = TraceView {
            plugins,
            abbrevs,
            rows,
            cells,
            row_of,
            summary,
            first_rejects,
            feasible_of,
            ranks,
            rank_order,
            max_total,
            stages: Vec::new(),
            headline,
        };
        view.stages = stages(trace, &view);
        view
    }
}

/// Short column headers: the capitals of a CamelCase name (`NodeResourcesFit` → `NRF`),
/// made unique with a digit.
pub fn abbreviations(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = names
        .iter()
        .map(|n| {
            let caps: String = n.chars().filter(|c| c.is_ascii_uppercase()).collect();
            if caps.is_empty() {
                n.chars().take(3).collect()
            } else {
                caps
            }
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for a in &mut out {
        let c = seen.entry(a.clone()).or_insert(0);
        *c += 1;
        if *c > 1 {
            a.push_str(&c.to_string());
        }
    }
    out
}

fn summarize(trace: &Trace, rows: &[FilterRow]) -> Vec<Group> {
    let mut groups: BTreeMap<(u8, Option<String>, String), Vec<u32>> = BTreeMap::new();
    for (i, (r, v)) in rows.iter().zip(&trace.filter).enumerate() {
        if r.feasible {
            groups
                .entry((0, None, "feasible".into()))
                .or_default()
                .push(i as u32);
        } else if r.excluded {
            let reason = if v.reasons.is_empty() {
                "not evaluated: outside the PreFilter node subset".to_string()
            } else {
                v.reasons.join(", ")
            };
            groups.entry((2, None, reason)).or_default().push(i as u32);
        } else if v.reasons.is_empty() {
            groups
                .entry((1, r.plugin.clone(), String::new()))
                .or_default()
                .push(i as u32);
        } else {
            for reason in &v.reasons {
                groups
                    .entry((1, r.plugin.clone(), reason.clone()))
                    .or_default()
                    .push(i as u32);
            }
        }
    }
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|((k, plugin, reason), rows)| Group {
            kind: match k {
                0 => GroupKind::Feasible,
                1 => GroupKind::Rejected,
                _ => GroupKind::Excluded,
            },
            plugin,
            reason,
            rows,
        })
        .collect();
    // Biggest groups first; the map's order breaks ties deterministically.
    out.sort_by_key(|g| std::cmp::Reverse(g.rows.len()));
    out
}

fn result_plugins(results: &[PluginResult]) -> Vec<StagePlugin> {
    results
        .iter()
        .map(|r| StagePlugin {
            name: r.plugin.clone(),
            mark: Mark::of_code(r.code),
            detail: r.reasons.join(", "),
        })
        .collect()
}

fn phase_mark(plugins: &[StagePlugin]) -> Mark {
    if plugins.is_empty() {
        return Mark::NotRun;
    }
    let worst = plugins.iter().map(|p| p.mark).min().unwrap_or(Mark::Pass);
    match worst {
        Mark::Skip if plugins.iter().all(|p| p.mark == Mark::Skip) => Mark::Skip,
        Mark::Skip | Mark::NotRun => Mark::Pass,
        m => m,
    }
}

fn stages(trace: &Trace, view: &TraceView) -> Vec<Stage> {
    let gated = matches!(trace.outcome, Outcome::Gated { .. });
    let mut out = Vec::new();

    let pe = result_plugins(&trace.pre_enqueue);
    out.push(Stage {
        name: "PreEnqueue",
        mark: if gated {
            Mark::Reject
        } else {
            phase_mark(&pe).min(Mark::Pass)
        },
        summary: match &trace.outcome {
            Outcome::Gated { plugin, message } => format!("held by {plugin}: {message}"),
            _ if pe.is_empty() => "no PreEnqueue plugins".into(),
            _ => "admitted to the scheduling queue".into(),
        },
        plugins: pe,
        tab: None,
    });

    let qs: Vec<StagePlugin> = trace
        .queue_sort
        .iter()
        .map(|p| StagePlugin {
            name: p.clone(),
            mark: if gated { Mark::NotRun } else { Mark::Pass },
            detail: "orders the scheduling queue".into(),
        })
        .collect();
    out.push(Stage {
        name: "QueueSort",
        mark: if gated { Mark::NotRun } else { Mark::Pass },
        summary: format!("priority {}, then time in queue", trace.priority),
        plugins: qs,
        tab: None,
    });

    let pf = &trace.pre_filter;
    let pf_plugins = result_plugins(&pf.plugins);
    let pf_rejected = pf
        .code
        .is_some_and(|c| c != Code::Success && c != Code::Skip);
    out.push(Stage {
        name: "PreFilter",
        mark: match pf.code {
            None => Mark::NotRun,
            Some(c) => Mark::of_code(c),
        },
        summary: match (pf.code, &pf.node_subset) {
            (None, _) => "not reached".into(),
            (Some(_), _) if pf_rejected => format!(
                "{} stopped the cycle: {}",
                pf.plugin.as_deref().unwrap_or("a plugin"),
                pf.reasons.join(", ")
            ),
            (Some(_), Some(sub)) => format!(
                "nodes restricted to {} by {}",
                sub.len(),
                pf.subsets
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some(_), None) => "all nodes go on to Filter".into(),
        },
        plugins: pf_plugins,
        tab: None,
    });

    let filter_ran = pf.code.is_some() && !pf_rejected && !gated;
    let filter_plugins: Vec<StagePlugin> = if filter_ran {
        view.plugins
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let skipped = pf
                    .plugins
                    .iter()
                    .any(|r| &r.plugin == p && r.code == Code::Skip);
                let n = view.first_rejects[j];
                StagePlugin {
                    name: p.clone(),
                    mark: if skipped {
                        Mark::Skip
                    } else if n > 0 {
                        Mark::Reject
                    } else {
                        Mark::Pass
                    },
                    detail: if skipped {
                        "skipped (PreFilter returned Skip)".into()
                    } else if n > 0 {
                        format!("first to reject {n} node{}", plural(n))
                    } else {
                        String::new()
                    },
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut filter_summary = format!(
        "{}/{} nodes feasible",
        trace.feasible.len(),
        trace.nodes_total
    );
    if let Some((n, ok)) = &trace.nominated_node {
        filter_summary.push_str(&format!(
            "; nominated node {n} {}",
            if *ok {
                "passed every filter, so only it was evaluated"
            } else {
                "did not fit, so every node was evaluated"
            }
        ));
    }
    out.push(Stage {
        name: "Filter",
        mark: if !filter_ran {
            Mark::NotRun
        } else if trace.feasible.is_empty() {
            Mark::Reject
        } else {
            Mark::Pass
        },
        summary: if filter_ran {
            filter_summary
        } else {
            "not reached".into()
        },
        plugins: filter_plugins,
        tab: Some(Tab::Filters),
    });

    let post = trace.post_filter.as_ref();
    out.push(Stage {
        name: "PostFilter",
        mark: match post {
            None => Mark::NotRun,
            Some(p) => match p.code {
                Some(Code::Success) if p.nominated_node.is_some() => Mark::Pass,
                Some(c) => Mark::of_code(c),
                None => Mark::Reject,
            },
        },
        summary: match post {
            None if filter_ran && trace.feasible.is_empty() => "did not run".into(),
            None => "runs only when no node is feasible".into(),
            Some(p) => match &p.nominated_node {
                Some(n) => format!(
                    "preemption nominates {n}, evicting {} pod{}",
                    p.victims.len(),
                    plural(p.victims.len())
                ),
                None if p.message.is_empty() => "no node can be made feasible".into(),
                None => p.message.clone(),
            },
        },
        plugins: post.map(|p| result_plugins(&p.plugins)).unwrap_or_default(),
        tab: Some(Tab::Preemption),
    });

    let scored = !trace.feasible.is_empty();
    let ps = result_plugins(&trace.pre_score);
    out.push(Stage {
        name: "PreScore",
        mark: if scored {
            phase_mark(&ps)
        } else {
            Mark::NotRun
        },
        summary: if scored {
            String::new()
        } else {
            "not reached".into()
        },
        plugins: ps,
        tab: None,
    });

    let score_plugins: Vec<StagePlugin> = trace
        .scores
        .iter()
        .map(|s| StagePlugin {
            name: s.plugin.clone(),
            mark: Mark::Pass,
            detail: format!("weight {}", s.weight),
        })
        .collect();
    let ties = trace.best_nodes.len().saturating_sub(1);
    out.push(Stage {
        name: "Score",
        mark: if scored { Mark::Pass } else { Mark::NotRun },
        summary: match &trace.selected_node {
            Some(n) if scored => format!(
                "{n} wins with {}{}",
                view.max_total,
                if ties > 0 {
                    format!(" (tied with {ties} other node{})", plural(ties))
                } else {
                    String::new()
                }
            ),
            _ if scored => format!("best total {}", view.max_total),
            _ => "not reached".into(),
        },
        plugins: score_plugins,
        tab: Some(Tab::Scores),
    });

    for name in ["Reserve", "Permit", "PreBind", "Bind", "PostBind"] {
        let phase = trace
            .binding
            .iter()
            .find(|p| p.point.eq_ignore_ascii_case(name));
        let plugins = phase
            .map(|p| result_plugins(&p.plugins))
            .unwrap_or_default();
        let mark = match phase {
            None => Mark::NotRun,
            Some(_) if plugins.is_empty() => Mark::Pass,
            Some(_) => phase_mark(&plugins),
        };
        let summary = match (phase, mark) {
            (None, _) => "not reached".into(),
            (Some(_), _) if plugins.is_empty() => "no plugins".into(),
            (Some(_), Mark::Wait) => "the pod waits here (see Waiting)".into(),
            (Some(_), Mark::Reject | Mark::RejectFirst) => "rejected".into(),
            _ => String::new(),
        };
        out.push(Stage {
            name,
            mark,
            summary,
            plugins,
            tab: (name == "Permit").then_some(Tab::Waiting),
        });
    }
    out
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_are_unique() {
        let names: Vec<String> = [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "NodeAnnotations",
            "x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            abbreviations(&names),
            ["NU", "NN", "TT", "NA", "NP", "NRF", "NA2", "x"]
        );
    }

    #[test]
    fn short_fit() {
        assert_eq!(
            short_fit_message("0/5 nodes are available: 3 Insufficient cpu."),
            "3 Insufficient cpu."
        );
        assert_eq!(short_fit_message("other"), "other");
    }
}
