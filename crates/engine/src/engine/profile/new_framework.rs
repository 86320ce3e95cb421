//! Building one profile's [`Framework`] from its merged plugin sets and plugin args
//! (upstream: pkg/scheduler/framework/runtime/framework.go, `NewFramework`):
//! initialise every needed plugin once, fill each extension point from its own set,
//! expand MultiPoint, then check queue sort, bind and score weights.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::config::v1::Plugins;
use crate::config::{Args, ExtensionPoint, aggregate};
use crate::engine::framework::{Framework, Plugin, WeightedPlugin};
use crate::engine::plugins::Registry;

/// `framework.MaxNodeScore`.
const MAX_NODE_SCORE: i64 = 100;
/// `framework.MaxTotalScore` (`math.MaxInt64`).
const MAX_TOTAL_SCORE: i64 = i64::MAX;

/// What the builder needs of one defaulted, validated profile.
pub struct ProfileSpec<'a> {
    pub name: &'a str,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub plugins: &'a Plugins,
    /// pluginConfig after defaulting, in order.
    pub plugin_config: &'a [(String, Args)],
    /// The release replayed; plugins are built with its gates.
    pub features: crate::version::Features,
}

/// Whether the plugin implements this point (upstream's type assertion).
fn implements(point: ExtensionPoint, p: &dyn Plugin) -> bool {
    match point {
        ExtensionPoint::PreFilter => p.as_pre_filter().is_some(),
        ExtensionPoint::Filter => p.as_filter().is_some(),
        ExtensionPoint::PostFilter => p.as_post_filter().is_some(),
        ExtensionPoint::Reserve => p.as_reserve().is_some(),
        ExtensionPoint::PreScore => p.as_pre_score().is_some(),
        ExtensionPoint::Score => p.as_score().is_some(),
        ExtensionPoint::PreBind => p.as_pre_bind().is_some(),
        ExtensionPoint::Bind => p.as_bind().is_some(),
        ExtensionPoint::PostBind => p.as_post_bind().is_some(),
        ExtensionPoint::Permit => p.as_permit().is_some(),
        ExtensionPoint::PreEnqueue => p.as_pre_enqueue().is_some(),
        ExtensionPoint::QueueSort => p.as_queue_sort().is_some(),
    }
}

/// `NewFramework` for one profile. The error is upstream's message, without the
/// `creating profile for scheduler name` prefix.
pub fn new_framework(registry: &Registry, spec: &ProfileSpec) -> Result<Framework, String> {
    let plugins = spec.plugins;
    let (built, plugin_args) = init_plugins(registry, spec)?;
    let mut lists = update_plugin_lists(plugins, &built)?;
    if !plugins.multi_point.enabled.is_empty() {
        expand_multi_point(plugins, &built, &mut lists)?;
    }

    let queue_sort = &lists[ExtensionPoint::QueueSort.index()];
    if queue_sort.len() != 1 {
        return Err(format!(
            "only one queue sort plugin required for profile with scheduler name {:?}, but got {}",
            spec.name,
            queue_sort.len()
        ));
    }
    if lists[ExtensionPoint::Bind.index()].is_empty() {
        return Err(format!(
            "at least one bind plugin is needed for profile with scheduler name {:?}",
            spec.name
        ));
    }

    let weights = score_weights(plugins, &built)?;
    let get = |point: ExtensionPoint| -> Vec<Arc<dyn Plugin>> {
        lists[point.index()]
            .iter()
            .filter_map(|n| built.get(n).cloned())
            .collect()
    };
    let mut score = Vec::new();
    for p in get(ExtensionPoint::Score) {
        // Checked by the plugin's own name, which could differ from the configured one.
        let Some(&weight) = weights.get(p.name()) else {
            return Err(format!(
                "score plugin {:?} is not configured with weight",
                p.name()
            ));
        };
        score.push(WeightedPlugin { plugin: p, weight });
    }

    Ok(Framework {
        profile_name: spec.name.to_string(),
        percentage_of_nodes_to_score: spec.percentage_of_nodes_to_score,
        pre_enqueue: get(ExtensionPoint::PreEnqueue),
        queue_sort: get(ExtensionPoint::QueueSort),
        pre_filter: get(ExtensionPoint::PreFilter),
        filter: get(ExtensionPoint::Filter),
        post_filter: get(ExtensionPoint::PostFilter),
        pre_score: get(ExtensionPoint::PreScore),
        score,
        reserve: get(ExtensionPoint::Reserve),
        permit: get(ExtensionPoint::Permit),
        pre_bind: get(ExtensionPoint::PreBind),
        bind: get(ExtensionPoint::Bind),
        post_bind: get(ExtensionPoint::PostBind),
        plugin_args,
    })
}

/// Plugins built by name, and the args of those that take args.
type Built<'r> = (BTreeMap<&'r str, Arc<dyn Plugin>>, BTreeMap<String, Value>);

/// Every plugin named in an enabled list (`pluginsNeeded`), initialised once with its
/// args; a plugin configured twice is an error first.
fn init_plugins<'r>(registry: &'r Registry, spec: &ProfileSpec) -> Result<Built<'r>, String> {
    let plugins = spec.plugins;
    // Plugins named in any enabled list, MultiPoint included (`pluginsNeeded`).
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    for point in ExtensionPoint::ALL {
        needed.extend(point.set(plugins).enabled.iter().map(|p| p.name.as_str()));
    }
    needed.extend(plugins.multi_point.enabled.iter().map(|p| p.name.as_str()));

    let mut config: BTreeMap<&str, &Args> = BTreeMap::new();
    for (name, args) in spec.plugin_config {
        if config.insert(name, args).is_some() {
            return Err(format!("repeated config for plugin {name}"));
        }
    }

    // Upstream walks its registry map in random order; the registry here is sorted, so
    // the first failing plugin by name is reported.
    let mut built: BTreeMap<&str, Arc<dyn Plugin>> = BTreeMap::new();
    let mut plugin_args = BTreeMap::new();
    for (name, factory) in registry {
        if !needed.contains(name) {
            continue;
        }
        let args = match (config.get(name), factory.args) {
            (Some(Args::Invalid(errs)), _) => {
                return Err(format!("initializing plugin {name:?}: {}", aggregate(errs)));
            }
            (Some(Args::Ready(v)), Some(_)) => v.clone(),
            // No entry: the defaulting step appends one for every args kind, but a
            // caller may not have; default here the same way.
            (None, Some(default_args)) => default_args(None, "")
                .map_err(|errs| format!("initializing plugin {name:?}: {}", aggregate(&errs)))?,
            // No args kind: in-tree plugins ignore args; out-of-tree ones get them raw.
            (Some(Args::Ready(v)), None) if factory.out_of_tree => v.clone(),
            (_, None) => Value::Null,
        };
        let p = (factory.new)(&args, &spec.features)
            .map_err(|e| format!("initializing plugin {name:?}: {e}"))?;
        if factory.args.is_some() {
            plugin_args.insert(name.to_string(), args);
        }
        built.insert(name, p);
    }
    Ok((built, plugin_args))
}

/// Each point from its own set (`updatePluginList`): plugin names by point index.
fn update_plugin_lists<'p>(
    plugins: &'p Plugins,
    built: &BTreeMap<&str, Arc<dyn Plugin>>,
) -> Result<Vec<Vec<&'p str>>, String> {
    let mut lists: Vec<Vec<&str>> = vec![Vec::new(); ExtensionPoint::ALL.len()];
    for point in ExtensionPoint::ALL {
        let list = &mut lists[point.index()];
        for ep in &point.set(plugins).enabled {
            let Some(p) = built.get(ep.name.as_str()) else {
                return Err(format!(
                    "{} {:?} does not exist",
                    point.type_name(),
                    ep.name
                ));
            };
            if !implements(point, p.as_ref()) {
                return Err(format!(
                    "plugin {:?} does not extend {} plugin",
                    ep.name,
                    point.type_name()
                ));
            }
            if list.contains(&ep.name.as_str()) {
                return Err(format!(
                    "plugin {:?} already registered as {:?}",
                    ep.name,
                    point.type_name()
                ));
            }
            list.push(&ep.name);
        }
    }
    Ok(lists)
}

/// Each Score plugin's weight (`getScoreWeights`): Score.enabled first, then
/// MultiPoint; the first occurrence wins. A MultiPoint plugin disabled at Score still
/// counts here, as upstream.
fn score_weights<'p>(
    plugins: &'p Plugins,
    built: &BTreeMap<&str, Arc<dyn Plugin>>,
) -> Result<BTreeMap<&'p str, i64>, String> {
    let mut weights: BTreeMap<&str, i64> = BTreeMap::new();
    let mut total = 0i64;
    for e in plugins
        .score
        .enabled
        .iter()
        .chain(&plugins.multi_point.enabled)
    {
        let Some(p) = built.get(e.name.as_str()) else {
            continue;
        };
        if !implements(ExtensionPoint::Score, p.as_ref()) || weights.contains_key(e.name.as_str()) {
            continue;
        }
        // A zero weight is not permitted; plugins are disabled explicitly instead.
        let w = match e.weight.unwrap_or(0) {
            0 => 1,
            w => w,
        };
        weights.insert(&e.name, i64::from(w));
        add_score_weight(&mut total, w)?;
    }
    Ok(weights)
}

/// The overflow guard of `getScoreWeights`: the sum of `weight × MaxNodeScore` must
/// stay within `MaxTotalScore`. Weights are int32 in the config, so only a total
/// already near the limit can trip it. Go's int64 arithmetic wraps, and kube-scheduler
/// v1.35 checks no weight's range: a negative weight makes `MaxTotalScore - total`
/// wrap to a large negative number, so the next Score plugin trips the guard. The
/// same wrapping arithmetic is used here, so the same configurations fail.
fn add_score_weight(total: &mut i64, weight: i32) -> Result<(), String> {
    let weight = i64::from(weight);
    if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE.wrapping_sub(*total) {
        let mut message = String::from("total score of Score plugins could overflow");
        if *total < 0 {
            message.push_str(
                " (a Score plugin before this one has a negative weight: kube-scheduler does not range-check weights, and a negative one wraps its running total)",
            );
        }
        return Err(message);
    }
    *total = total.wrapping_add(weight * MAX_NODE_SCORE);
    Ok(())
}

/// `expandMultiPointPlugins`: per point, MultiPoint plugins that implement it and are
/// not disabled there are added; a plugin also enabled at the point keeps the point's
/// entry ("override"). Final order: overrides (point order), MultiPoint-only
/// (MultiPoint order), the point's other entries.
fn expand_multi_point<'a>(
    plugins: &'a Plugins,
    built: &BTreeMap<&str, Arc<dyn Plugin>>,
    lists: &mut [Vec<&'a str>],
) -> Result<(), String> {
    for point in ExtensionPoint::ALL {
        let set = point.set(plugins);
        let disabled: BTreeSet<&str> = set.disabled.iter().map(|p| p.name.as_str()).collect();
        if disabled.contains("*") {
            continue;
        }
        let enabled = &lists[point.index()];
        let mut overrides: BTreeSet<&str> = BTreeSet::new();
        let mut multi: Vec<&str> = Vec::new();
        for ep in &plugins.multi_point.enabled {
            let name = ep.name.as_str();
            let Some(p) = built.get(name) else {
                return Err(format!("{} {:?} does not exist", point.type_name(), name));
            };
            if !implements(point, p.as_ref()) || disabled.contains(name) {
                continue;
            }
            if enabled.contains(&name) {
                overrides.insert(name);
                continue;
            }
            if multi.contains(&name) {
                return Err(format!(
                    "plugin {name:?} already registered as {:?}",
                    point.type_name()
                ));
            }
            multi.push(name);
        }
        let (over, rest): (Vec<&str>, Vec<&str>) =
            enabled.iter().partition(|n| overrides.contains(*n));
        let mut out = over;
        out.extend(multi);
        out.extend(rest);
        lists[point.index()] = out;
    }
    Ok(())
}

/// One plugin of a point in a built profile; `weight` only at Score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginEntry {
    pub name: String,
    pub weight: Option<i64>,
}

/// Per extension point (in [`ExtensionPoint::ALL`] order), the plugins of a built
/// profile: what a Profile pane shows.
pub fn describe(fw: &Framework) -> Vec<(ExtensionPoint, Vec<PluginEntry>)> {
    let names = |l: &[Arc<dyn Plugin>]| -> Vec<PluginEntry> {
        l.iter()
            .map(|p| PluginEntry {
                name: p.name().to_string(),
                weight: None,
            })
            .collect()
    };
    ExtensionPoint::ALL
        .iter()
        .map(|&point| {
            let list = match point {
                ExtensionPoint::PreFilter => names(&fw.pre_filter),
                ExtensionPoint::Filter => names(&fw.filter),
                ExtensionPoint::PostFilter => names(&fw.post_filter),
                ExtensionPoint::Reserve => names(&fw.reserve),
                ExtensionPoint::PreScore => names(&fw.pre_score),
                ExtensionPoint::Score => fw
                    .score
                    .iter()
                    .map(|w| PluginEntry {
                        name: w.plugin.name().to_string(),
                        weight: Some(w.weight),
                    })
                    .collect(),
                ExtensionPoint::PreBind => names(&fw.pre_bind),
                ExtensionPoint::Bind => names(&fw.bind),
                ExtensionPoint::PostBind => names(&fw.post_bind),
                ExtensionPoint::Permit => names(&fw.permit),
                ExtensionPoint::PreEnqueue => names(&fw.pre_enqueue),
                ExtensionPoint::QueueSort => names(&fw.queue_sort),
            };
            (point, list)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_guard() {
        let mut total = 0;
        add_score_weight(&mut total, 3).unwrap();
        assert_eq!(total, 300);
        let mut total = i64::MAX - 250;
        add_score_weight(&mut total, 2).unwrap();
        assert_eq!(total, i64::MAX - 50);
        assert_eq!(
            add_score_weight(&mut total, 1).unwrap_err(),
            "total score of Score plugins could overflow"
        );
        let mut total = 0;
        add_score_weight(&mut total, i32::MAX).unwrap();
        assert_eq!(total, i64::from(i32::MAX) * 100);
    }

    /// A negative weight: accepted on its own (Go multiplies it in), but the next
    /// plugin's check wraps in Go's int64 and fails. Checked arithmetic would panic
    /// here in a debug build.
    #[test]
    fn negative_weight_wraps_like_go() {
        let mut total = 0;
        add_score_weight(&mut total, -1).unwrap();
        assert_eq!(total, -100);
        let err = add_score_weight(&mut total, 1).unwrap_err();
        assert!(
            err.starts_with("total score of Score plugins could overflow (a Score plugin before this one has a negative weight"),
            "{err}"
        );
        let mut total = 0;
        add_score_weight(&mut total, i32::MIN).unwrap();
        assert_eq!(total, i64::from(i32::MIN) * 100);
    }
}
