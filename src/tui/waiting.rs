//! Pods held at Permit, as the TUI sees them: a small trait over whatever keeps the
//! waiting-pods map (the engine's, later), and an in-memory list with kube-scheduler's
//! semantics (upstream: framework/runtime/waiting_pods_map.go) for tests and
//! snapshots. Deadlines, not timers: the countdown is computed from an injected
//! [`Clock`] at draw time.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

pub use crate::clock::{Clock, ManualClock, SystemClock};

/// A plugin that returned Wait at Permit, and until when (the engine's type).
pub use crate::engine::waiting::PendingPlugin;

/// A pod held at Permit, as listed (the presentation model's type).
use crate::report::HeldPod;

/// What happened to a waiting pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitingEvent {
    /// Every plugin allowed: the binding cycle goes on.
    Allowed { pod: String, node: String },
    /// The first rejection (or a timeout) ends the wait.
    Rejected {
        pod: String,
        plugin: String,
        message: String,
    },
}

impl WaitingEvent {
    pub fn describe(&self) -> String {
        match self {
            WaitingEvent::Allowed { pod, node } => {
                format!("{pod}: allowed by every plugin; binding to {node} goes on")
            }
            WaitingEvent::Rejected {
                pod,
                plugin,
                message,
            } => {
                let by = if plugin.is_empty() {
                    String::new()
                } else {
                    format!(" by {plugin}")
                };
                format!("{pod}: rejected{by}: {message} (0/1 nodes are available: 1 {message}.)")
            }
        }
    }
}

/// The waiting-pods map as the TUI drives it.
pub trait PermitGate: Send {
    /// Current waiting pods, by pod key.
    fn list(&self) -> Vec<HeldPod>;
    /// `Allow(plugin)`; `None` while other plugins still wait.
    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent>;
    /// `Reject(plugin, message)`.
    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent>;
    /// Timeouts due at `now`.
    fn expire(&mut self, now: Timestamp) -> Vec<WaitingEvent>;
}

/// A waiting-pods map of the inspector's own, for a source with no scheduler behind it
/// (a plain snapshot, where nothing waits) and for tests. The rules are the engine's
/// [`WaitingPods`](crate::engine::waiting::WaitingPods) (`Allow(p)` stops p's timer
/// and succeeds once none remain; `Reject` stops every timer; the first signal wins; a
/// timer firing rejects with the timeout message); this only speaks pod keys.
#[derive(Clone, Debug, Default)]
pub struct WaitingList {
    map: crate::engine::waiting::WaitingPods,
}

impl WaitingList {
    /// A waiting pod whose plugins each wait `timeout` from `now`.
    pub fn add(&mut self, pod: &str, node: &str, plugins: &[(&str, Duration)], now: Timestamp) {
        let (namespace, name) = pod.split_once('/').unwrap_or(("default", pod));
        let waiting = crate::model::Pod {
            namespace: namespace.into(),
            name: name.to_string(),
            // The key stands in for the uid the map is keyed by.
            uid: pod.to_string(),
            ..Default::default()
        };
        let waits: Vec<(String, Duration)> =
            plugins.iter().map(|(p, d)| (p.to_string(), *d)).collect();
        self.map
            .add(std::sync::Arc::new(waiting), node, &waits, now);
    }

    /// A signal given: the pod leaves the map (nothing waits on it to bind).
    fn decided(&mut self, ev: crate::engine::waiting::SignalEvent) -> WaitingEvent {
        use crate::engine::waiting::Signal;
        self.map.remove(&ev.uid);
        self.map.take_signals();
        match ev.signal {
            Signal::Allowed => WaitingEvent::Allowed {
                pod: ev.pod,
                node: ev.node,
            },
            Signal::Rejected { plugin, message } => WaitingEvent::Rejected {
                pod: ev.pod,
                plugin,
                message,
            },
        }
    }

    fn uid(&self, pod: &str) -> Option<String> {
        self.map.get_by_key(pod).map(|w| w.uid.clone())
    }
}

impl PermitGate for WaitingList {
    fn list(&self) -> Vec<HeldPod> {
        self.map.view().into_iter().map(HeldPod::from).collect()
    }

    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent> {
        let uid = self.uid(pod)?;
        let ev = self.map.allow(&uid, plugin)?;
        Some(self.decided(ev))
    }

    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent> {
        let uid = self.uid(pod)?;
        let ev = self.map.reject(&uid, plugin, message)?;
        Some(self.decided(ev))
    }

    fn expire(&mut self, now: Timestamp) -> Vec<WaitingEvent> {
        let fired = self.map.expire(now);
        fired.into_iter().map(|ev| self.decided(ev)).collect()
    }
}

/// Durations and countdowns are written by the presentation model, as everywhere.
pub use crate::report::{countdown, go_duration};

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::SignedDuration;

    fn t0() -> Timestamp {
        Timestamp::new(1_700_000_000, 0).expect("ts")
    }

    #[test]
    fn allow_needs_every_plugin_and_reject_wins_at_once() {
        let mut w = WaitingList::default();
        w.add(
            "default/a",
            "n1",
            &[
                ("Coscheduling", Duration::from_secs(60)),
                ("Other", Duration::from_secs(30)),
            ],
            t0(),
        );
        assert_eq!(w.allow("default/a", "Coscheduling"), None);
        assert_eq!(w.list()[0].pending.len(), 1);
        // Allowing a plugin that is not waiting changes nothing.
        assert_eq!(w.allow("default/a", "Unknown"), None);
        assert_eq!(
            w.allow("default/a", "Other"),
            Some(WaitingEvent::Allowed {
                pod: "default/a".into(),
                node: "n1".into()
            })
        );
        assert!(w.list().is_empty());

        w.add(
            "default/b",
            "n2",
            &[("Coscheduling", Duration::from_secs(60))],
            t0(),
        );
        assert_eq!(
            w.reject("default/b", "", "removed"),
            Some(WaitingEvent::Rejected {
                pod: "default/b".into(),
                plugin: "".into(),
                message: "removed".into()
            })
        );
        assert_eq!(w.reject("default/b", "", "again"), None);
    }

    #[test]
    fn earliest_timer_rejects() {
        let mut w = WaitingList::default();
        w.add(
            "default/a",
            "n1",
            &[
                ("Coscheduling", Duration::from_secs(60)),
                ("Other", Duration::from_secs(30)),
            ],
            t0(),
        );
        let at = |s| t0().checked_add(SignedDuration::from_secs(s)).expect("ts");
        assert!(w.expire(at(29)).is_empty());
        assert_eq!(
            w.expire(at(30)),
            vec![WaitingEvent::Rejected {
                pod: "default/a".into(),
                plugin: "Other".into(),
                message: "rejected due to timeout after waiting 30s at plugin Other".into()
            }]
        );
        assert!(w.list().is_empty());
    }
}
