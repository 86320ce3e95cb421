//! The filter matrix: one row per evaluated node, one mark per Filter plugin, and how
//! many nodes each plugin rejected first; and the feasible nodes' ranking by total
//! score.

use std::collections::HashMap;

use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::Trace;

use super::{FilterRow, Mark};

/// The rows and marks of the filter matrix.
pub(super) struct FilterMatrix {
    pub rows: Vec<FilterRow>,
    /// `rows.len() × plugins.len()`, row-major.
    pub cells: Vec<Mark>,
    /// Per filter plugin: nodes it rejected first.
    pub first_rejects: Vec<usize>,
}

impl FilterMatrix {
    /// Each node's marks: from the all-filters data when the trace has it, else
    /// from its first rejection (plugins before it passed, after it did not run).
    pub fn of(trace: &Trace, plugins: &[String]) -> FilterMatrix {
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
        FilterMatrix {
            rows,
            cells,
            first_rejects,
        }
    }
}

/// The feasible nodes ranked by total score.
pub(super) struct Ranking {
    pub feasible_of: HashMap<String, usize>,
    /// Competition rank (1, 1, 3) per feasible index.
    pub ranks: Vec<usize>,
    /// Feasible indices, best total first, equal totals by node name.
    pub rank_order: Vec<usize>,
    /// Feasible indices sharing the best total, by node name (empty without totals).
    pub ties: Vec<usize>,
    pub max_total: i64,
}

impl Ranking {
    pub fn of(trace: &Trace) -> Ranking {
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
        Ranking {
            feasible_of,
            ranks,
            rank_order,
            ties,
            max_total,
        }
    }
}
