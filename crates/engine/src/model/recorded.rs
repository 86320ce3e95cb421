//! What the real scheduler recorded about pending pods beside the objects it reads:
//! its FailedScheduling events. The scheduler never reads them; they are kept so
//! that its last word can be set beside the replay.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use super::pod::PodKey;

/// The latest FailedScheduling event of a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulingEvent {
    pub message: String,
    pub count: i32,
    pub last_seen: Option<Timestamp>,
    /// `involvedObject.uid` (`regarding.uid`): which incarnation of the pod it is
    /// about. A pod deleted and created again under the same name (a StatefulSet's)
    /// has a new uid, and the old one's events still name it.
    pub uid: String,
}

/// Each pending pod's latest FailedScheduling event.
pub type SchedulingEvents = BTreeMap<PodKey, SchedulingEvent>;

/// Keeps `ev` as `pod`'s event when it is the newest seen (an event without a time
/// loses to one with a time).
pub fn keep_latest(events: &mut SchedulingEvents, pod: PodKey, ev: SchedulingEvent) {
    let newer = events
        .get(&pod)
        .is_none_or(|old| old.last_seen <= ev.last_seen);
    if newer {
        events.insert(pod, ev);
    }
}
