//! `schedscope explain`: one pod's replay, as a table, JSON or YAML.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_cluster, load_config};
use super::timings::{Timings, timed_load};
use crate::engine::cycle::{CycleOptions, PhaseClock};
use crate::explain::explain;
use crate::render::escape::terminal_safe;
use crate::render::{json, table};
use crate::report::{Answer, RecordedWord};

#[derive(Debug, Args, Clone)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The pod, as NAMESPACE/NAME (a bare NAME is in --namespace, else `default`).
    #[arg(value_name = "NAMESPACE/POD")]
    pub pod: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// Also run every filter plugin on every node (always on for json and yaml).
    #[arg(long)]
    pub all_filters: bool,
    /// How many top-scoring nodes the table shows.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print how long each phase took on stderr (load, scheduling cycle and its
    /// PreFilter, Filter and Score, render), one `phase: value unit` line each.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
}

pub fn run_explain(args: &ExplainArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    let timings = args.timings.then(|| Arc::new(Timings::new()));
    let loaded = match &timings {
        Some(t) => timed_load(source, t)?,
        None => load_cluster(source)?,
    };
    let config = load_config(source.config.as_deref())?;
    let opts = CycleOptions {
        all_filters: args.all_filters || args.output != Format::Table,
        now: crate::clock::wall_clock(),
        timer: timings
            .clone()
            .map(|t| crate::engine::cycle::PhaseTimer(t as Arc<dyn PhaseClock>)),
        ..Default::default()
    };
    let cycle_start = timings.as_ref().map(|t| t.now());
    let trace = explain(&loaded.cluster, &config, &source.pod_key(&args.pod), &opts).map_err(
        |e| match e {
            // Name the command that lists them, with this run's own source flags.
            crate::explain::ExplainError::PodNotFound { .. } => {
                let mut all = source.clone();
                all.live.namespace = None;
                anyhow::anyhow!("{e}; `{}` lists them", all.command_line("pods"))
            }
            e => e.into(),
        },
    )?;
    if let (Some(t), Some(start)) = (&timings, cycle_start) {
        t.add("scheduling cycle", t.now() - start);
    }
    let render_start = timings.as_ref().map(|t| t.now());
    // The rejections' exact causes and the pod's needs, from the cluster the replay
    // ran on; live, the real scheduler's word beside it.
    let answer = Answer::of_replay(&trace, &loaded.cluster, &config.profiles).with_word(
        RecordedWord::of(&trace, &loaded.cluster, loaded.live.as_ref()),
    );
    match args.output {
        Format::Table => {
            let text = table::render_answer(
                &trace,
                &answer,
                &table::TableOptions {
                    top: args.top,
                    ..Default::default()
                },
            );
            out.write_all(terminal_safe(&text).as_bytes())?;
            if answer.word != RecordedWord::NotRecorded {
                writeln!(out, "\n{}", terminal_safe(&source.config_label()))?;
                if let Some(w) = answer.word.word() {
                    writeln!(
                        out,
                        "{}",
                        terminal_safe(&w.line(crate::clock::wall_clock()))
                    )?;
                }
            }
        }
        Format::Json | Format::Yaml => {
            let v = json::answer_json(&trace, &answer);
            if args.output == Format::Json {
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                let text = serde_saphyr::to_string(&v).context("cannot render YAML")?;
                out.write_all(text.as_bytes())?;
            }
        }
    }
    if let (Some(t), Some(start)) = (&timings, render_start) {
        t.add("render", t.now() - start);
        eprint!("{}", t.report());
    }
    Ok(())
}
