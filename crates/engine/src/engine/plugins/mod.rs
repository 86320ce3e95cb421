//! The plugin registry (upstream: pkg/scheduler/framework/plugins/registry.go,
//! `NewInTreeRegistry`): one file per plugin, named like the upstream plugin.
//!
//! Adding a plugin (in-tree or out-of-tree) is one file plus one line in
//! [`registry`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::framework::Plugin;

pub mod coscheduling;
pub mod csi_translation;
pub mod default_binder;
pub mod default_preemption;
pub mod dynamic_resources;
pub mod image_locality;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_name;
pub mod node_ports;
pub mod node_resources_allocatable;
pub mod node_resources_balanced_allocation;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod node_volume_limits;
pub mod pod_topology_spread;
pub mod priority_sort;
pub mod scheduling_gates;
pub mod taint_toleration;
pub mod volume_binding;
pub mod volume_restrictions;
pub mod volume_util;
pub mod volume_zone;

pub use crate::config::DefaultArgs;

/// Hash maps and sets for the per-cycle work of plugins: a fixed, fast hasher (no
/// secret key is needed against input the user gave us themselves, and SipHash was a
/// visible share of a cycle). Never iterated into output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub type FastSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;

/// Builds a plugin from its (already defaulted) args (`Value::Null` when the plugin
/// has no args kind) and the release's feature gates (upstream `PluginFactoryWithFts`).
pub type NewPlugin =
    fn(&serde_json::Value, &crate::version::Features) -> Result<Arc<dyn Plugin>, String>;

#[derive(Clone, Copy)]
pub struct PluginFactory {
    pub name: &'static str,
    pub new: NewPlugin,
    /// The plugin's args kind, when it has one (its defaults are materialised in config).
    pub args: Option<DefaultArgs>,
    /// Out-of-tree (scheduler-plugins) rather than kube-scheduler's own.
    pub out_of_tree: bool,
}

pub type Registry = BTreeMap<&'static str, PluginFactory>;

const fn in_tree(name: &'static str, new: NewPlugin, args: Option<DefaultArgs>) -> PluginFactory {
    PluginFactory {
        name,
        new,
        args,
        out_of_tree: false,
    }
}

const fn out_of_tree(
    name: &'static str,
    new: NewPlugin,
    args: Option<DefaultArgs>,
) -> PluginFactory {
    PluginFactory {
        name,
        new,
        args,
        out_of_tree: true,
    }
}

/// Every plugin schedscope can build, by name.
pub fn registry() -> Registry {
    let all = [
        in_tree("PrioritySort", priority_sort::new, None),
        in_tree("SchedulingGates", scheduling_gates::new, None),
        in_tree("NodeUnschedulable", node_unschedulable::new, None),
        in_tree("NodeName", node_name::new, None),
        in_tree("TaintToleration", taint_toleration::new, None),
        in_tree(
            "NodeAffinity",
            node_affinity::new,
            Some(node_affinity::args),
        ),
        in_tree("NodePorts", node_ports::new, None),
        in_tree(
            "NodeResourcesFit",
            node_resources_fit::new,
            Some(node_resources_fit::args),
        ),
        in_tree("VolumeRestrictions", volume_restrictions::new, None),
        in_tree("NodeVolumeLimits", node_volume_limits::new, None),
        in_tree(
            "VolumeBinding",
            volume_binding::new,
            Some(volume_binding::default_args),
        ),
        in_tree("VolumeZone", volume_zone::new, None),
        in_tree(
            "PodTopologySpread",
            pod_topology_spread::new,
            Some(pod_topology_spread::default_args),
        ),
        in_tree(
            "InterPodAffinity",
            inter_pod_affinity::new,
            Some(inter_pod_affinity::default_args),
        ),
        in_tree(
            "DynamicResources",
            dynamic_resources::new,
            Some(dynamic_resources::args),
        ),
        in_tree(
            "DefaultPreemption",
            default_preemption::new,
            Some(default_preemption::default_args),
        ),
        in_tree(
            "NodeResourcesBalancedAllocation",
            node_resources_balanced_allocation::new,
            Some(node_resources_balanced_allocation::args),
        ),
        in_tree("ImageLocality", image_locality::new, None),
        in_tree("DefaultBinder", default_binder::new, None),
        out_of_tree("Coscheduling", coscheduling::new, Some(coscheduling::args)),
        out_of_tree(
            "NodeResourcesAllocatable",
            node_resources_allocatable::new,
            Some(node_resources_allocatable::args),
        ),
    ];
    all.into_iter().map(|f| (f.name, f)).collect()
}
