//! What a load tells the user beside the model: objects that replaced others, files
//! left out, older apiVersions read, and gaps that make answers differ from what the
//! real scheduler sees.

use super::dumps::{self, DumpKind};
use crate::model::Cluster;
use crate::source::LoadReport;

/// `items` joined for a sentence, the first few named and the rest counted.
fn some_of(items: &[String]) -> String {
    const NAMED: usize = 3;
    let mut s = items
        .iter()
        .take(NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > NAMED {
        s.push_str(&format!(" and {} more", items.len() - NAMED));
    }
    s
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the user should know about the snapshot: objects that replaced others, files
/// left out, older apiVersions read, and gaps that make answers differ from what the
/// real scheduler sees.
pub(super) fn warnings(report: &LoadReport, cluster: &Cluster) -> Vec<String> {
    let mut out = Vec::new();
    if !report.replaced.is_empty() {
        out.push(format!(
            "{} replaced an earlier, different object of the same kind and name (the \
             one read last is kept): {}",
            plural(report.replaced.len(), "object", "objects"),
            some_of(&report.replaced)
        ));
    }
    if !report.skipped_files.is_empty() {
        // Grouped by why, in the order met: a dump may hold thousands.
        let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
        for (f, why) in &report.skipped_files {
            match groups.iter_mut().find(|(w, _)| w == why) {
                Some((_, files)) => files.push(f.clone()),
                None => groups.push((why, vec![f.clone()])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(why, files)| match files.as_slice() {
                [one] => format!("{one} ({why})"),
                many => format!("{} {why} ({})", many.len(), some_of(many)),
            })
            .collect();
        out.push(format!(
            "left out {} holding no Kubernetes objects: {}",
            plural(report.skipped_files.len(), "file", "files"),
            parts.join("; ")
        ));
    }
    for (what, n) in &report.older_versions {
        out.push(format!(
            "read {} {what} as its current version (the fields the scheduler reads are the same)",
            n
        ));
    }
    let orphans: Vec<String> = cluster
        .pods_on_absent_nodes()
        .iter()
        .filter_map(|p| {
            let node = p.node_name.as_deref()?;
            Some(format!("{}/{} on {node}", p.namespace, p.name))
        })
        .collect();
    if !orphans.is_empty() {
        out.push(format!(
            "{} bound to nodes missing from the snapshot ({}): if those nodes exist, \
             answers may differ from the real scheduler's; take nodes and pods in one \
             snapshot",
            plural(orphans.len(), "pod is", "pods are"),
            some_of(&orphans)
        ));
    }
    let mut namespaces = cluster.pods().map(|p| p.namespace.as_str());
    if let Some(first) = namespaces.next()
        && namespaces.all(|ns| ns == first)
        && !cluster.nodes().is_empty()
        && cluster.pods().any(|p| p.node_name.is_some())
        // Namespace objects of other namespaces mean a cluster-wide dump (as `snapshot
        // save` takes), whose other namespaces simply hold no pods.
        && cluster.namespaces.keys().all(|ns| ns == first)
    {
        out.push(format!(
            "every pod in the snapshot is in namespace {first}: pods of other namespaces \
             hold node resources and count for affinity and spread; take pods with \
             `kubectl get pods -A`"
        ));
    }
    out
}

/// What a dump's kind leaves out that the scheduler would have seen.
pub(super) fn dump_warnings(facts: &dumps::DumpFacts, cluster: &Cluster) -> Vec<String> {
    let mut out = Vec::new();
    match facts.kind {
        Some(DumpKind::ClusterInfoDump)
            if cluster
                .pods()
                .all(|p| matches!(p.namespace.as_str(), "default" | "kube-system")) =>
        {
            out.push(
                "this cluster-info dump holds pods of kube-system and default only (kubectl's \
                 default): pods of other namespaces hold node resources and count for \
                 affinity and spread; take it with `--all-namespaces`"
                    .to_string(),
            );
        }
        Some(DumpKind::InsightsArchive) => out.push(
            "an Insights archive holds only some pods (of OpenShift's namespaces, and \
             failing ones): the pods it leaves out hold node resources and count for \
             affinity and spread, so answers may differ from the real scheduler's"
                .to_string(),
        ),
        _ => {}
    }
    out
}
