//! Stand-in for a plugin this replay does not model yet. It is registered under the
//! upstream name with the upstream extension points, skips where skipping is possible
//! and rejects elsewhere, and always says so in the trace: it never passes silently.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::framework::*;
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

#[derive(Clone, Copy, Default)]
pub struct Points {
    pub pre_enqueue: bool,
    pub queue_sort: bool,
    pub pre_filter: bool,
    pub filter: bool,
    pub post_filter: bool,
    pub pre_score: bool,
    pub score: bool,
    pub reserve: bool,
    pub permit: bool,
    pub pre_bind: bool,
    pub bind: bool,
}

pub struct NotModelled {
    name: &'static str,
    points: Points,
}

impl NotModelled {
    fn status(&self) -> Status {
        Status::error(format!(
            "plugin {} is not modelled by schedscope yet",
            self.name
        ))
    }
}

fn make(name: &'static str, points: Points) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(NotModelled { name, points }))
}

impl Plugin for NotModelled {
    fn name(&self) -> &str {
        self.name
    }
    fn not_modelled(&self, _pod: &Pod) -> Option<String> {
        Some("this plugin is not modelled yet; its verdicts are missing".into())
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        self.points.pre_enqueue.then_some(self as _)
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        self.points.queue_sort.then_some(self as _)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        self.points.pre_filter.then_some(self as _)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        self.points.filter.then_some(self as _)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        self.points.post_filter.then_some(self as _)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        self.points.pre_score.then_some(self as _)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        self.points.score.then_some(self as _)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        self.points.reserve.then_some(self as _)
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        self.points.permit.then_some(self as _)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        self.points.pre_bind.then_some(self as _)
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        self.points.bind.then_some(self as _)
    }
}

impl PreEnqueuePlugin for NotModelled {
    fn pre_enqueue(&self, _cx: &Ctx, _pod: &Pod) -> Status {
        Status::success()
    }
}
impl QueueSortPlugin for NotModelled {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        a.pod.priority > b.pod.priority
    }
}
impl PreFilterPlugin for NotModelled {
    fn pre_filter(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod) -> (PreFilterResult, Status) {
        (None, Status::skip())
    }
}
impl FilterPlugin for NotModelled {
    fn filter(&self, _cx: &Ctx, _s: &CycleState, _p: &Pod, _n: &NodeInfo) -> Status {
        self.status()
    }
}
impl PostFilterPlugin for NotModelled {
    fn post_filter(
        &self,
        _fw: &Framework,
        _cx: &Ctx,
        _s: &CycleState,
        _p: &Pod,
        _st: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        (None, self.status())
    }
}
impl PreScorePlugin for NotModelled {
    fn pre_score(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &[&NodeInfo]) -> Status {
        Status::skip()
    }
}
impl ScorePlugin for NotModelled {
    fn score(&self, _cx: &Ctx, _s: &CycleState, _p: &Pod, _n: &NodeInfo) -> (i64, Status) {
        (0, self.status())
    }
}
impl ReservePlugin for NotModelled {
    fn reserve(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &str) -> Status {
        Status::success()
    }
    fn unreserve(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &str) {}
}
impl PermitPlugin for NotModelled {
    fn permit(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &str) -> (Status, Duration) {
        (Status::success(), Duration::ZERO)
    }
}
impl PreBindPlugin for NotModelled {
    fn pre_bind(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &str) -> Status {
        Status::success()
    }
}
impl BindPlugin for NotModelled {
    fn bind(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &str) -> Status {
        Status::success()
    }
}

macro_rules! stand_in {
    ($fn_name:ident, $name:literal, { $($point:ident),* }) => {
        pub fn $fn_name(_args: &serde_json::Value) -> Result<Arc<dyn Plugin>, String> {
            make($name, Points { $($point: true,)* ..Points::default() })
        }
    };
}

stand_in!(priority_sort, "PrioritySort", { queue_sort });
stand_in!(scheduling_gates, "SchedulingGates", { pre_enqueue });
stand_in!(node_unschedulable, "NodeUnschedulable", { filter });
stand_in!(node_name, "NodeName", { filter });
stand_in!(taint_toleration, "TaintToleration", { filter, pre_score, score });
stand_in!(node_affinity, "NodeAffinity", { pre_filter, filter, pre_score, score });
stand_in!(node_ports, "NodePorts", { pre_filter, filter });
stand_in!(node_resources_fit, "NodeResourcesFit", { pre_filter, filter, pre_score, score });
stand_in!(volume_restrictions, "VolumeRestrictions", { pre_filter, filter });
stand_in!(node_volume_limits, "NodeVolumeLimits", { pre_filter, filter });
stand_in!(volume_binding, "VolumeBinding", { pre_filter, filter, reserve, pre_bind, pre_score, score });
stand_in!(volume_zone, "VolumeZone", { pre_filter, filter });
stand_in!(pod_topology_spread, "PodTopologySpread", { pre_filter, filter, pre_score, score });
stand_in!(inter_pod_affinity, "InterPodAffinity", { pre_filter, filter, pre_score, score });
stand_in!(dynamic_resources, "DynamicResources", { pre_enqueue, pre_filter, filter, post_filter, score, reserve, pre_bind });
stand_in!(default_preemption, "DefaultPreemption", { pre_enqueue, post_filter });
stand_in!(node_resources_balanced_allocation, "NodeResourcesBalancedAllocation", { pre_score, score });
stand_in!(image_locality, "ImageLocality", { score });
stand_in!(default_binder, "DefaultBinder", { bind });
stand_in!(node_resources_allocatable, "NodeResourcesAllocatable", {
    score
});

/// Args of a stand-in: accepted as given (`{}` when absent).
pub fn any_args(
    user: Option<&serde_json::Value>,
    _path: &str,
) -> Result<serde_json::Value, Vec<String>> {
    Ok(user.cloned().unwrap_or_else(|| serde_json::json!({})))
}
