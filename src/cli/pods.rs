//! `schedscope pods`: pending pods in scheduling-queue order, with their verdicts when
//! asked, alone or grouped by main reason.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_cluster, load_config, with_dump_profile};
use super::whatif::WhatIfArgs;
use crate::engine::Framework;
use crate::explain::pods_listing;
use crate::model::Cluster;
use crate::render;
use crate::render::escape::terminal_safe;

#[derive(Debug, Args, Clone)]
pub struct PodsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Replay each listed pod and add its verdict: the node it would land on, or the
    /// main reason it lands nowhere (the `explain` table's largest rejection group).
    /// Off by default: one scheduling cycle per pod (about 10 s for 1,000 pending
    /// pods on 5,000 nodes).
    #[arg(long)]
    pub verdicts: bool,
    /// One section per verdict reason, the most pods first, with its count (implies
    /// --verdicts).
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<PodsGroupBy>,
    /// Cluster edits (node.*, pod.evict=NS/NAME; implies --verdicts): the listing of
    /// the edited model, then which pending pods the edits make schedulable (each
    /// replayed alone) and which they stop.
    #[command(flatten)]
    pub what_if: WhatIfArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PodsGroupBy {
    /// The verdict's main reason.
    Reason,
}

pub fn run_pods(args: &PodsArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    let edits = args.what_if.cluster_edits("pods")?;
    // The order is the configuration's QueueSort plugin's, so a bad --config is an
    // error here as in every other command.
    let config = load_config(source.config.as_deref())?;
    let loaded = load_cluster(source)?;
    let config = with_dump_profile(config, source, &loaded.dump)?;
    if let Some(ns) = source.live.namespace.as_deref() {
        empty_namespace(&loaded.cluster, ns)?;
    }
    if !edits.is_empty() {
        if let Some(r) = &loaded.cluster.kube_version {
            writeln!(out, "Release    {}\n", terminal_safe(&r.to_string()))?;
        }
        let text = pods_what_if_text(
            &loaded.cluster,
            &edits,
            &config.profiles,
            source.live.namespace.as_deref(),
            args.group_by == Some(PodsGroupBy::Reason),
        )?;
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    // The release replayed, when one is chosen (as `explain` says it).
    if let Some(r) = &loaded.cluster.kube_version {
        writeln!(out, "Release    {}\n", terminal_safe(&r.to_string()))?;
    }
    let text = pods_text(
        &loaded.cluster,
        &config.profiles,
        source.live.namespace.as_deref(),
        args.verdicts || args.group_by.is_some(),
        args.group_by == Some(PodsGroupBy::Reason),
    );
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// A namespace without a single pod is an error, as a missing pod is for `explain`
/// (exit 1): an empty table would read as "nothing pending there", when the name is
/// most likely mistyped. It names the namespaces that have pods.
fn empty_namespace(cluster: &Cluster, namespace: &str) -> Result<()> {
    if cluster.pods().any(|p| p.namespace == namespace) {
        return Ok(());
    }
    let with_pods: std::collections::BTreeSet<&str> =
        cluster.pods().map(|p| p.namespace.as_str()).collect();
    let names: Vec<&str> = with_pods.into_iter().collect();
    let shown = if names.len() > 20 {
        format!("{}, … ({} in all)", names[..20].join(", "), names.len())
    } else {
        names.join(", ")
    };
    if names.is_empty() {
        anyhow::bail!("namespace {namespace:?} has no pods (the snapshot has no pods at all)");
    }
    anyhow::bail!("namespace {namespace:?} has no pods; namespaces with pods: {shown}")
}

/// What `schedscope pods` prints for a cluster: the listing
/// ([`crate::explain::pods_listing`]) as text, grouped by main reason when asked.
pub fn pods_text(
    cluster: &Cluster,
    profiles: &[Framework],
    namespace: Option<&str>,
    verdicts: bool,
    grouped: bool,
) -> String {
    let now = verdicts.then(crate::clock::wall_clock);
    let (list, verdicts) = pods_listing(cluster, profiles, namespace, now);
    let differs = recorded_differs(cluster, &list, verdicts.as_deref());
    render::pods::render_marked(&list, verdicts.as_deref(), grouped, &differs)
}

/// Which listed verdicts differ from the real scheduler's recorded word.
fn recorded_differs(
    cluster: &Cluster,
    list: &crate::report::PodsList,
    verdicts: Option<&[crate::report::PodVerdict]>,
) -> Vec<bool> {
    let verdicts = verdicts.unwrap_or_default();
    list.rows
        .iter()
        .zip(verdicts)
        .map(|(r, v)| crate::report::recorded::verdict_differs(cluster, &r.pod, v))
        .collect()
}

/// `pods --what-if`: the edits, the edited model's listing with verdicts, and what
/// changed for the pending pods ([`crate::report::whatif::PodsChange`]).
pub fn pods_what_if_text(
    cluster: &Cluster,
    edits: &[crate::whatif::Edit],
    profiles: &[Framework],
    namespace: Option<&str>,
    grouped: bool,
) -> Result<String> {
    let edited = crate::whatif::apply(cluster, None, edits)?;
    let now = Some(crate::clock::wall_clock());
    let keyed = |list: &crate::report::PodsList, v: Option<Vec<crate::report::PodVerdict>>| {
        let keys = list.rows.iter().map(|r| r.key());
        keys.zip(v.unwrap_or_default()).collect::<Vec<_>>()
    };
    let (before_list, before) = pods_listing(cluster, profiles, namespace, now);
    let (after_list, after) = pods_listing(&edited.cluster, profiles, namespace, now);
    let edits: Vec<String> = edits.iter().map(|e| e.to_string()).collect();
    let notes = edited.note_lines();
    let mut text =
        render::escape::terminal_safe(&render::whatif::edits_header(&edits, &notes)).into_owned();
    text += &render::pods::render(&after_list, after.as_deref(), grouped);
    let change = crate::report::whatif::PodsChange::of(
        &edits,
        &keyed(&before_list, before),
        &keyed(&after_list, after),
    );
    text.push('\n');
    for line in change.lines() {
        text += &render::escape::terminal_safe(&line);
        text.push('\n');
    }
    Ok(text)
}
