//! Pods held at Permit, as the TUI sees them: a small trait over whatever keeps the
//! waiting-pods map (the engine's, later), and an in-memory list with kube-scheduler's
//! semantics (upstream: framework/runtime/waiting_pods_map.go) for tests and
//! snapshots. Deadlines, not timers: the countdown is computed from an injected
//! [`Clock`] at draw time.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

pub use crate::clock::{Clock, ManualClock, SystemClock};

/// A plugin that returned Wait at Permit, and until when (the engine's type).
pub use crate::engine::waiting::PendingPlugin;

/// A pod held at Permit, as listed (the presentation model's type).
pub use crate::report::WaitingPod;

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
    fn list(&self) -> Vec<WaitingPod>;
    /// `Allow(plugin)`; `None` while other plugins still wait.
    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent>;
    /// `Reject(plugin, message)`.
    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent>;
    /// Timeouts due at `now`.
    fn expire(&mut self, now: Timestamp) -> Vec<WaitingEvent>;
}

/// An in-memory waiting-pods map with kube-scheduler's rules: `Allow(p)` stops p's
/// timer and signals success once none remain; `Reject` stops every timer; the first
/// signal wins; a timer firing rejects with `rejected due to timeout after waiting <d>
/// at plugin <p>`.
#[derive(Clone, Debug, Default)]
pub struct WaitingList {
    pods: Vec<WaitingPod>,
}

impl WaitingList {
    pub fn new(mut pods: Vec<WaitingPod>) -> Self {
        pods.sort_by(|a, b| a.pod.cmp(&b.pod));
        WaitingList { pods }
    }

    /// A waiting pod whose plugins each wait `timeout` from `now`.
    pub fn add(&mut self, pod: &str, node: &str, plugins: &[(&str, Duration)], now: Timestamp) {
        let pending = plugins
            .iter()
            .map(|(p, d)| PendingPlugin {
                plugin: p.to_string(),
                timeout: *d,
                deadline: SignedDuration::try_from(*d)
                    .ok()
                    .and_then(|sd| now.checked_add(sd).ok())
                    .unwrap_or(now),
            })
            .collect();
        self.pods.retain(|w| w.pod != pod);
        self.pods.push(WaitingPod {
            pod: pod.to_string(),
            node: node.to_string(),
            pending,
        });
        self.pods.sort_by(|a, b| a.pod.cmp(&b.pod));
    }
}

impl PermitGate for WaitingList {
    fn list(&self) -> Vec<WaitingPod> {
        self.pods.clone()
    }

    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent> {
        let i = self.pods.iter().position(|w| w.pod == pod)?;
        let w = &mut self.pods[i];
        w.pending.retain(|p| p.plugin != plugin);
        if !w.pending.is_empty() {
            return None;
        }
        let w = self.pods.remove(i);
        Some(WaitingEvent::Allowed {
            pod: w.pod,
            node: w.node,
        })
    }

    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent> {
        let i = self.pods.iter().position(|w| w.pod == pod)?;
        let w = self.pods.remove(i);
        Some(WaitingEvent::Rejected {
            pod: w.pod,
            plugin: plugin.to_string(),
            message: message.to_string(),
        })
    }

    fn expire(&mut self, now: Timestamp) -> Vec<WaitingEvent> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.pods.len() {
            // The earliest timer fires first; ties go to the plugin listed first.
            let due = self.pods[i]
                .pending
                .iter()
                .filter(|p| p.deadline <= now)
                .min_by_key(|p| p.deadline)
                .cloned();
            match due {
                Some(p) => {
                    let w = self.pods.remove(i);
                    out.push(WaitingEvent::Rejected {
                        pod: w.pod,
                        message: format!(
                            "rejected due to timeout after waiting {} at plugin {}",
                            go_duration(p.timeout),
                            p.plugin
                        ),
                        plugin: p.plugin,
                    });
                }
                None => i += 1,
            }
        }
        out
    }
}

/// Durations and countdowns are written by the presentation model, as everywhere.
pub use crate::report::{countdown, go_duration};

#[cfg(test)]
mod tests {
    use super::*;

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
