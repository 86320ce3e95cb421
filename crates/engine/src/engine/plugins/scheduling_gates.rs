//! SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` never enters a
//! scheduling cycle.

use std::sync::Arc;

use crate::engine::framework::{Ctx, Plugin, PreEnqueuePlugin};
use crate::engine::status::Status;
use crate::model::Pod;

pub const NAME: &str = "SchedulingGates";

pub struct SchedulingGates;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(SchedulingGates))
}

impl Plugin for SchedulingGates {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for SchedulingGates {
    fn pre_enqueue(&self, _cx: &Ctx, pod: &Pod) -> Status {
        if pod.scheduling_gates.is_empty() {
            return Status::success();
        }
        // Go's `%v` of a string slice, in spec order.
        Status::unresolvable(format!(
            "waiting for scheduling gates: [{}]",
            pod.scheduling_gates.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    #[test]
    fn gates_reject_in_spec_order() {
        let c = cluster(vec![], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let cases: [(&[&str], Code, &str); 3] = [
            (&[], Code::Success, ""),
            (
                &["a"],
                Code::UnschedulableAndUnresolvable,
                "waiting for scheduling gates: [a]",
            ),
            // h46
            (
                &["example.com/quota", "example.com/review"],
                Code::UnschedulableAndUnresolvable,
                "waiting for scheduling gates: [example.com/quota example.com/review]",
            ),
        ];
        for (gates, code, msg) in cases {
            let gates: Vec<_> = gates.iter().map(|g| json!({"name": g})).collect();
            let p = pod(json!({
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c"}], "schedulingGates": gates}
            }));
            let st = SchedulingGates.pre_enqueue(&cx, &p);
            assert_eq!(st.code, code);
            assert_eq!(st.message(), msg);
        }
    }
}
