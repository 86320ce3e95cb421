//! `schedscope pods`: pending pods in scheduling-queue order, with their verdicts when
//! asked, alone or grouped by main reason.

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_cluster, load_config};
use crate::engine::cycle::CycleOptions;
use crate::model::Cluster;
use crate::render::escape::terminal_safe;
use crate::report::TraceView;

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
    let snapshot = load_cluster(source)?;
    let pending: Vec<_> = snapshot
        .cluster
        .pending_pods()
        .filter(|p| {
            source
                .live
                .namespace
                .as_deref()
                .is_none_or(|ns| p.namespace == ns)
        })
        .cloned()
        .collect();
    let pending =
        crate::engine::scheduler::queue_order(&config.profiles, &snapshot.cluster, pending);
    let verdicts = (args.verdicts || args.group_by.is_some())
        .then(|| pod_verdicts(&snapshot.cluster, &config.profiles, &pending));
    // No waiting pods in a snapshot; the state is the inspector's.
    let states: Vec<String> = pending
        .iter()
        .map(|p| {
            use crate::report::{PodState, pod_reason, pod_state};
            match pod_state(p, &[]) {
                PodState::Nominated => pod_reason(p, PodState::Nominated, &[]),
                s => s.label().to_string(),
            }
        })
        .collect();
    let table = PodsTable::new(&pending, &states, verdicts.as_deref());
    match (&verdicts, args.group_by) {
        (Some(verdicts), Some(PodsGroupBy::Reason)) => {
            let groups = crate::report::group_by_reason((0..pending.len()).zip(verdicts));
            table.header(out, "  ")?;
            for g in groups {
                let n = g.pods.len();
                writeln!(
                    out,
                    "\n{} · {}",
                    crate::report::format::thousands(n) + if n == 1 { " pod" } else { " pods" },
                    terminal_safe(&g.reason)
                )?;
                for i in g.pods {
                    table.row(out, "  ", i)?;
                }
            }
        }
        _ => {
            table.header(out, "")?;
            for i in 0..pending.len() {
                table.row(out, "", i)?;
            }
        }
    }
    Ok(())
}

/// Each pod's verdict, through `explain` as `schedscope explain` does (first
/// rejections only, as kube-scheduler). The cycles are independent: they run on
/// rayon's workers (as the engine's node chunks do), and come back in the pods'
/// order.
fn pod_verdicts(
    cluster: &Cluster,
    profiles: &[crate::engine::Framework],
    pods: &[Arc<crate::model::Pod>],
) -> Vec<crate::report::PodVerdict> {
    let opts = CycleOptions {
        now: crate::clock::wall_clock(),
        ..Default::default()
    };
    let verdict = |p: &Arc<crate::model::Pod>| match crate::explain::explain_pod(
        cluster,
        profiles,
        &p.key(),
        None,
        &opts,
    ) {
        Ok(t) => crate::report::PodVerdict::of(&t, &TraceView::new(&t)),
        Err(e) => e.verdict(),
    };
    use rayon::prelude::*;
    pods.par_iter().map(verdict).collect()
}

/// The `pods` columns, as wide as their longest entry so long names keep the table
/// aligned; VERDICT only when verdicts were computed.
struct PodsTable<'a> {
    pods: &'a [Arc<crate::model::Pod>],
    states: &'a [String],
    verdicts: Option<&'a [crate::report::PodVerdict]>,
    pod_w: usize,
    sched_w: usize,
    state_w: usize,
}

impl<'a> PodsTable<'a> {
    fn new(
        pods: &'a [Arc<crate::model::Pod>],
        states: &'a [String],
        verdicts: Option<&'a [crate::report::PodVerdict]>,
    ) -> Self {
        let width = |s: &str| terminal_safe(s).chars().count();
        PodsTable {
            pods,
            states,
            verdicts,
            pod_w: pods
                .iter()
                .map(|p| width(&p.key()))
                .max()
                .unwrap_or(0)
                .max(48),
            sched_w: pods
                .iter()
                .map(|p| width(&p.scheduler_name))
                .max()
                .unwrap_or(0)
                .max(20),
            state_w: states.iter().map(|s| width(s)).max().unwrap_or(0).max(5),
        }
    }

    fn header(&self, out: &mut dyn Write, indent: &str) -> Result<()> {
        let (pod_w, sched_w, state_w) = (self.pod_w, self.sched_w, self.state_w);
        match self.verdicts {
            Some(_) => writeln!(
                out,
                "{indent}{:<pod_w$} {:>11}  {:<sched_w$} {:<state_w$}  VERDICT",
                "POD", "PRIORITY", "SCHEDULER", "STATE"
            )?,
            None => writeln!(
                out,
                "{indent}{:<pod_w$} {:>11}  {:<sched_w$} STATE",
                "POD", "PRIORITY", "SCHEDULER"
            )?,
        }
        Ok(())
    }

    fn row(&self, out: &mut dyn Write, indent: &str, i: usize) -> Result<()> {
        let (pod_w, sched_w, state_w) = (self.pod_w, self.sched_w, self.state_w);
        let p = &self.pods[i];
        let key = p.key();
        let (key, sched) = (terminal_safe(&key), terminal_safe(&p.scheduler_name));
        let state = terminal_safe(&self.states[i]);
        match self.verdicts.and_then(|v| v.get(i)) {
            Some(v) => writeln!(
                out,
                "{indent}{key:<pod_w$} {:>11}  {sched:<sched_w$} {state:<state_w$}  {}",
                p.priority,
                terminal_safe(&v.label())
            )?,
            None => writeln!(
                out,
                "{indent}{key:<pod_w$} {:>11}  {sched:<sched_w$} {state}",
                p.priority
            )?,
        }
        Ok(())
    }
}
