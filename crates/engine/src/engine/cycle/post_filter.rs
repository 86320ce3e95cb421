//! PostFilter when no node fits (upstream: pkg/scheduler/framework/runtime/framework.go,
//! `RunPostFilterPlugins`), recorded.

use crate::engine::framework::{Ctx, CycleState, Framework, NodeToStatus};
use crate::engine::status::Code;
use crate::engine::trace::{PluginResult, PostFilterTrace};
use crate::model::Pod;

/// `RunPostFilterPlugins`: the first Success or UU wins, Errors stop, rejections
/// collect their reasons.
pub(super) fn run_post_filter(
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    statuses: &NodeToStatus,
) -> PostFilterTrace {
    let mut trace = PostFilterTrace::default();
    let mut reasons: Vec<String> = Vec::new();
    let mut last_result = None;
    for p in &fw.post_filter {
        let Some(pf) = p.as_post_filter() else {
            continue;
        };
        let (result, st) = pf.post_filter(fw, cx, state, pod, statuses);
        trace.plugins.push(PluginResult::new(p.name(), &st));
        match st.code {
            Code::Success | Code::UnschedulableAndUnresolvable => {
                trace.code = Some(st.code);
                trace.message = st.message();
                if let Some(r) = result {
                    trace.nominated_node = r.nominated_node;
                    trace.victims = r.victims;
                }
                return trace;
            }
            Code::Unschedulable | Code::Pending => {
                if let Some(r) = result
                    && r.nominated_node.is_some()
                {
                    last_result = Some(r);
                }
                reasons.extend(st.reasons);
            }
            _ => {
                trace.code = Some(Code::Error);
                trace.message = st.message();
                return trace;
            }
        }
    }
    trace.code = Some(Code::Unschedulable);
    trace.message = reasons.join(", ");
    if let Some(r) = last_result {
        trace.nominated_node = r.nominated_node;
        trace.victims = r.victims;
    }
    trace
}
