//! `schedscope explain`: one pod's replay, as a table, JSON, YAML, Markdown or HTML.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::SourceArgs;
use super::load::{Loaded, load_cluster, load_config, with_dump_profile};
use super::timings::{Timings, timed_load};
use super::whatif::WhatIfArgs;
use crate::engine::cycle::{CycleOptions, PhaseClock};
use crate::explain::{WhatIfRun, explain_pod, explain_what_if, remedies_for};
use crate::render::escape::terminal_safe;
use crate::render::{json, table, whatif};
use crate::report::remedies::{DEFAULT_LIMIT, Remedies};
use crate::report::whatif::WhatIfComparison;
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
    /// Also run every filter plugin on every node (always on for every output but the
    /// table).
    #[arg(long)]
    pub all_filters: bool,
    /// How many top-scoring nodes the table shows.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    #[command(flatten)]
    pub what_if: WhatIfArgs,
    /// Search the what-if edits (one, else two together) that would make the pod
    /// schedulable, each verified by a full replay; smallest change first.
    #[arg(long)]
    pub suggest: bool,
    /// With --suggest: edits that land the pod on NODE rather than anywhere.
    #[arg(long, value_name = "NODE", requires = "suggest")]
    pub target: Option<String>,
    /// With --suggest: the most replays the search runs.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    pub suggest_limit: usize,
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
    /// GitHub-flavoured Markdown, to paste into an issue or a chat.
    #[value(alias = "md")]
    Markdown,
    /// One self-contained HTML page (inline CSS, no script, no external asset),
    /// with the score chart and the node × plugin matrices.
    Html,
}

pub fn run_explain(args: &ExplainArgs, out: &mut dyn Write) -> Result<()> {
    explain_keeping_model(args, out).map(drop)
}

/// [`run_explain`], handing the loaded model back: a process about to exit leaves
/// it to the system, which frees it at once, where freeing 150,000 pods one by one
/// took longer (0.3–0.5 s) than the answer and its output together.
pub(crate) fn explain_keeping_model(args: &ExplainArgs, out: &mut dyn Write) -> Result<Loaded> {
    let source = &args.source;
    // A malformed edit is refused before anything is loaded.
    let edits = args.what_if.edits()?;
    let timings = args.timings.then(|| Arc::new(Timings::new()));
    let loaded = match &timings {
        Some(t) => timed_load(source, t)?,
        None => load_cluster(source)?,
    };
    let config = load_config(source.config.as_deref())?;
    let config = with_dump_profile(config, source, &loaded.dump)?;
    let opts = CycleOptions {
        all_filters: args.all_filters || args.output != Format::Table,
        now: crate::clock::wall_clock(),
        timer: timings
            .clone()
            .map(|t| crate::engine::cycle::PhaseTimer(t as Arc<dyn PhaseClock>)),
        ..Default::default()
    };
    let cycle_start = timings.as_ref().map(|t| t.now());
    let key = source.pod_key(&args.pod);
    let not_found = |e: crate::explain::ExplainError| match e {
        // Name the command that lists them, with this run's own source flags.
        crate::explain::ExplainError::PodNotFound { .. } => {
            let mut all = source.clone();
            all.live.namespace = None;
            anyhow::anyhow!("{e}; `{}` lists them", all.command_line("pods"))
        }
        e => e.into(),
    };
    // Under what-if edits, the answer is the edited model's, and the cluster the
    // causes are read from is the edited copy.
    let (trace, edited, comparison) = if edits.is_empty() {
        let trace =
            explain_pod(&loaded.cluster, &config.profiles, &key, None, &opts).map_err(not_found)?;
        (trace, None, None)
    } else {
        let WhatIfRun {
            edited,
            after,
            comparison,
            ..
        } = explain_what_if(&loaded.cluster, &config.profiles, &key, &edits, &opts)
            .map_err(not_found)?;
        (after, Some(edited.cluster), Some(comparison))
    };
    let cluster = edited.as_ref().unwrap_or(&loaded.cluster);
    if let (Some(t), Some(start)) = (&timings, cycle_start) {
        t.add("scheduling cycle", t.now() - start);
    }
    let answer_start = timings.as_ref().map(|t| t.now());
    // The rejections' exact causes and the pod's needs, from the cluster the replay
    // ran on; live, the real scheduler's word beside it.
    // The real scheduler's recorded word is about the cluster as it is, not edited.
    let word = match comparison {
        None => RecordedWord::of(&trace, cluster, loaded.live.as_ref()),
        Some(_) => RecordedWord::NotRecorded,
    };
    let mut answer = Answer::of_replay(&trace, cluster, &config.profiles).with_word(word);
    // A snapshot records the real scheduler's last word too (not under edits: it is
    // about the cluster as it was).
    if loaded.live.is_none() && comparison.is_none() {
        answer = answer.with_recorded(&trace, cluster);
    }
    let remedies = if args.suggest {
        let target = args.target.as_deref();
        let found = remedies_for(
            cluster,
            &config.profiles,
            &key,
            target,
            args.suggest_limit,
            opts.now,
        )?;
        Some(found)
    } else {
        None
    };
    if let (Some(t), Some(start)) = (&timings, answer_start) {
        t.add("answer", t.now() - start);
    }
    let render_start = timings.as_ref().map(|t| t.now());
    match args.output {
        Format::Table => {
            let mut text = String::new();
            if let Some(c) = &comparison {
                text += &whatif::edits_header(&c.edits, &c.notes);
            }
            text += &table::render_answer(
                &trace,
                &answer,
                &table::TableOptions {
                    top: args.top,
                    ..Default::default()
                },
            );
            if let Some(c) = &comparison {
                text += &whatif::comparison(c);
            }
            if let Some(r) = &remedies {
                text += &remedies_text(r.as_ref(), args.target.as_deref());
            }
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
        Format::Markdown => {
            let text = crate::render::markdown::render(&trace, &answer, args.top);
            out.write_all(text.as_bytes())?;
        }
        Format::Html => {
            let text = crate::render::html::render(&trace, &answer, args.top);
            out.write_all(text.as_bytes())?;
        }
        Format::Json | Format::Yaml => {
            let mut v = json::answer_json_of(&trace, &answer);
            add_what_if_json(&mut v, comparison.as_ref(), remedies.as_ref());
            if args.output == Format::Json {
                crate::render::json::write_pretty(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                let text = serde_saphyr::to_string(&v).context("cannot render YAML")?;
                out.write_all(text.as_bytes())?;
            }
        }
    }
    if let (Some(t), Some(start)) = (&timings, render_start) {
        t.add("render", t.now() - start);
        crate::render::escape::raw_to_stderr(&t.report());
    }
    Ok(loaded)
}

/// `--suggest`'s section: the remedies, or why there is nothing to search.
fn remedies_text(found: Option<&Remedies>, target: Option<&str>) -> String {
    match (found, target) {
        (Some(r), _) => whatif::remedies(r),
        (None, Some(t)) => format!("\nRemedies: none needed; the pod already lands on {t}.\n"),
        (None, None) => "\nRemedies: none needed; the pod is schedulable (--target NODE searches \
                         the edits that would land it on NODE).\n"
            .into(),
    }
}

/// `what_if: {edits, notes, before, after, changed}` and `suggestions` (with the
/// search's own figures in `suggest`) beside the answer.
fn add_what_if_json(
    o: &mut json::AnswerJson,
    comparison: Option<&WhatIfComparison>,
    remedies: Option<&Option<Remedies>>,
) {
    if let Some(c) = comparison {
        o.insert("what_if", serde_json::to_value(c).unwrap_or_default());
    }
    if let Some(r) = remedies {
        let suggestions = r.as_ref().map(|r| r.suggestions.as_slice()).unwrap_or(&[]);
        o.insert(
            "suggestions",
            serde_json::to_value(suggestions).unwrap_or_default(),
        );
        o.insert(
            "suggest",
            serde_json::json!({
                "needed": r.is_some(),
                "replays": r.as_ref().map(|r| r.replays).unwrap_or(0),
                "limit": r.as_ref().map(|r| r.limit),
                "stopped_early": r.as_ref().is_some_and(|r| r.stopped_early),
                "preemption": r.as_ref().and_then(|r| r.preemption.clone()),
            }),
        );
    }
}
