//! PrioritySort (QueueSort): higher priority first, then the pod queued earlier.

use std::sync::Arc;

use crate::engine::framework::{Plugin, QueueSortPlugin, QueuedPodInfo};

pub const NAME: &str = "PrioritySort";

pub struct PrioritySort;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(PrioritySort))
}

impl Plugin for PrioritySort {
    fn name(&self) -> &str {
        NAME
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        Some(self)
    }
}

impl QueueSortPlugin for PrioritySort {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        let (pa, pb) = (a.pod.priority, b.pod.priority);
        // The timestamp is refreshed at every requeue, so a pod that failed goes
        // behind equal-priority pods queued since.
        pa > pb || (pa == pb && a.timestamp < b.timestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::pod;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn info(priority: i32, ts_secs: i64) -> QueuedPodInfo {
        let p = pod(json!({
            "metadata": {"name": format!("p{priority}-{ts_secs}")},
            "spec": {"containers": [{"name": "c"}], "priority": priority}
        }));
        QueuedPodInfo {
            pod: Arc::new(p),
            timestamp: Timestamp::from_second(ts_secs).unwrap(),
            initial_attempt_timestamp: None,
            attempts: 0,
        }
    }

    #[test]
    fn orders_by_priority_then_timestamp() {
        let pl = PrioritySort;
        // (a, b, a before b)
        let cases = [
            ((10, 5), (0, 1), true),  // higher priority wins despite later timestamp
            ((0, 1), (10, 5), false), // lower priority loses
            ((5, 1), (5, 2), true),   // equal priority: earlier first
            ((5, 2), (5, 1), false),  // equal priority: later second
            ((5, 1), (5, 1), false),  // identical: neither before the other
            ((-1, 0), (-2, 0), true), // negative priorities
        ];
        for ((pa, ta), (pb, tb), want) in cases {
            assert_eq!(
                pl.less(&info(pa, ta), &info(pb, tb)),
                want,
                "({pa},{ta}) vs ({pb},{tb})"
            );
        }
    }
}
