//! `schedscope snapshot save`: list a live cluster (or rewrite a file) into a snapshot
//! that `--snapshot` loads back, optionally redacted.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::LiveArgs;
use super::load::runtime;
use crate::render::escape::terminal_safe;
use crate::source::live;
use crate::source::{redact, save};

#[derive(Debug, clap::Subcommand)]
pub enum SnapshotCommand {
    /// Write every object the scheduler reads (no Secrets, no managedFields) to a
    /// file that --snapshot loads back: multi-document YAML, or a List for `.json`.
    Save(SaveArgs),
}

#[derive(Debug, Args, Clone)]
pub struct SaveArgs {
    #[command(flatten)]
    pub live: LiveArgs,
    /// Output file (`.json` for a JSON List, otherwise YAML; `-` for YAML on stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Rewrite a snapshot file (or directory) already on disk, such as `kubectl get
    /// -o yaml` output, instead of listing a cluster. Works offline.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Keep only the fields the scheduler reads, kind by kind; drop everything else
    /// (env, commands, annotations, messages, volume options, unknown fields) and
    /// every object of a kind the scheduler never reads.
    #[arg(long)]
    pub redact: bool,
    /// Also replace names, label keys and values (namespaces, pods, nodes, volumes,
    /// claims, owners, classes, images, taints, extended resources) with a keyed hash,
    /// the same one everywhere so references and selectors still match; implies
    /// --redact. Keys Kubernetes defines and integer label values are kept.
    #[arg(long)]
    pub redact_names: bool,
    /// The key of the --redact-names hash (HMAC-SHA256): the same key and the same
    /// input map a name the same way in every run. Default: a random key per run.
    /// The hashed names sort as the originals do, so ties break the same way.
    #[arg(long, value_name = "KEY", requires = "redact_names")]
    pub redact_key: Option<String>,
}

/// `snapshot save`: list the live cluster (or read `--from`) and write it.
pub fn run_snapshot_save(live: &LiveArgs, args: &SaveArgs, out: &mut dyn Write) -> Result<()> {
    // Refused before listing a cluster, not after.
    save::check_target(&args.output)?;
    let redact = args.redact || args.redact_names;
    let (mut objects, report) = match &args.from {
        Some(from) => {
            // The loader reports bad input with file, document and field.
            let mut objects = save::read_objects(from)?;
            let mut report = save::SaveReport::default();
            objects.retain_mut(|v| {
                let kind = v.get("kind").and_then(|k| k.as_str()).map(str::to_string);
                let kept = save::clean(v, redact);
                if kept && let Some(k) = kind {
                    *report.objects.entry(k).or_default() += 1;
                }
                kept
            });
            (objects, report)
        }
        None => {
            let opts = live.live_options();
            let rt = runtime()?;
            rt.block_on(async {
                let client = live::connect(&opts).await?;
                save::fetch_objects_within(&client, &opts, redact, super::load::LIVE_LIST_TIMEOUT)
                    .await
            })?
        }
    };
    if args.redact_names {
        let key = match &args.redact_key {
            Some(k) => k.as_bytes().to_vec(),
            None => redact::random_key()
                .map_err(|e| anyhow::anyhow!("cannot draw a random key: {e}"))?,
        };
        redact::hash_names(&mut objects, &mut redact::NameHasher::new(&key));
    }
    let to_stdout = save::is_stdout(&args.output);
    let shown = args.output.display().to_string();
    let mut summary = Vec::new();
    save::write_output(&objects, &args.output, out)?;
    writeln!(
        summary,
        "wrote {} ({}{})",
        if to_stdout {
            "stdout".into()
        } else {
            terminal_safe(&shown)
        },
        report,
        match (args.redact_names, redact) {
            (true, _) => "; redacted, names hashed",
            (false, true) => "; redacted",
            _ => "",
        }
    )?;
    for kind in &report.left_out {
        writeln!(summary, "not saved: {}", terminal_safe(kind))?;
    }
    // The summary goes to stderr when the snapshot itself is on stdout.
    if to_stdout {
        std::io::stderr().write_all(&summary)?;
    } else {
        out.write_all(&summary)?;
    }
    Ok(())
}
