//! A trace as read: the filter matrix, rejection groups, ranks and ties, pipeline
//! stages, abbreviations. Computed once per trace, drawn by every output.

use std::collections::{BTreeMap, HashMap};

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::{Outcome, PluginResult, Trace};

use super::causes::Causes;
use super::format::plural;
use schedscope_engine::model::{Cluster, Pod};

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

/// Nodes sharing one rejection: a rejected node belongs to exactly one group, keyed
/// by its rejecting plugin, code and full joined reason text, so the groups'
/// counts add up to the rejected nodes. (The FitError headline is a separate
/// histogram that counts a node once per reason, as upstream.)
#[derive(Clone, Debug)]
pub struct Group {
    pub kind: GroupKind,
    pub plugin: Option<String>,
    /// The rejecting code (none for feasible and excluded nodes).
    pub code: Option<Code>,
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
    /// The detail view that explains this stage, if any.
    pub detail: Option<StageDetail>,
}

/// Which detail explains a pipeline stage (each UI maps it to its own view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageDetail {
    Filters,
    Preemption,
    Scores,
    Waiting,
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
    /// Feasible indices, best total first, equal totals by node name.
    pub rank_order: Vec<usize>,
    /// Feasible indices sharing the best total, by node name (empty without totals).
    pub ties: Vec<usize>,
    pub max_total: i64,
    /// Abbreviations of the Score plugins (`trace.scores` order).
    pub score_abbrevs: Vec<String>,
    pub stages: Vec<Stage>,
    /// The "0/N nodes are available: ..." line, or "k/N nodes are available".
    pub headline: String,
    /// The exact cause of each rejection, when the view was built with the cluster
    /// and the pod ([`TraceView::with_causes`]); `None` when they were not at hand.
    pub causes: Option<Causes>,
    /// Per summary group, its cause lines (see [`TraceView::cause_lines`]).
    pub group_causes: Vec<Vec<String>>,
    /// With all-filters data: every Filter plugin's own rejection of every node,
    /// grouped by (plugin, code, reasons) as `summary` groups the first rejections;
    /// a node rejected by several plugins is in several groups. Biggest first.
    pub all_groups: Vec<Group>,
    /// Per all-filters group, its cause lines (see [`TraceView::all_cause_lines`]).
    pub all_group_causes: Vec<Vec<String>>,
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

    /// The view every output draws for a replay: with the rejections' causes, from
    /// the cluster the cycle ran on and the profile it ran with (found by name among
    /// `profiles`); without them when the pod is not in the cluster.
    pub fn of_replay(trace: &Trace, cluster: &Cluster, profiles: &[Framework]) -> TraceView {
        let profile = profiles.iter().find(|f| f.profile_name == trace.profile);
        match cluster.pod(&trace.pod) {
            Some(pod) => TraceView::with_causes(trace, cluster, pod, profile),
            None => TraceView::new(trace),
        }
    }

    /// [`TraceView::new`] with the exact cause of each rejection, computed from the
    /// cluster the trace ran on, its pod and the profile it ran with (whose plugin
    /// arguments can be the cause).
    pub fn with_causes(
        trace: &Trace,
        cluster: &Cluster,
        pod: &Pod,
        profile: Option<&Framework>,
    ) -> TraceView {
        let mut view = TraceView::new(trace);
        let causes = super::causes::for_trace(trace, cluster, pod, profile);
        view.group_causes = view
            .summary
            .iter()
            .map(|g| causes.summary_lines(&view, g, super::causes::SHOWN))
            .collect();
        view.all_group_causes = view
            .all_groups
            .iter()
            .map(|g| causes.all_summary_lines(&view, g, super::causes::SHOWN))
            .collect();
        view.causes = Some(causes);
        view
    }

    /// The cause lines drawn under the `i`th all-filters group, as
    /// [`TraceView::cause_lines`] for the summary groups.
    pub fn all_cause_lines(&self, i: usize) -> &[String] {
        self.all_group_causes
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// How many (node, plugin) rejections the all-filters data holds, and how many
    /// of them are beyond each node's first (those the summary groups do not show).
    pub fn all_rejection_counts(&self) -> (usize, usize) {
        let total: usize = self.all_groups.iter().map(|g| g.rows.len()).sum();
        let first = self
            .all_groups
            .iter()
            .flat_map(|g| g.rows.iter().map(move |&r| (g, r)))
            .filter(|(g, r)| self.rows[*r as usize].plugin == g.plugin)
            .count();
        (total, total - first)
    }

    /// Nodes that more than one Filter plugin rejects, each with the plugins that do
    /// (the first rejecting plugin first, then profile order): the all-filters marks
    /// of the matrix, by row.
    pub fn multiply_rejected(&self) -> Vec<(usize, Vec<&str>)> {
        let np = self.plugins.len();
        (0..self.rows.len())
            .filter_map(|r| {
                let mut first = Vec::new();
                let mut rest = Vec::new();
                for j in 0..np {
                    match self.cell(r, j) {
                        Mark::RejectFirst => first.push(self.plugins[j].as_str()),
                        Mark::Reject => rest.push(self.plugins[j].as_str()),
                        _ => {}
                    }
                }
                first.extend(rest);
                (self.rows[r].all.is_some() && first.len() > 1).then_some((r, first))
            })
            .collect()
    }

    /// The names of a group's nodes, in the group's order.
    pub fn group_nodes(&self, g: &Group) -> Vec<&str> {
        g.rows
            .iter()
            .map(|&r| self.rows[r as usize].node.as_str())
            .collect()
    }

    /// The cause lines drawn under the `i`th summary group (the table and the
    /// inspector): the most shared causes first, at most [`super::causes::SHOWN`],
    /// then `(+N more)`. Empty without causes.
    pub fn cause_lines(&self, i: usize) -> &[String] {
        self.group_causes
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
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
                node: v.node.to_string(),
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

        let summary = summarize(trace, &rows, &plugins);
        let all_groups = summarize_all(trace, &rows, &plugins);

        let feasible_of: HashMap<String, usize> = trace
            .feasible
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let mut rank_order: Vec<usize> = (0..trace.feasible.len()).collect();
        let total = |i: usize| trace.totals.get(i).copied().unwrap_or(0);
        rank_order.sort_by(|&a, &b| {
            total(b)
                .cmp(&total(a))
                .then_with(|| trace.feasible[a].cmp(&trace.feasible[b]))
        });
        let mut ranks = vec![0; trace.feasible.len()];
        for (pos, &i) in rank_order.iter().enumerate() {
            ranks[i] = if pos > 0 && total(rank_order[pos - 1]) == total(i) {
                ranks[rank_order[pos - 1]]
            } else {
                pos + 1
            };
        }
        let max_total = rank_order.first().map(|&i| total(i)).unwrap_or(0);
        let ties: Vec<usize> = if trace.totals.len() == trace.feasible.len() {
            rank_order
                .iter()
                .copied()
                .take_while(|&i| ranks[i] == 1)
                .collect()
        } else {
            Vec::new()
        };
        let score_names: Vec<String> = trace.scores.iter().map(|s| s.plugin.clone()).collect();
        let score_abbrevs = abbreviations(&score_names);

        let headline = match (&trace.fit_error, &trace.outcome) {
            (Some(e), _) => e.clone(),
            (None, Outcome::Gated { plugin, message }) => super::answer::gated(plugin, message),
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
            ties,
            max_total,
            score_abbrevs,
            stages: Vec::new(),
            headline,
            causes: None,
            group_causes: Vec::new(),
            all_groups,
            all_group_causes: Vec::new(),
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

/// `NRF = NodeResourcesFit, TT = TaintToleration`: what each abbreviation stands
/// for, in column order.
pub fn legend(names: &[String], abbrevs: &[String]) -> String {
    abbrevs
        .iter()
        .zip(names)
        .map(|(a, n)| format!("{a} = {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn summarize(trace: &Trace, rows: &[FilterRow], plugins: &[String]) -> Vec<Group> {
    // (kind, plugin, code, reason): one entry per node.
    type Key = (u8, Option<String>, Option<Code>, String);
    let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for (i, (r, v)) in rows.iter().zip(&trace.filter).enumerate() {
        let key = if r.feasible {
            (0, None, None, "feasible".to_string())
        } else if r.excluded {
            let reason = if v.reasons.is_empty() {
                "not evaluated: outside the PreFilter node subset".to_string()
            } else {
                r.reasons.clone()
            };
            (2, None, Some(v.code), reason)
        } else {
            (1, r.plugin.clone(), Some(v.code), r.reasons.clone())
        };
        groups.entry(key).or_default().push(i as u32);
    }
    let plugin_pos = |p: &Option<String>| {
        p.as_ref()
            .and_then(|p| plugins.iter().position(|x| x == p))
            .unwrap_or(usize::MAX)
    };
    let mut out: Vec<(u8, Group)> = groups
        .into_iter()
        .map(|((k, plugin, code, reason), rows)| {
            (
                k,
                Group {
                    kind: match k {
                        0 => GroupKind::Feasible,
                        1 => GroupKind::Rejected,
                        _ => GroupKind::Excluded,
                    },
                    plugin,
                    code,
                    reason,
                    rows,
                },
            )
        })
        .collect();
    // Biggest first, then plugin order (the profile's), then reason text.
    out.sort_by(|(ka, a), (kb, b)| {
        b.rows
            .len()
            .cmp(&a.rows.len())
            .then_with(|| ka.cmp(kb))
            .then_with(|| plugin_pos(&a.plugin).cmp(&plugin_pos(&b.plugin)))
            .then_with(|| a.plugin.cmp(&b.plugin))
            .then_with(|| a.reason.cmp(&b.reason))
            .then_with(|| a.code.map(Code::as_str).cmp(&b.code.map(Code::as_str)))
    });
    out.into_iter().map(|(_, g)| g).collect()
}

/// The all-filters groups: one per (plugin, code, joined reasons) of every
/// rejection (any answer but Success and Skip) in `trace.filter_all`.
fn summarize_all(trace: &Trace, rows: &[FilterRow], plugins: &[String]) -> Vec<Group> {
    let Some(all) = &trace.filter_all else {
        return Vec::new();
    };
    type Key = (usize, String, Code, String);
    let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(verdicts) = r.all.and_then(|a| all.get(a)) else {
            continue;
        };
        for res in verdicts
            .results
            .iter()
            .filter(|res| !matches!(res.code, Code::Success | Code::Skip))
        {
            let pos = plugins
                .iter()
                .position(|p| *p == res.plugin)
                .unwrap_or(usize::MAX);
            groups
                .entry((
                    pos,
                    res.plugin.to_string(),
                    res.code,
                    res.reasons.join(", "),
                ))
                .or_default()
                .push(i as u32);
        }
    }
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|((_, plugin, code, reason), rows)| Group {
            kind: GroupKind::Rejected,
            plugin: Some(plugin),
            code: Some(code),
            reason,
            rows,
        })
        .collect();
    // Biggest first; the map's order (plugin order, plugin, code, reason) among equals.
    out.sort_by_key(|g| std::cmp::Reverse(g.rows.len()));
    out
}

fn result_plugins(results: &[PluginResult]) -> Vec<StagePlugin> {
    results
        .iter()
        .map(|r| StagePlugin {
            name: r.plugin.to_string(),
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
            Outcome::Gated { plugin, message } => super::answer::gated(plugin, message),
            _ if pe.is_empty() => "no PreEnqueue plugins".into(),
            _ => "admitted to the scheduling queue".into(),
        },
        plugins: pe,
        detail: None,
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
        summary: match trace.queue_sort.first().map(String::as_str) {
            None | Some("PrioritySort") => {
                format!("priority {}, then time in queue", trace.priority)
            }
            Some(p) => format!("ordered by {p} (priority {})", trace.priority),
        },
        plugins: qs,
        detail: None,
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
        detail: None,
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
        detail: Some(StageDetail::Filters),
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
        detail: Some(StageDetail::Preemption),
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
        detail: None,
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
        detail: Some(StageDetail::Scores),
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
            detail: (name == "Permit").then_some(StageDetail::Waiting),
        });
    }
    out
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

    use schedscope_engine::engine::trace::{NodeVerdict, PluginScores};

    fn verdict(node: &str, rejected: Option<(&str, Code, &[&str])>) -> NodeVerdict {
        NodeVerdict {
            node: node.into(),
            feasible: rejected.is_none(),
            plugin: rejected.map(|r| r.0.to_string()),
            code: rejected.map_or(Code::Success, |r| r.1),
            reasons: rejected
                .map(|r| r.2.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default(),
        }
    }

    #[test]
    fn a_rejected_node_is_in_exactly_one_group() {
        let mut t = Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        t.filter_plugins = vec!["NodeUnschedulable".into(), "NodeResourcesFit".into()];
        let both: &[&str] = &["Insufficient cpu", "Insufficient memory"];
        let cpu: &[&str] = &["Insufficient cpu"];
        t.filter = vec![
            verdict("a", Some(("NodeResourcesFit", Code::Unschedulable, both))),
            verdict("b", Some(("NodeResourcesFit", Code::Unschedulable, cpu))),
            verdict("c", Some(("NodeResourcesFit", Code::Unschedulable, cpu))),
            verdict(
                "d",
                Some((
                    "NodeUnschedulable",
                    Code::UnschedulableAndUnresolvable,
                    &["node(s) were unschedulable"],
                )),
            ),
            verdict("e", None),
        ];
        t.feasible = vec!["e".into()];
        let v = TraceView::new(&t);
        let got: Vec<(GroupKind, Option<&str>, &str, usize)> = v
            .summary
            .iter()
            .map(|g| {
                (
                    g.kind.clone(),
                    g.plugin.as_deref(),
                    g.reason.as_str(),
                    g.rows.len(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    GroupKind::Rejected,
                    Some("NodeResourcesFit"),
                    "Insufficient cpu",
                    2
                ),
                // Equal counts: the feasible group, then plugin order, then reason.
                (GroupKind::Feasible, None, "feasible", 1),
                (
                    GroupKind::Rejected,
                    Some("NodeUnschedulable"),
                    "node(s) were unschedulable",
                    1
                ),
                (
                    GroupKind::Rejected,
                    Some("NodeResourcesFit"),
                    "Insufficient cpu, Insufficient memory",
                    1
                ),
            ]
        );
        let rejected: usize = v
            .summary
            .iter()
            .filter(|g| g.kind == GroupKind::Rejected)
            .map(|g| g.rows.len())
            .sum();
        assert_eq!(rejected, 4, "the groups partition the rejected nodes");
    }

    #[test]
    fn equal_totals_rank_together_and_list_by_node_name() {
        let mut t = Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        // Evaluation order is not name order.
        t.feasible = vec!["n3".into(), "n1".into(), "n2".into(), "n0".into()];
        t.scores = vec![PluginScores {
            plugin: "NodeResourcesFit".into(),
            weight: 1,
            raw: vec![90, 90, 50, 90],
            normalized: vec![90, 90, 50, 90],
        }];
        t.totals = vec![90, 90, 50, 90];
        let v = TraceView::new(&t);
        let names = |ix: &[usize]| {
            ix.iter()
                .map(|&i| t.feasible[i].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&v.rank_order), ["n0", "n1", "n3", "n2"]);
        assert_eq!(v.ranks, [1, 1, 4, 1]);
        assert_eq!(names(&v.ties), ["n0", "n1", "n3"]);
        assert_eq!(v.score_abbrevs, ["NRF"]);
        assert_eq!(
            legend(&["NodeResourcesFit".to_string()], &v.score_abbrevs),
            "NRF = NodeResourcesFit"
        );
    }
}
