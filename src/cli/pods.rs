//! `schedscope pods`: pending pods in scheduling-queue order, with their verdicts when
//! asked, alone or grouped by main reason.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_cluster, load_config};
use crate::engine::Framework;
use crate::explain::pods_listing;
use crate::model::Cluster;
use crate::render;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PodsGroupBy {
    /// The verdict's main reason.
    Reason,
}

pub fn run_pods(args: &PodsArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    // The order is the configuration's QueueSort plugin's, so a bad --config is an
    // error here as in every other command.
    let config = load_config(source.config.as_deref())?;
    let loaded = load_cluster(source)?;
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
    render::pods::render(&list, verdicts.as_deref(), grouped)
}
