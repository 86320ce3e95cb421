//! `schedscope capacity`: how many more copies of a pod fit, placed one after another
//! by the full scheduling cycle (no preemption), what stops the next one, and where
//! they went; for a pod of the cluster or one from a file, on the model as loaded or
//! under what-if edits.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_cluster, load_config, with_dump_profile};
use super::whatif::WhatIfArgs;
use crate::capacity::capacity;
use crate::engine::cycle::CycleOptions;
use crate::render::escape::terminal_safe;
use crate::report::capacity::CapacityAnswer;

#[derive(Debug, Args, Clone)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The pod to copy, as NAMESPACE/NAME (a bare NAME is in --namespace, else
    /// `default`); pending or running.
    #[arg(value_name = "NAMESPACE/POD", required_unless_present = "pod_file")]
    pub pod: Option<String>,
    /// A pod that does not exist yet: a Pod manifest, or a Deployment, StatefulSet,
    /// Job, ReplicaSet or DaemonSet whose template is sized (YAML or JSON).
    #[arg(long, value_name = "FILE", conflicts_with = "pod")]
    pub pod_file: Option<PathBuf>,
    /// The most copies to place.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max: usize,
    /// How many per-node rows the table shows (JSON has all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = CapacityFormat::Table)]
    pub output: CapacityFormat,
    #[command(flatten)]
    pub what_if: WhatIfArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CapacityFormat {
    Table,
    Json,
}

pub fn run_capacity(args: &CapacityArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    let edits = args.what_if.edits()?;
    let config = load_config(source.config.as_deref())?;
    let loaded = load_cluster(source)?;
    let config = with_dump_profile(config, source, &loaded.dump)?;
    let template = match (&args.pod, &args.pod_file) {
        (_, Some(path)) => {
            crate::source::template::read_pod_file(path, &loaded.cluster)
                .with_context(|| format!("cannot read the pod of --pod-file {}", path.display()))?
                .pod
        }
        (Some(pod), None) => {
            let key = source.pod_key(pod);
            let found = loaded.cluster.pod(&key).map(|p| p.as_ref().clone());
            found.with_context(|| {
                let mut all = source.clone();
                all.live.namespace = None;
                format!(
                    "pod {key:?} is not in the snapshot; `{}` lists the pending ones",
                    all.command_line("pods")
                )
            })?
        }
        (None, None) => anyhow::bail!("name a pod, or give --pod-file FILE"),
    };
    // Edits change a copy of the model, and pod edits the template.
    let edited = crate::whatif::apply(&loaded.cluster, Some(&template), &edits)?;
    let template = edited.pod.clone().unwrap_or(template);
    let opts = CycleOptions {
        now: crate::clock::wall_clock(),
        ..Default::default()
    };
    let cap = capacity(
        &edited.cluster,
        &config.profiles,
        &template,
        args.max,
        &opts,
    )?;
    let answer = CapacityAnswer::of(&cap);
    let edits: Vec<String> = edits.iter().map(|e| e.to_string()).collect();
    let notes = edited.note_lines();
    match args.output {
        CapacityFormat::Table => {
            let mut text = String::new();
            if !edits.is_empty() {
                text += &crate::render::whatif::edits_header(&edits, &notes);
            }
            text += &crate::render::capacity::render(&answer, args.top);
            out.write_all(terminal_safe(&text).as_bytes())?;
        }
        CapacityFormat::Json => {
            let mut v = serde_json::to_value(&answer)?;
            crate::render::whatif::add_edits_json(&mut v, &edits, &notes);
            crate::render::json::write_pretty(&mut *out, &v)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
