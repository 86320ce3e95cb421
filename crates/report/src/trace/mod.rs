//! A trace as read: the filter matrix, rejection groups, ranks and ties, pipeline
//! stages, abbreviations. Computed once per trace, drawn by every output.

use std::collections::{BTreeMap, HashMap};

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::{Outcome, PluginResult, Trace};

use crate::causes::Causes;
use schedscope_engine::model::{Cluster, Pod};

mod groups;
mod matrix;
mod stages;

use groups::{summarize, summarize_all};
use matrix::{FilterMatrix, Ranking};
use stages::stages;

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
        let causes = crate::causes::for_trace(trace, cluster, pod, profile);
        // With every filter run (`--all-filters`), every cause is shown.
        let every = trace.filter_all.is_some();
        view.group_causes = view
            .summary
            .iter()
            .map(|g| causes.summary_lines(&view, g, every))
            .collect();
        view.all_group_causes = view
            .all_groups
            .iter()
            .map(|g| causes.all_summary_lines(&view, g, every))
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

    /// The cause lines drawn under the `i`th summary group (the table, the inspector,
    /// markdown and HTML): those [`crate::causes::shown`] draws, the most shared first,
    /// then `(+N more ...)`. Empty without causes.
    pub fn cause_lines(&self, i: usize) -> &[String] {
        self.group_causes
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn new(trace: &Trace) -> TraceView {
        let plugins = trace.filter_plugins.clone();
        let abbrevs = abbreviations(&plugins);
        let matrix = FilterMatrix::of(trace, &plugins);
        let row_of = matrix
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node.clone(), i))
            .collect();
        let summary = summarize(trace, &matrix.rows, &plugins);
        let all_groups = summarize_all(trace, &matrix.rows, &plugins);
        let ranking = Ranking::of(trace);
        let score_names: Vec<String> = trace.scores.iter().map(|s| s.plugin.clone()).collect();
        let score_abbrevs = abbreviations(&score_names);
        let mut view = TraceView {
            plugins,
            abbrevs,
            rows: matrix.rows,
            cells: matrix.cells,
            row_of,
            summary,
            first_rejects: matrix.first_rejects,
            feasible_of: ranking.feasible_of,
            ranks: ranking.ranks,
            rank_order: ranking.rank_order,
            ties: ranking.ties,
            max_total: ranking.max_total,
            score_abbrevs,
            stages: Vec::new(),
            headline: headline(trace),
            causes: None,
            group_causes: Vec::new(),
            all_groups,
            all_group_causes: Vec::new(),
        };
        view.stages = stages(trace, &view);
        view
    }
}

/// The "0/N nodes are available: ..." line, or "k/N nodes are available".
fn headline(trace: &Trace) -> String {
    match (&trace.fit_error, &trace.outcome) {
        (Some(e), _) => e.clone(),
        (None, Outcome::Gated { plugin, message }) => crate::answer::gated(plugin, message),
        (None, Outcome::Error { message }) => format!("cycle error: {message}"),
        _ => format!(
            "{}/{} nodes are available",
            trace.feasible.len(),
            trace.nodes_total
        ),
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
