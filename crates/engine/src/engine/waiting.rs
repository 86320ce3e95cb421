//! The waiting-pods map (upstream: pkg/scheduler/framework/runtime/waiting_pods_map.go,
//! `waitingPodsMap`): pods that Permit asked to wait, one entry per pod (by uid), one
//! pending deadline per plugin that returned Wait. Deadlines instead of timers: the owner passes the time in and calls
//! [`WaitingPods::expire`]; a view computes countdowns when it draws.
//!
//! Upstream a waiting pod has a one-slot channel that never blocks, so the first
//! signal (allow by the last pending plugin, any reject, a timeout) wins and the rest
//! are dropped. Here the first signal is recorded in the entry and queued in an
//! outbox the binding cycle drains ([`WaitingPods::take_signals`]); later signals are
//! no-ops.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::engine::go_duration;
use crate::model::Pod;

/// Permit timeouts are capped at 15 minutes (`maxTimeout`).
pub const MAX_PERMIT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// One plugin's wait: the (capped) timeout it asked for and when it runs out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingPlugin {
    pub plugin: String,
    pub timeout: Duration,
    pub deadline: Timestamp,
}

/// How a wait ended: the signal WaitOnPermit receives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// Every pending plugin allowed.
    Allowed,
    /// `Reject(plugin, message)`, a timeout included (plugin = the one that timed out).
    Rejected { plugin: String, message: String },
}

/// A decided waiting pod, in the order the signals were given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalEvent {
    pub uid: String,
    /// `namespace/name`.
    pub pod: String,
    pub node: String,
    pub signal: Signal,
}

#[derive(Clone, Debug)]
pub struct WaitingPod {
    pub uid: String,
    /// The assumed pod (its `node_name` is the node it waits for).
    pub pod: Arc<Pod>,
    pub node: String,
    /// When Permit asked it to wait.
    pub since: Timestamp,
    /// Plugins still pending, by name.
    pending: BTreeMap<String, PendingPlugin>,
    /// The first signal, once given.
    signal: Option<Signal>,
}

impl WaitingPod {
    pub fn key(&self) -> String {
        self.pod.key()
    }
    /// Plugins still pending, by name (`GetPendingPlugins`, here in a stable order).
    pub fn pending_plugins(&self) -> impl Iterator<Item = &PendingPlugin> {
        self.pending.values()
    }
    pub fn signal(&self) -> Option<&Signal> {
        self.signal.as_ref()
    }
    /// When the pod is rejected unless every plugin allows first: the earliest
    /// deadline (`None` once signalled: the timers are stopped).
    pub fn next_deadline(&self) -> Option<Timestamp> {
        if self.signal.is_some() {
            return None;
        }
        self.pending.values().map(|p| p.deadline).min()
    }
}

/// Read-only view of one waiting pod, for the TUI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingPodView {
    /// `namespace/name`.
    pub pod: String,
    pub uid: String,
    pub node: String,
    pub since: Timestamp,
    /// Pending plugins with their deadlines, by plugin name.
    pub pending: Vec<PendingPlugin>,
}

impl WaitingPodView {
    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.pending.iter().map(|p| p.deadline).min()
    }
    /// Time left until the earliest deadline at `now` (zero once passed).
    pub fn remaining(&self, now: Timestamp) -> Option<Duration> {
        let d = self.next_deadline()?;
        Some(Duration::try_from(d.duration_since(now)).unwrap_or(Duration::ZERO))
    }
}

/// `waitingPodsMap`, keyed by pod uid.
#[derive(Clone, Debug, Default)]
pub struct WaitingPods {
    pods: BTreeMap<String, WaitingPod>,
    /// Signals not yet consumed by a binding cycle, in the order given.
    outbox: Vec<SignalEvent>,
}

/// `rejected due to timeout after waiting <d> at plugin <p>`.
pub fn timeout_message(timeout: Duration, plugin: &str) -> String {
    format!(
        "rejected due to timeout after waiting {} at plugin {plugin}",
        go_duration(timeout)
    )
}

fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|sd| t.checked_add(sd).ok())
        .unwrap_or(Timestamp::MAX)
}

impl WaitingPods {
    pub fn new() -> Self {
        Self::default()
    }

    /// `newWaitingPod`: one deadline per plugin that asked to wait, each capped at
    /// 15 minutes. Replaces an earlier entry of the same uid.
    pub fn add(&mut self, pod: Arc<Pod>, node: &str, waits: &[(String, Duration)], now: Timestamp) {
        let pending = waits
            .iter()
            .map(|(plugin, d)| {
                let timeout = (*d).min(MAX_PERMIT_TIMEOUT);
                (
                    plugin.clone(),
                    PendingPlugin {
                        plugin: plugin.clone(),
                        timeout,
                        deadline: add(now, timeout),
                    },
                )
            })
            .collect();
        let uid = pod.uid.clone();
        self.pods.insert(
            uid.clone(),
            WaitingPod {
                uid,
                pod,
                node: node.to_string(),
                since: now,
                pending,
                signal: None,
            },
        );
    }

    pub fn len(&self) -> usize {
        self.pods.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// `GetWaitingPod`.
    pub fn get(&self, uid: &str) -> Option<&WaitingPod> {
        self.pods.get(uid)
    }

    /// The waiting pod whose key is `namespace/name`.
    pub fn get_by_key(&self, key: &str) -> Option<&WaitingPod> {
        self.pods.values().find(|w| w.pod.key() == key)
    }

    /// `IterateOverWaitingPods` order: by pod key (Go iterates a map; any order is
    /// upstream's, this one is stable).
    pub fn uids_by_key(&self) -> Vec<String> {
        let mut v: Vec<(String, String)> = self
            .pods
            .values()
            .map(|w| (w.pod.key(), w.uid.clone()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, uid)| uid).collect()
    }

    /// Waiting pods not yet signalled, by pod key.
    pub fn iter(&self) -> impl Iterator<Item = &WaitingPod> {
        let uids = self.uids_by_key();
        uids.into_iter().filter_map(move |u| self.pods.get(&u))
    }

    /// Read-only view for the TUI, by pod key; signalled pods are left out.
    pub fn view(&self) -> Vec<WaitingPodView> {
        self.iter()
            .filter(|w| w.signal.is_none())
            .map(|w| WaitingPodView {
                pod: w.pod.key(),
                uid: w.uid.clone(),
                node: w.node.clone(),
                since: w.since,
                pending: w.pending.values().cloned().collect(),
            })
            .collect()
    }

    fn send(&mut self, uid: &str, signal: Signal) -> Option<SignalEvent> {
        let w = self.pods.get_mut(uid)?;
        if w.signal.is_some() {
            // One-slot channel, already full: the signal is dropped.
            return None;
        }
        w.signal = Some(signal.clone());
        let ev = SignalEvent {
            uid: uid.to_string(),
            pod: w.pod.key(),
            node: w.node.clone(),
            signal,
        };
        self.outbox.push(ev.clone());
        Some(ev)
    }

    /// `Allow(plugin)`: stop and drop that plugin's timer; when no plugin is pending
    /// any more, the pod is allowed. Returns the signal when this call decided the
    /// pod. Allowing a plugin that is not pending while others are does nothing;
    /// after a rejection it is a no-op.
    pub fn allow(&mut self, uid: &str, plugin: &str) -> Option<SignalEvent> {
        let w = self.pods.get_mut(uid)?;
        if w.signal.is_some() {
            return None;
        }
        w.pending.remove(plugin);
        if !w.pending.is_empty() {
            return None;
        }
        self.send(uid, Signal::Allowed)
    }

    /// Allow at every pending plugin (what an operator's "allow" means).
    pub fn allow_all(&mut self, uid: &str) -> Option<SignalEvent> {
        let plugins: Vec<String> = self.pods.get(uid)?.pending.keys().cloned().collect();
        let mut out = None;
        for p in plugins {
            if let Some(ev) = self.allow(uid, &p) {
                out = Some(ev);
            }
        }
        out
    }

    /// `Reject(plugin, message)`: stop every timer, fail the pod.
    pub fn reject(&mut self, uid: &str, plugin: &str, message: &str) -> Option<SignalEvent> {
        let w = self.pods.get_mut(uid)?;
        if w.signal.is_some() {
            return None;
        }
        // Timers stopped: no deadline of this pod fires any more.
        w.pending.clear();
        self.send(
            uid,
            Signal::Rejected {
                plugin: plugin.to_string(),
                message: message.to_string(),
            },
        )
    }

    /// The earliest deadline of any pod not yet signalled.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.pods.values().filter_map(|w| w.next_deadline()).min()
    }

    /// Fire every timer due at `now`, earliest first (ties: pod key, then plugin
    /// name): each rejects its pod with the timeout message unless the pod was
    /// already signalled. Returns the rejections, in firing order.
    pub fn expire(&mut self, now: Timestamp) -> Vec<SignalEvent> {
        let mut due: Vec<(Timestamp, String, String, Duration, String)> = Vec::new();
        for w in self.pods.values() {
            if w.signal.is_some() {
                continue;
            }
            for p in w.pending.values() {
                if p.deadline <= now {
                    due.push((
                        p.deadline,
                        w.pod.key(),
                        p.plugin.clone(),
                        p.timeout,
                        w.uid.clone(),
                    ));
                }
            }
        }
        due.sort();
        let mut out = Vec::new();
        for (_, _, plugin, timeout, uid) in due {
            if let Some(ev) = self.reject(&uid, &plugin, &timeout_message(timeout, &plugin)) {
                out.push(ev);
            }
        }
        out
    }

    /// Signals given since the last call, in order (the binding cycles to resume).
    pub fn take_signals(&mut self) -> Vec<SignalEvent> {
        std::mem::take(&mut self.outbox)
    }

    /// WaitOnPermit consumed the signal: the pod leaves the map.
    pub fn remove(&mut self, uid: &str) -> Option<WaitingPod> {
        self.pods.remove(uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{pod, simple_pod};

    fn t(secs: i64) -> Timestamp {
        Timestamp::new(1_700_000_000 + secs, 0).unwrap()
    }

    fn map_with(waits: &[(&str, u64)]) -> (WaitingPods, String) {
        let mut m = WaitingPods::new();
        let p = Arc::new(pod(simple_pod("p", "1", "1Gi", Some("n1"))));
        let waits: Vec<(String, Duration)> = waits
            .iter()
            .map(|(n, s)| (n.to_string(), Duration::from_secs(*s)))
            .collect();
        m.add(p.clone(), "n1", &waits, t(0));
        (m, p.uid.clone())
    }

    #[test]
    fn allow_by_one_of_two_plugins_keeps_waiting() {
        let (mut m, uid) = map_with(&[("A", 10), ("B", 20)]);
        assert_eq!(m.allow(&uid, "A"), None);
        let w = m.get(&uid).unwrap();
        let left: Vec<&str> = w.pending_plugins().map(|p| p.plugin.as_str()).collect();
        assert_eq!(left, ["B"]);
        assert_eq!(m.next_deadline(), Some(t(20)));
        assert!(m.take_signals().is_empty());
        // A's timer is gone: nothing fires at its deadline.
        assert!(m.expire(t(10)).is_empty());
    }

    #[test]
    fn allow_by_both_plugins_allows() {
        let (mut m, uid) = map_with(&[("A", 10), ("B", 20)]);
        assert_eq!(m.allow(&uid, "B"), None);
        let ev = m.allow(&uid, "A").unwrap();
        assert_eq!(ev.signal, Signal::Allowed);
        assert_eq!(ev.pod, "default/p");
        assert_eq!(m.take_signals(), vec![ev]);
        assert_eq!(m.next_deadline(), None);
    }

    #[test]
    fn allowing_an_unknown_plugin_while_others_wait_does_nothing() {
        let (mut m, uid) = map_with(&[("A", 10)]);
        assert_eq!(m.allow(&uid, "Other"), None);
        assert_eq!(m.next_deadline(), Some(t(10)));
    }

    #[test]
    fn reject_stops_every_timer() {
        let (mut m, uid) = map_with(&[("A", 10), ("B", 20)]);
        let ev = m.reject(&uid, "B", "no room").unwrap();
        assert_eq!(
            ev.signal,
            Signal::Rejected {
                plugin: "B".into(),
                message: "no room".into()
            }
        );
        assert_eq!(m.next_deadline(), None);
        assert!(m.expire(t(100)).is_empty());
        assert_eq!(m.take_signals().len(), 1);
    }

    #[test]
    fn timeout_rejects_with_go_duration_message() {
        let (mut m, uid) = map_with(&[("Coscheduling", 60), ("Other", 90)]);
        assert!(m.expire(t(59)).is_empty());
        let evs = m.expire(t(60));
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].uid, uid);
        assert_eq!(
            evs[0].signal,
            Signal::Rejected {
                plugin: "Coscheduling".into(),
                message: "rejected due to timeout after waiting 1m0s at plugin Coscheduling".into()
            }
        );
        // The other timer was stopped by the rejection.
        assert!(m.expire(t(1000)).is_empty());
    }

    #[test]
    fn earliest_timer_wins_when_both_are_due() {
        let (mut m, _) = map_with(&[("B", 5), ("A", 7)]);
        let evs = m.expire(t(10));
        assert_eq!(evs.len(), 1);
        assert_eq!(
            evs[0].signal,
            Signal::Rejected {
                plugin: "B".into(),
                message: "rejected due to timeout after waiting 5s at plugin B".into()
            }
        );
    }

    #[test]
    fn timeouts_are_capped_at_15_minutes() {
        let (m, uid) = map_with(&[("A", 3600)]);
        let w = m.get(&uid).unwrap();
        let p = w.pending_plugins().next().unwrap();
        assert_eq!(p.timeout, MAX_PERMIT_TIMEOUT);
        assert_eq!(p.deadline, t(900));
        assert_eq!(
            timeout_message(p.timeout, "A"),
            "rejected due to timeout after waiting 15m0s at plugin A"
        );
    }

    #[test]
    fn allow_after_reject_is_a_no_op() {
        let (mut m, uid) = map_with(&[("A", 10)]);
        assert!(m.reject(&uid, "A", "nope").is_some());
        assert_eq!(m.allow(&uid, "A"), None);
        assert_eq!(m.reject(&uid, "A", "again"), None);
        let sigs = m.take_signals();
        assert_eq!(sigs.len(), 1);
        assert!(matches!(&sigs[0].signal, Signal::Rejected { message, .. } if message == "nope"));
        // Once WaitOnPermit consumed it, the pod is gone and signals are no-ops.
        m.remove(&uid);
        assert_eq!(m.allow(&uid, "A"), None);
    }

    #[test]
    fn reject_after_allow_is_a_no_op() {
        let (mut m, uid) = map_with(&[("A", 10)]);
        assert!(m.allow(&uid, "A").is_some());
        assert_eq!(m.reject(&uid, "A", "late"), None);
        assert!(m.expire(t(10)).is_empty());
        assert_eq!(m.take_signals().len(), 1);
    }

    #[test]
    fn view_lists_deadlines_and_countdown() {
        let (mut m, _) = map_with(&[("A", 10), ("B", 20)]);
        let v = m.view();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].pod, "default/p");
        assert_eq!(v[0].node, "n1");
        assert_eq!(v[0].pending.len(), 2);
        assert_eq!(v[0].remaining(t(4)), Some(Duration::from_secs(6)));
        assert_eq!(v[0].remaining(t(40)), Some(Duration::ZERO));
        let uid = v[0].uid.clone();
        assert!(m.allow_all(&uid).is_some());
        assert!(m.view().is_empty());
    }
}
