//! The plugin registry: one file per plugin, named like the upstream plugin.
//!
//! Adding a plugin (in-tree or out-of-tree) is one file plus one line in
//! [`registry`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::framework::Plugin;

pub mod coscheduling;
pub mod not_modelled;

/// Applies the args kind's defaults to the user's args (`None` = no pluginConfig
/// entry) and validates them. `path` is the field path of the args object, e.g.
/// `profiles[0].pluginConfig[1].args`; errors are rendered with [`crate::config::field`].
pub type DefaultArgs =
    fn(user: Option<&serde_json::Value>, path: &str) -> Result<serde_json::Value, Vec<String>>;

/// Builds a plugin from its (already defaulted) args; `Value::Null` when the plugin
/// has no args kind.
pub type NewPlugin = fn(&serde_json::Value) -> Result<Arc<dyn Plugin>, String>;

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
        in_tree("PrioritySort", not_modelled::priority_sort, None),
        in_tree("SchedulingGates", not_modelled::scheduling_gates, None),
        in_tree("NodeUnschedulable", not_modelled::node_unschedulable, None),
        in_tree("NodeName", not_modelled::node_name, None),
        in_tree("TaintToleration", not_modelled::taint_toleration, None),
        in_tree(
            "NodeAffinity",
            not_modelled::node_affinity,
            Some(not_modelled::any_args),
        ),
        in_tree("NodePorts", not_modelled::node_ports, None),
        in_tree(
            "NodeResourcesFit",
            not_modelled::node_resources_fit,
            Some(not_modelled::any_args),
        ),
        in_tree(
            "VolumeRestrictions",
            not_modelled::volume_restrictions,
            None,
        ),
        in_tree("NodeVolumeLimits", not_modelled::node_volume_limits, None),
        in_tree(
            "VolumeBinding",
            not_modelled::volume_binding,
            Some(not_modelled::any_args),
        ),
        in_tree("VolumeZone", not_modelled::volume_zone, None),
        in_tree(
            "PodTopologySpread",
            not_modelled::pod_topology_spread,
            Some(not_modelled::any_args),
        ),
        in_tree(
            "InterPodAffinity",
            not_modelled::inter_pod_affinity,
            Some(not_modelled::any_args),
        ),
        in_tree(
            "DynamicResources",
            not_modelled::dynamic_resources,
            Some(not_modelled::any_args),
        ),
        in_tree(
            "DefaultPreemption",
            not_modelled::default_preemption,
            Some(not_modelled::any_args),
        ),
        in_tree(
            "NodeResourcesBalancedAllocation",
            not_modelled::node_resources_balanced_allocation,
            Some(not_modelled::any_args),
        ),
        in_tree("ImageLocality", not_modelled::image_locality, None),
        in_tree("DefaultBinder", not_modelled::default_binder, None),
        out_of_tree("Coscheduling", coscheduling::new, Some(coscheduling::args)),
        out_of_tree(
            "NodeResourcesAllocatable",
            not_modelled::node_resources_allocatable,
            Some(not_modelled::any_args),
        ),
    ];
    all.into_iter().map(|f| (f.name, f)).collect()
}
