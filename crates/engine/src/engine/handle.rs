//! What a long-running scheduler gives its plugins besides the cycle's arguments
//! (upstream: pkg/scheduler/framework/interface.go, `Handle`): the waiting-pods map, pods to activate, and a place for a
//! plugin's own state that outlives one cycle (upstream keeps it in the plugin
//! instance, which lives as long as the scheduler).
//!
//! The simulator puts its handle into every [`CycleState`] it runs a cycle with
//! ([`Handle::attach`]); plugins read it back with [`Handle::from_state`]. A single
//! `explain` cycle has no handle: plugins then behave as in a freshly started
//! scheduler (no waiting pods, no history), and nothing leaks between explains.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use super::framework::CycleState;
use super::waiting::WaitingPods;
use crate::model::PodKey;

/// The cycle-state key the handle is stored under.
pub const HANDLE_KEY: &str = "schedscope.io/framework-handle";

type PluginData = BTreeMap<String, Box<dyn Any + Send>>;

#[derive(Default)]
struct Inner {
    waiting: Mutex<WaitingPods>,
    plugin_data: Mutex<PluginData>,
    /// `PodsToActivate`: pods a plugin asked to move to activeQ.
    to_activate: Mutex<BTreeSet<PodKey>>,
}

/// Cheap to clone; clones share the same state.
#[derive(Clone, Default)]
pub struct Handle(Arc<Inner>);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave these maps half-updated in a way
    // that matters more than stopping; keep going with the data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Handle {
    pub fn new() -> Self {
        Self::default()
    }

    /// Store this handle in a cycle state.
    pub fn attach(&self, state: &mut CycleState) {
        state.write(HANDLE_KEY, self.clone());
    }

    /// The handle of the scheduler running this cycle, if any.
    pub fn from_state(state: &CycleState) -> Option<Handle> {
        state.read::<Handle>(HANDLE_KEY).cloned()
    }

    /// The waiting-pods map. Do not hold the guard while calling back into plugins.
    pub fn waiting(&self) -> MutexGuard<'_, WaitingPods> {
        lock(&self.0.waiting)
    }

    /// Run `f` on the plugin's persistent state (created with `Default` on first use).
    pub fn with_plugin_data<T: Default + Send + 'static, R>(
        &self,
        plugin: &str,
        f: impl FnOnce(&mut T) -> R,
    ) -> R {
        let mut data = lock(&self.0.plugin_data);
        let entry = data
            .entry(plugin.to_string())
            .or_insert_with(|| Box::new(T::default()));
        if !entry.is::<T>() {
            *entry = Box::new(T::default());
        }
        match entry.downcast_mut::<T>() {
            Some(t) => f(t),
            // Unreachable: replaced above when of another type.
            None => f(&mut T::default()),
        }
    }

    /// Ask for pods to be moved to activeQ after this cycle (`PodsToActivate`).
    pub fn activate(&self, pods: impl IntoIterator<Item = PodKey>) {
        lock(&self.0.to_activate).extend(pods);
    }

    /// Pods to activate, cleared.
    pub fn take_activations(&self) -> BTreeSet<PodKey> {
        std::mem::take(&mut *lock(&self.0.to_activate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn travels_in_cycle_state_and_shares_state() {
        let h = Handle::new();
        let mut st = CycleState::default();
        assert!(Handle::from_state(&st).is_none());
        h.attach(&mut st);
        let h2 = Handle::from_state(&st).unwrap();
        h2.with_plugin_data::<u32, _>("P", |n| *n += 2);
        assert_eq!(h.with_plugin_data::<u32, _>("P", |n| *n), 2);
        // Cloned cycle states (preemption dry runs) share the same handle.
        let st2 = st.clone();
        Handle::from_state(&st2)
            .unwrap()
            .activate(["ns/a".to_string()]);
        assert_eq!(h.take_activations().len(), 1);
        assert!(h.take_activations().is_empty());
    }
}
