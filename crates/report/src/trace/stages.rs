//! The pipeline stages of a trace: one per extension point, with its mark, a summary
//! and its plugins' results.

use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::{Outcome, PluginResult, Trace};

use super::{Mark, Stage, StageDetail, StagePlugin, TraceView};
use crate::format::plural;

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

pub(super) fn stages(trace: &Trace, view: &TraceView) -> Vec<Stage> {
    let gated = matches!(trace.outcome, Outcome::Gated { .. });
    let mut out = Vec::new();
    queue_stages(&mut out, trace, gated);
    let filter_ran = pre_filter_stage(&mut out, trace) && !gated;
    filter_stage(&mut out, trace, view, filter_ran);
    post_filter_stage(&mut out, trace, filter_ran);
    score_stages(&mut out, trace, view);
    binding_stages(&mut out, trace);
    out
}

/// PreEnqueue (a gated pod stops there) and QueueSort.
fn queue_stages(out: &mut Vec<Stage>, trace: &Trace, gated: bool) {
    let pe = result_plugins(&trace.pre_enqueue);
    out.push(Stage {
        name: "PreEnqueue",
        mark: if gated {
            Mark::Reject
        } else {
            phase_mark(&pe).min(Mark::Pass)
        },
        summary: match &trace.outcome {
            Outcome::Gated { plugin, message } => crate::answer::gated(plugin, message),
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
}

/// PreFilter; whether the cycle went on to Filter.
fn pre_filter_stage(out: &mut Vec<Stage>, trace: &Trace) -> bool {
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

    pf.code.is_some() && !pf_rejected
}

/// Filter: each plugin's first rejections, how many nodes are feasible.
fn filter_stage(out: &mut Vec<Stage>, trace: &Trace, view: &TraceView, filter_ran: bool) {
    let pf = &trace.pre_filter;
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
}

/// PostFilter: preemption's nomination, or why there is none.
fn post_filter_stage(out: &mut Vec<Stage>, trace: &Trace, filter_ran: bool) {
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
}

/// PreScore and Score: the winner and its ties.
fn score_stages(out: &mut Vec<Stage>, trace: &Trace, view: &TraceView) {
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
}

/// The binding cycle's extension points, Reserve to PostBind.
fn binding_stages(out: &mut Vec<Stage>, trace: &Trace) {
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
}
