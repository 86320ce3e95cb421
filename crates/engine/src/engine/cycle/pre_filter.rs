//! PreFilter over the profile's plugins (upstream:
//! pkg/scheduler/framework/runtime/framework.go, `RunPreFilterPlugins`), recorded.

use std::collections::BTreeSet;

use crate::engine::framework::{Ctx, CycleState, Framework};
use crate::engine::status::{Code, Status};
use crate::engine::trace::{PluginResult, PreFilterTrace};
use crate::model::Pod;

pub(super) struct PreFilterOutcome {
    /// Every PreFilter plugin ran (none stopped the phase).
    pub(super) complete: bool,
    pub(super) status: Status,
    pub(super) subset: Option<BTreeSet<String>>,
    pub(super) plugins_with_nodes: Vec<String>,
    pub(super) trace: PreFilterTrace,
}

/// `RunPreFilterPlugins`: Skip is remembered, UU stops, Unschedulable is remembered
/// (the last one wins) and the loop goes on, node subsets are intersected.
pub(super) fn run_pre_filter(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
) -> PreFilterOutcome {
    let mut out = PreFilterOutcome {
        complete: false,
        status: Status::success(),
        subset: None,
        plugins_with_nodes: Vec::new(),
        trace: PreFilterTrace::default(),
    };
    let finish = |mut out: PreFilterOutcome, st: Status| {
        out.trace.code = Some(st.code);
        out.trace.plugin = st.plugin.clone();
        out.trace.reasons = if st.is_success() {
            Vec::new()
        } else {
            st.reasons.clone()
        };
        out.trace.node_subset = out.subset.as_ref().map(|s| s.iter().cloned().collect());
        out.status = st;
        out
    };
    let mut remembered: Option<Status> = None;
    for p in &fw.pre_filter {
        let Some(pf) = p.as_pre_filter() else {
            continue;
        };
        let (result, st) = pf.pre_filter(cx, state, pod);
        out.trace.plugins.push(PluginResult::new(p.name(), &st));
        if st.is_skip() {
            state.skip_filter_plugins.insert(p.name().to_string());
            continue;
        }
        if !st.is_success() {
            let st = st.with_plugin(p.name());
            match st.code {
                Code::UnschedulableAndUnresolvable => return finish(out, st),
                Code::Unschedulable => {
                    remembered = Some(st);
                    continue;
                }
                _ => {
                    let e = Status::error(format!(
                        "running PreFilter plugin {:?}: {}",
                        p.name(),
                        st.message()
                    ))
                    .with_plugin(p.name());
                    return finish(out, e);
                }
            }
        }
        if let Some(names) = result {
            out.plugins_with_nodes.push(p.name().to_string());
            out.trace
                .subsets
                .push((p.name().to_string(), names.iter().cloned().collect()));
            out.subset = Some(match out.subset.take() {
                None => names,
                Some(prev) => prev.intersection(&names).cloned().collect(),
            });
            if out.subset.as_ref().is_some_and(|s| s.is_empty()) {
                let msg = if out.plugins_with_nodes.len() == 1 {
                    format!(
                        "node(s) didn't satisfy plugin {}",
                        out.plugins_with_nodes[0]
                    )
                } else {
                    let mut sorted = out.plugins_with_nodes.clone();
                    sorted.sort();
                    format!(
                        "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                        sorted.join(" ")
                    )
                };
                return finish(out, Status::unresolvable(msg));
            }
        }
    }
    let st = remembered.unwrap_or_default();
    out.complete = true;
    finish(out, st)
}
