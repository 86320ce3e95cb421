//! The acting scheduler (`--act`) behind the Waiting tab: its waiting pods as the
//! session last published them, Allow / Reject sent to the session as commands. The
//! session owns the timers (timeouts happen there, and arrive as notices), so
//! `expire` has nothing to do here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use crate::act::{ActHandle, PermitDecision};

use super::waiting::{PermitGate, WaitingEvent};
use crate::report::HeldPod;

pub struct ActWaiting {
    handle: ActHandle,
    /// Plugins already allowed per pod since the session last published, so the
    /// last one of a pod reports the pod allowed.
    allowed: BTreeMap<String, BTreeSet<String>>,
}

impl ActWaiting {
    pub fn new(handle: ActHandle) -> Self {
        ActWaiting {
            handle,
            allowed: BTreeMap::new(),
        }
    }
}

impl PermitGate for ActWaiting {
    fn list(&self) -> Vec<HeldPod> {
        self.handle
            .waiting()
            .into_iter()
            .map(HeldPod::from)
            .collect()
    }

    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent> {
        let current = self.list();
        self.allowed
            .retain(|k, _| current.iter().any(|w| &w.pod == k));
        let w = current.iter().find(|w| w.pod == pod)?;
        if !self.handle.send(PermitDecision::Allow {
            pod: pod.to_string(),
            plugin: Some(plugin.to_string()),
        }) {
            return None;
        }
        let done = self.allowed.entry(pod.to_string()).or_default();
        done.insert(plugin.to_string());
        w.pending
            .iter()
            .all(|p| done.contains(&p.plugin))
            .then(|| WaitingEvent::Allowed {
                pod: pod.to_string(),
                node: w.node.clone(),
            })
    }

    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent> {
        self.handle
            .send(PermitDecision::Reject {
                pod: pod.to_string(),
                message: message.to_string(),
            })
            .then(|| WaitingEvent::Rejected {
                pod: pod.to_string(),
                plugin: plugin.to_string(),
                message: message.to_string(),
            })
    }

    fn expire(&mut self, _now: Timestamp) -> Vec<WaitingEvent> {
        Vec::new()
    }
}
