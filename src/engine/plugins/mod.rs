//! The plugin registry: one file per plugin, named like the upstream plugin.
//!
//! Adding a plugin (in-tree or out-of-tree) is one file plus one line in
//! [`registry`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::framework::Plugin;

pub mod not_modelled;

/// Builds a plugin from its (already defaulted) args; `Value::Null` when the plugin
/// has no args kind.
pub type NewPlugin = fn(&serde_json::Value) -> Result<Arc<dyn Plugin>, String>;

#[derive(Clone, Copy)]
pub struct PluginFactory {
    pub name: &'static str,
    pub new: NewPlugin,
    /// Whether the plugin has an args kind (its defaults are materialised in config).
    pub has_args: bool,
    /// Out-of-tree (scheduler-plugins) rather than kube-scheduler's own.
    pub out_of_tree: bool,
}

pub type Registry = BTreeMap<&'static str, PluginFactory>;

const fn in_tree(name: &'static str, new: NewPlugin, has_args: bool) -> PluginFactory {
    PluginFactory {
        name,
        new,
        has_args,
        out_of_tree: false,
    }
}

const fn out_of_tree(name: &'static str, new: NewPlugin, has_args: bool) -> PluginFactory {
    PluginFactory {
        name,
        new,
        has_args,
        out_of_tree: true,
    }
}

/// Every plugin schedscope can build, by name.
pub fn registry() -> Registry {
    let all = [
        in_tree("PrioritySort", not_modelled::priority_sort, false),
        in_tree("SchedulingGates", not_modelled::scheduling_gates, false),
        in_tree("NodeUnschedulable", not_modelled::node_unschedulable, false),
        in_tree("NodeName", not_modelled::node_name, false),
        in_tree("TaintToleration", not_modelled::taint_toleration, false),
        in_tree("NodeAffinity", not_modelled::node_affinity, true),
        in_tree("NodePorts", not_modelled::node_ports, false),
        in_tree("NodeResourcesFit", not_modelled::node_resources_fit, true),
        in_tree("VolumeRestrictions", not_modelled::volume_restrictions, false),
        in_tree("NodeVolumeLimits", not_modelled::node_volume_limits, false),
        in_tree("VolumeBinding", not_modelled::volume_binding, true),
        in_tree("VolumeZone", not_modelled::volume_zone, false),
        in_tree("PodTopologySpread", not_modelled::pod_topology_spread, true),
        in_tree("InterPodAffinity", not_modelled::inter_pod_affinity, true),
        in_tree("DynamicResources", not_modelled::dynamic_resources, true),
        in_tree("DefaultPreemption", not_modelled::default_preemption, true),
        in_tree(
            "NodeResourcesBalancedAllocation",
            not_modelled::node_resources_balanced_allocation,
            true,
        ),
        in_tree("ImageLocality", not_modelled::image_locality, false),
        in_tree("DefaultBinder", not_modelled::default_binder, false),
        out_of_tree(
            "NodeResourcesAllocatable",
            not_modelled::node_resources_allocatable,
            true,
        ),
    ];
    all.into_iter().map(|f| (f.name, f)).collect()
}
