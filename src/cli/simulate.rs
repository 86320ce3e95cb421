//! `schedscope simulate`: the scheduler loop over every pending pod until the queue
//! settles, as a text timeline or JSON events.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{load_config, load_source};
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
    let snapshot = load_source(source)?;
    let config = load_config(source.config.as_deref())?;
    let opts = SimOptions {
        keep_traces: args.traces,
        max_attempts: args.max_attempts,
        max_duration: std::time::Duration::from_secs(args.max_seconds),
        ..SimOptions::default()
    };
    let result = simulate(snapshot.cluster, config, opts);
    match args.output {
        SimFormat::Text => {
            let text = simulation::render_timeline(&result);
            out.write_all(terminal_safe(&text).as_bytes())?
        }
        SimFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &simulation::to_json(&result, args.traces))?;
            writeln!(out)?;
        }
    }
    Ok(())
}
