//! A built profile re-built for another kube-scheduler release (upstream builds each
//! plugin with the release's `feature.Features`, and `getDefaultPlugins` leaves
//! DynamicResources out while its gate is off): every in-tree plugin is made again
//! from its effective args with that release's features; DynamicResources leaves the
//! profile when DRA is off, and Score when the release has no DRA score.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::engine::framework::{Framework, Plugin, WeightedPlugin};
use crate::engine::plugins::{Registry, dynamic_resources};
use crate::version::Features;

/// `fw` as release `fts` builds it. Out-of-tree plugins (whose raw args are not kept)
/// and plugins the registry does not know are kept as they are.
pub fn at_release(fw: &Framework, fts: &Features, registry: &Registry) -> Framework {
    let mut rebuilt: BTreeMap<String, Arc<dyn Plugin>> = BTreeMap::new();
    let mut again = |p: &Arc<dyn Plugin>| -> Option<Arc<dyn Plugin>> {
        let name = p.name();
        if name == dynamic_resources::NAME && !fts.dynamic_resource_allocation {
            return None;
        }
        if let Some(p) = rebuilt.get(name) {
            return Some(p.clone());
        }
        let fresh = registry
            .get(name)
            .filter(|f| !f.out_of_tree)
            .and_then(|f| {
                let args = fw.plugin_args.get(name).cloned().unwrap_or(Value::Null);
                // The args built this plugin once; they build it again.
                (f.new)(&args, fts).ok()
            })
            .unwrap_or_else(|| p.clone());
        rebuilt.insert(name.to_string(), fresh.clone());
        Some(fresh)
    };
    let mut list = |l: &[Arc<dyn Plugin>]| -> Vec<Arc<dyn Plugin>> {
        l.iter().filter_map(&mut again).collect()
    };
    let pre_enqueue = list(&fw.pre_enqueue);
    let queue_sort = list(&fw.queue_sort);
    let pre_filter = list(&fw.pre_filter);
    let filter = list(&fw.filter);
    let post_filter = list(&fw.post_filter);
    let pre_score = list(&fw.pre_score);
    let reserve = list(&fw.reserve);
    let permit = list(&fw.permit);
    let pre_bind = list(&fw.pre_bind);
    let bind = list(&fw.bind);
    let post_bind = list(&fw.post_bind);
    let score = fw
        .score
        .iter()
        .filter_map(|w| {
            let plugin = again(&w.plugin)?;
            plugin.as_score()?;
            Some(WeightedPlugin {
                plugin,
                weight: w.weight,
            })
        })
        .collect();
    Framework {
        profile_name: fw.profile_name.clone(),
        percentage_of_nodes_to_score: fw.percentage_of_nodes_to_score,
        pre_enqueue,
        queue_sort,
        pre_filter,
        filter,
        post_filter,
        pre_score,
        score,
        reserve,
        permit,
        pre_bind,
        bind,
        post_bind,
        plugin_args: fw.plugin_args.clone(),
    }
}
