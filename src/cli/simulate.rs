//! `schedscope simulate`: the scheduler loop over every pending pod until the queue
//! settles, as a text timeline or JSON events.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_config, load_source, with_dump_profile};
use super::whatif::WhatIfArgs;
use crate::render::escape::terminal_safe;

#[derive(Debug, Args, Clone)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format: a text timeline or JSON events.
    #[arg(long, short = 'o', value_enum, default_value_t = SimFormat::Text)]
    pub output: SimFormat,
    /// Include each attempt's full trace in the JSON output.
    #[arg(long)]
    pub traces: bool,
    /// Stop after this many scheduling attempts.
    #[arg(long)]
    pub max_attempts: Option<usize>,
    /// Stop when simulated time passes this many seconds after the start.
    #[arg(long, default_value_t = 3600)]
    pub max_seconds: u64,
    /// Cluster edits (node.*, pod.evict=NS/NAME) applied to the model before the
    /// loop runs; nothing is written to any cluster.
    #[command(flatten)]
    pub what_if: WhatIfArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimFormat {
    Text,
    Json,
}

pub fn run_simulate(args: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    use crate::engine::scheduler::{SimOptions, simulate};
    use crate::render::simulation;
    let edits = args.what_if.cluster_edits("simulate")?;
    let snapshot = load_source(source)?;
    let config = load_config(source.config.as_deref())?;
    let config = with_dump_profile(config, source, &snapshot.report.dump)?;
    let written: Vec<String> = edits.iter().map(|e| e.to_string()).collect();
    // No copy of a large model when nothing is edited.
    let (cluster, notes) = if edits.is_empty() {
        (snapshot.cluster, Vec::new())
    } else {
        let edited = crate::whatif::apply(&snapshot.cluster, None, &edits)?;
        let notes = edited.note_lines();
        (edited.cluster, notes)
    };
    let opts = SimOptions {
        keep_traces: args.traces,
        max_attempts: args.max_attempts,
        max_duration: std::time::Duration::from_secs(args.max_seconds),
        ..SimOptions::default()
    };
    let release = cluster.kube_version.clone();
    let result = simulate(cluster, config, opts);
    match args.output {
        SimFormat::Text => {
            let mut text = String::new();
            if !edits.is_empty() {
                text += &crate::render::whatif::edits_header(&written, &notes);
            }
            // The release replayed, when one is chosen (as `explain` says it).
            if let Some(r) = &release {
                text += &format!("Release    {r}\n\n");
            }
            text += &simulation::render_timeline(&result);
            out.write_all(terminal_safe(&text).as_bytes())?
        }
        SimFormat::Json => {
            let mut v = simulation::to_json(&result, args.traces);
            crate::render::whatif::add_edits_json(&mut v, &written, &notes);
            if let (Some(r), Some(o)) = (&release, v.as_object_mut()) {
                o.insert(
                    "kube_version".into(),
                    serde_json::json!({
                        "version": r.version.to_string(),
                        "replays": r.version.resolved().to_string(),
                        "source": r.source,
                        "from": r.source.phrase(),
                    }),
                );
            }
            crate::render::json::write_pretty(&mut *out, &v)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
