//! v1 defaulting (upstream: pkg/scheduler/apis/config/v1/default_plugins.go and
//! defaults.go): the default plugin set (`getDefaultPlugins`) and the merge of a
//! profile's plugin sets into it (`mergePlugins`).

use std::collections::BTreeMap;

use super::v1::{PluginRef, PluginSet, Plugins};
use crate::version::Features;

pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
pub const DEFAULT_PARALLELISM: i32 = 16;
/// `config.DefaultPercentageOfNodesToScore`: 0 = adaptive.
pub const DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE: i32 = 0;
pub const DEFAULT_POD_INITIAL_BACKOFF_SECONDS: i64 = 1;
pub const DEFAULT_POD_MAX_BACKOFF_SECONDS: i64 = 10;

/// The 1.35 default MultiPoint list. DynamicResources sits before DefaultPreemption
/// because the `DynamicResourceAllocation` gate is GA and locked on (upstream inserts it
/// there so that PostFilter deallocates an idle claim before evicting pods).
pub const DEFAULT_MULTI_POINT: [(&str, Option<i32>); 19] = [
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", Some(3)),
    ("NodeAffinity", Some(2)),
    ("NodePorts", None),
    ("NodeResourcesFit", Some(1)),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", Some(2)),
    ("InterPodAffinity", Some(2)),
    ("DynamicResources", Some(2)),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", Some(1)),
    ("ImageLocality", Some(1)),
    ("DefaultBinder", None),
];

/// `getDefaultPlugins()`: only MultiPoint has defaults in v1.
pub fn default_plugins() -> Plugins {
    default_plugins_at(&Features::default())
}

/// `getDefaultPlugins()` of the release `fts` belongs to: without DynamicResources
/// while `DynamicResourceAllocation` is off (1.32, 1.33; `applyFeatureGates`).
pub fn default_plugins_at(fts: &Features) -> Plugins {
    Plugins {
        multi_point: PluginSet {
            enabled: DEFAULT_MULTI_POINT
                .iter()
                .filter(|(n, _)| fts.dynamic_resource_allocation || *n != "DynamicResources")
                // Its Score (weight 2) is new in 1.35.
                .map(|(n, w)| match *n {
                    "DynamicResources" if !fts.dra_score() => PluginRef::new(n, None),
                    _ => PluginRef::new(n, *w),
                })
                .collect(),
            disabled: Vec::new(),
        },
        ..Plugins::default()
    }
}

/// `mergePlugins(getDefaultPlugins(), custom)`.
pub fn merge_plugins(custom: Option<&Plugins>) -> Plugins {
    merge_plugins_at(custom, &Features::default())
}

/// [`merge_plugins`] over the default plugins of the release `fts` belongs to.
pub fn merge_plugins_at(custom: Option<&Plugins>, fts: &Features) -> Plugins {
    let defaults = default_plugins_at(fts);
    let Some(c) = custom else { return defaults };
    Plugins {
        pre_enqueue: merge_plugin_set(&defaults.pre_enqueue, &c.pre_enqueue),
        queue_sort: merge_plugin_set(&defaults.queue_sort, &c.queue_sort),
        pre_filter: merge_plugin_set(&defaults.pre_filter, &c.pre_filter),
        filter: merge_plugin_set(&defaults.filter, &c.filter),
        post_filter: merge_plugin_set(&defaults.post_filter, &c.post_filter),
        pre_score: merge_plugin_set(&defaults.pre_score, &c.pre_score),
        score: merge_plugin_set(&defaults.score, &c.score),
        reserve: merge_plugin_set(&defaults.reserve, &c.reserve),
        permit: merge_plugin_set(&defaults.permit, &c.permit),
        pre_bind: merge_plugin_set(&defaults.pre_bind, &c.pre_bind),
        bind: merge_plugin_set(&defaults.bind, &c.bind),
        post_bind: merge_plugin_set(&defaults.post_bind, &c.post_bind),
        multi_point: merge_plugin_set(&defaults.multi_point, &c.multi_point),
    }
}

/// `mergePluginSet`: disabled = custom ∪ default disabled (names only). Unless `"*"` is
/// disabled, default entries not disabled are kept in order, each replaced in place by
/// the custom entry of the same name; custom entries that replaced nothing follow in
/// their order, duplicates included (framework construction rejects those).
pub fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let disabled: Vec<PluginRef> = custom
        .disabled
        .iter()
        .chain(&default.disabled)
        .map(|p| PluginRef::new(&p.name, None))
        .collect();
    let is_disabled = |name: &str| disabled.iter().any(|d| d.name == name);

    // Like upstream's map from name to (index, plugin): a repeated custom name keeps
    // its last occurrence.
    let mut custom_by_name: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in custom.enabled.iter().enumerate() {
        custom_by_name.insert(&p.name, i);
    }

    let mut enabled = Vec::new();
    let mut replaced = vec![false; custom.enabled.len()];
    if !is_disabled("*") {
        for d in &default.enabled {
            if is_disabled(&d.name) {
                continue;
            }
            match custom_by_name.get(d.name.as_str()) {
                Some(&i) => {
                    replaced[i] = true;
                    enabled.push(custom.enabled[i].clone());
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, p) in custom.enabled.iter().enumerate() {
        if !replaced[i] {
            enabled.push(p.clone());
        }
    }
    PluginSet { enabled, disabled }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(enabled: &[(&str, Option<i32>)], disabled: &[&str]) -> PluginSet {
        PluginSet {
            enabled: enabled.iter().map(|(n, w)| PluginRef::new(n, *w)).collect(),
            disabled: disabled.iter().map(|n| PluginRef::new(n, None)).collect(),
        }
    }

    fn names(s: &PluginSet) -> Vec<(&str, Option<i32>)> {
        s.enabled
            .iter()
            .map(|p| (p.name.as_str(), p.weight))
            .collect()
    }

    #[test]
    fn merge_plugin_set_cases() {
        let default = set(&[("A", Some(1)), ("B", None), ("C", Some(2))], &[]);
        struct Case {
            name: &'static str,
            custom: PluginSet,
            want: Vec<(&'static str, Option<i32>)>,
            want_disabled: Vec<&'static str>,
        }
        let cases = [
            Case {
                name: "no custom keeps defaults",
                custom: set(&[], &[]),
                want: vec![("A", Some(1)), ("B", None), ("C", Some(2))],
                want_disabled: vec![],
            },
            Case {
                name: "disable one",
                custom: set(&[], &["B"]),
                want: vec![("A", Some(1)), ("C", Some(2))],
                want_disabled: vec!["B"],
            },
            Case {
                name: "replace in place keeps order, user weight wins",
                custom: set(&[("C", Some(7)), ("D", None)], &[]),
                want: vec![("A", Some(1)), ("B", None), ("C", Some(7)), ("D", None)],
                want_disabled: vec![],
            },
            Case {
                name: "star disables all defaults, custom kept",
                custom: set(&[("C", None), ("A", Some(4))], &["*"]),
                want: vec![("C", None), ("A", Some(4))],
                want_disabled: vec!["*"],
            },
            Case {
                name: "disabled and re-enabled moves to the end",
                custom: set(&[("A", Some(9))], &["A"]),
                want: vec![("B", None), ("C", Some(2)), ("A", Some(9))],
                want_disabled: vec!["A"],
            },
            Case {
                name: "duplicate custom: last replaces, first appended",
                custom: set(&[("B", Some(1)), ("B", Some(2))], &[]),
                want: vec![
                    ("A", Some(1)),
                    ("B", Some(2)),
                    ("C", Some(2)),
                    ("B", Some(1)),
                ],
                want_disabled: vec![],
            },
        ];
        for c in cases {
            let got = merge_plugin_set(&default, &c.custom);
            assert_eq!(names(&got), c.want, "{}", c.name);
            let dis: Vec<&str> = got.disabled.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(dis, c.want_disabled, "{}", c.name);
        }
    }

    #[test]
    fn disabled_entries_drop_weights() {
        let got = merge_plugin_set(&PluginSet::default(), &set(&[], &[]));
        assert!(got.enabled.is_empty());
        let custom = PluginSet {
            enabled: vec![],
            disabled: vec![PluginRef::new("X", Some(5))],
        };
        assert_eq!(
            merge_plugin_set(&PluginSet::default(), &custom).disabled,
            vec![PluginRef::new("X", None)]
        );
    }

    #[test]
    fn no_custom_plugins_gives_defaults() {
        let p = merge_plugins(None);
        assert_eq!(p.multi_point.enabled.len(), 19);
        assert!(p.score.enabled.is_empty());
        assert_eq!(
            p.multi_point.enabled[14],
            PluginRef::new("DynamicResources", Some(2))
        );
        assert_eq!(p.multi_point.enabled[15].name, "DefaultPreemption");
    }
}
