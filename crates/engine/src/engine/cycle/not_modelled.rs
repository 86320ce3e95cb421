//! What this replay does not model for a pod: plugins that say so, and plugins that
//! read a kind the source could not read. schedscope's own; no upstream counterpart.

use std::collections::BTreeSet;

use crate::engine::framework::Framework;
use crate::engine::trace::NotModelled;
use crate::model::{Cluster, Pod};

/// Plugins that read a kind a live source may be refused (RBAC), and what they do
/// without it.
const OPTIONAL_KIND_READERS: &[(&str, &str, &str)] = &[
    (
        "VolumeAttachment",
        "NodeVolumeLimits",
        "attached volumes counted without VolumeAttachments",
    ),
    (
        "CSIStorageCapacity",
        "VolumeBinding",
        "storage capacity checked without CSIStorageCapacities",
    ),
    ("PodGroup", "Coscheduling", "gangs formed without PodGroups"),
    (
        "DeviceClass",
        "DynamicResources",
        "claims allocated without DeviceClasses",
    ),
    (
        "ResourceSlice",
        "DynamicResources",
        "claims allocated without ResourceSlices",
    ),
    (
        "ResourceClaim",
        "DynamicResources",
        "claims resolved without ResourceClaims",
    ),
    (
        "ResourceClaimTemplate",
        "DynamicResources",
        "claims resolved without ResourceClaimTemplates",
    ),
];

pub(super) fn not_modelled(fw: &Framework, cluster: &Cluster, pod: &Pod) -> Vec<NotModelled> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let all = fw
        .pre_enqueue
        .iter()
        .chain(&fw.queue_sort)
        .chain(&fw.pre_filter)
        .chain(&fw.filter)
        .chain(&fw.post_filter)
        .chain(&fw.pre_score)
        .chain(fw.score.iter().map(|w| &w.plugin))
        .chain(&fw.reserve)
        .chain(&fw.permit)
        .chain(&fw.pre_bind)
        .chain(&fw.bind)
        .chain(&fw.post_bind);
    for p in all {
        if !seen.insert(p.name().to_string()) {
            continue;
        }
        if let Some(what) = p.not_modelled(pod) {
            out.push(NotModelled {
                plugin: p.name().to_string(),
                what,
            });
        }
        for (kind, plugin, what) in OPTIONAL_KIND_READERS {
            if p.name() == *plugin
                && let Some(why) = cluster.unreadable_kinds.get(*kind)
            {
                out.push(NotModelled {
                    plugin: plugin.to_string(),
                    what: format!("{what} (not readable: {why})"),
                });
            }
        }
    }
    out.sort_by(|a, b| a.plugin.cmp(&b.plugin));
    out
}
