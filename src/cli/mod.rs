//! Command-line interface: the clap definition of `schedscope` and its dispatch to one
//! module per subcommand. Each is thin: it loads, asks `report` for the answer and has
//! `render` print it; every decision lives in the engine and the presentation model.

use std::io::Write;

use anyhow::Result;
use clap::Parser;

mod args;
mod capacity;
mod completions;
mod explain;
mod load;
mod pods;
mod simulate;
mod snapshot;
mod timings;
mod tui;
mod whatif;

pub use args::{Inspector, LiveArgs, SourceArgs, TuiArgs, TuiCommand};
pub use capacity::{CapacityArgs, CapacityFormat, run_capacity};
pub use completions::{CompletionsArgs, run_completions, run_man};
pub use explain::{ExplainArgs, Format, run_explain};
pub use load::{Loaded, load_cluster, load_config, load_source, with_dump_profile};
pub use pods::{PodsArgs, PodsGroupBy, pods_text, run_pods};
pub use simulate::{SimFormat, SimulateArgs, run_simulate};
pub use snapshot::{SaveArgs, SnapshotCommand, run_snapshot_save};
pub use tui::run_tui;
pub use whatif::{WHAT_IF_HELP, WhatIfArgs};

#[derive(Debug, Parser)]
#[command(
    name = "schedscope",
    version,
    about = "Shows exactly why the Kubernetes scheduler (v1.35) does, or will not, place a pod",
    long_about = "schedscope replays kube-scheduler v1.35's scheduling framework for a pending pod \
                  over a cluster snapshot: per-node filter verdicts, per-plugin scores, the \
                  FitError message and preemption victims.\n\nWith no subcommand it opens the \
                  terminal inspector."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Subcommand>,
    /// The inspector's flags, which source flags given before a subcommand share.
    #[command(flatten)]
    pub top: TuiCommand,
}

impl Cli {
    /// The inspector's options: `tui`'s own flags, else those given before it.
    pub fn inspector(&self) -> Result<Inspector> {
        let (source, theme, tui) = match &self.command {
            Some(Subcommand::Tui(t)) => (
                t.source.clone().or(&self.top.source),
                t.theme.clone().or_else(|| self.top.theme.clone()),
                TuiArgs {
                    simulate: t.tui.simulate || self.top.tui.simulate,
                    act: t.tui.act || self.top.tui.act,
                    headless: t.tui.headless || self.top.tui.headless,
                    // Edits before `tui` come first, as they were typed.
                    what_if: [&self.top.tui.what_if[..], &t.tui.what_if[..]].concat(),
                    ..t.tui.clone()
                },
            ),
            _ => (
                self.top.source.clone(),
                self.top.theme.clone(),
                self.top.tui.clone(),
            ),
        };
        source.check()?;
        if tui.act && source.snapshot.is_some() {
            anyhow::bail!(
                "--act schedules on a live cluster (it writes bindings through the API); \
                 drop --snapshot"
            );
        }
        Ok(Inspector { source, theme, tui })
    }

    /// Where `snapshot save` lists from: its own flags, else those before it. A
    /// `--snapshot` there is a mistake (`--from FILE` rewrites a file).
    pub fn save_source(&self, args: &SaveArgs) -> Result<LiveArgs> {
        if self.top.source.snapshot.is_some() {
            anyhow::bail!(
                "snapshot save reads a live cluster, or a file given with --from FILE; \
                 drop --snapshot"
            );
        }
        let own = SourceArgs {
            live: args.live.clone(),
            ..SourceArgs::default()
        };
        Ok(own.or(&self.top.source).live)
    }

    /// The cluster source of a subcommand: its own flags, else those given before it
    /// (`schedscope -s demo.yaml explain web` works as `explain -s demo.yaml web`).
    pub fn source_for(&self, own: &SourceArgs) -> Result<SourceArgs> {
        let s = own.clone().or(&self.top.source);
        s.check()?;
        Ok(s)
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Open the terminal inspector (the default).
    Tui(TuiCommand),
    /// Explain one pod's scheduling: filter verdicts, scores, FitError, preemption.
    Explain(ExplainArgs),
    /// List pending pods in scheduling-queue order (priority, then age).
    Pods(PodsArgs),
    /// Run the scheduler loop over every pending pod until the queue settles: a
    /// timeline of attempts, waits at Permit, bindings and preemptions.
    Simulate(SimulateArgs),
    /// How many more copies of a pod fit, placed one after another by the full
    /// scheduling cycle (no preemption), what stops the next, and where they go.
    Capacity(CapacityArgs),
    /// Snapshots of a live cluster.
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout: `schedscope man > schedscope.1`.
    Man,
}

/// Runs the subcommand (the inspector without one); answers go to stdout, locked
/// only by the subcommands that print one (the inspector draws on the terminal).
pub fn run(cli: &Cli) -> Result<()> {
    if matches!(cli.command, Some(Subcommand::Tui(_)) | None) {
        return run_tui(cli);
    }
    // Buffered: stdout's own buffer flushes every line, a write call per line of a
    // multi-megabyte JSON answer.
    let out: &mut dyn Write =
        &mut std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let result = match &cli.command {
        // Source flags may come before the subcommand too: merge them into its own.
        Some(Subcommand::Explain(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = ExplainArgs {
                source,
                ..args.clone()
            };
            // The process exits next and frees the model at once.
            explain::explain_keeping_model(&args, out).map(std::mem::forget)
        }),
        Some(Subcommand::Simulate(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = SimulateArgs {
                source,
                ..args.clone()
            };
            run_simulate(&args, out)
        }),
        Some(Subcommand::Pods(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = PodsArgs {
                source,
                ..args.clone()
            };
            run_pods(&args, out)
        }),
        Some(Subcommand::Capacity(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = CapacityArgs {
                source,
                ..args.clone()
            };
            run_capacity(&args, out)
        }),
        Some(Subcommand::Snapshot(SnapshotCommand::Save(args))) => cli
            .save_source(args)
            .and_then(|live| run_snapshot_save(&live, args, out)),
        Some(Subcommand::Completions(args)) => run_completions(args.shell, out),
        Some(Subcommand::Man) => run_man(out),
        Some(Subcommand::Tui(_)) | None => run_tui(cli),
    };
    // What is still buffered is written here, so a full disk is an error, not
    // output silently cut at exit.
    result.and_then(|()| Ok(out.flush()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn simulate_flag_on_tui_and_top_level() {
        let c = Cli::try_parse_from(["schedscope", "tui", "--simulate"]).expect("parses");
        assert!(matches!(
            c.command,
            Some(Subcommand::Tui(TuiCommand {
                tui: TuiArgs { simulate: true, .. },
                ..
            }))
        ));
        let c = Cli::try_parse_from(["schedscope", "--simulate"]).expect("parses");
        assert!(c.top.tui.simulate && c.command.is_none());
        let c = Cli::try_parse_from(["schedscope"]).expect("parses");
        assert!(!c.top.tui.simulate);
        // Not a flag of the other subcommands.
        assert!(Cli::try_parse_from(["schedscope", "pods", "--simulate"]).is_err());
    }

    #[test]
    fn what_if_edits_before_and_after_tui_are_all_kept_in_order() {
        let c = Cli::try_parse_from([
            "schedscope",
            "--what-if",
            "node.cordon=a",
            "tui",
            "--what-if",
            "pod.cpu=1",
        ])
        .unwrap();
        assert_eq!(
            c.inspector().unwrap().tui.what_if,
            ["node.cordon=a", "pod.cpu=1"]
        );
        let c = Cli::try_parse_from(["schedscope", "--what-if", "node.cordon=a"]).unwrap();
        assert_eq!(c.inspector().unwrap().tui.what_if, ["node.cordon=a"]);
    }

    #[test]
    fn act_flags() {
        let c = Cli::try_parse_from(["schedscope", "--act"]).expect("parses");
        assert!(c.top.tui.act);
        assert_eq!(c.top.tui.scheduler_name, "schedscope");
        assert_eq!(c.top.tui.lease_namespace, "kube-system");
        let c = Cli::try_parse_from(["schedscope", "--act", "--scheduler-name", "gang"])
            .expect("parses");
        assert_eq!(c.top.tui.scheduler_name, "gang");
        // Without --act nothing acts: its options alone are refused.
        assert!(Cli::try_parse_from(["schedscope", "--scheduler-name", "gang"]).is_err());
        // A snapshot has no API server to write to, whichever side of `tui` it is on.
        assert!(Cli::try_parse_from(["schedscope", "--act", "--snapshot", "x.yaml"]).is_err());
        let c = Cli::try_parse_from(["schedscope", "-s", "x.yaml", "tui", "--act"]).unwrap();
        assert!(
            c.inspector()
                .unwrap_err()
                .to_string()
                .contains("drop --snapshot")
        );
    }

    #[test]
    fn source_flags_before_or_after_the_subcommand() {
        let c = Cli::try_parse_from(["schedscope", "-s", "a.yaml", "-n", "shop", "explain", "web"])
            .unwrap();
        let Some(Subcommand::Explain(args)) = &c.command else {
            panic!("explain")
        };
        let s = c.source_for(&args.source).unwrap();
        assert_eq!(s.snapshot.as_deref(), Some(Path::new("a.yaml")));
        assert_eq!(s.pod_key(&args.pod), "shop/web");
        // The subcommand's own flag wins.
        let c =
            Cli::try_parse_from(["schedscope", "-s", "a.yaml", "pods", "-s", "b.yaml"]).unwrap();
        let Some(Subcommand::Pods(args)) = &c.command else {
            panic!("pods")
        };
        let s = c.source_for(&args.source).unwrap();
        assert_eq!(s.snapshot.as_deref(), Some(Path::new("b.yaml")));
        // A snapshot and a kubeconfig together are refused.
        let c = Cli::try_parse_from(["schedscope", "--kubeconfig", "k", "pods", "-s", "b.yaml"])
            .unwrap();
        let Some(Subcommand::Pods(args)) = &c.command else {
            panic!("pods")
        };
        assert!(c.source_for(&args.source).is_err());
    }

    /// Flags appear only where they mean something.
    #[test]
    fn help_lists_only_the_flags_that_apply() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let flags = |path: &[&str]| -> Vec<String> {
            let mut c = &cmd;
            for p in path {
                c = c.find_subcommand(p).unwrap();
            }
            c.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect()
        };
        for sub in [
            &["explain"][..],
            &["pods"],
            &["simulate"],
            &["capacity"],
            &["snapshot", "save"],
        ] {
            assert!(!flags(sub).contains(&"theme".to_string()), "{sub:?}");
        }
        assert!(flags(&["tui"]).contains(&"theme".to_string()));
        assert!(!flags(&["snapshot", "save"]).contains(&"snapshot".to_string()));
        assert!(!flags(&["snapshot", "save"]).contains(&"config".to_string()));
        assert!(flags(&["explain"]).contains(&"snapshot".to_string()));
        cmd.debug_assert();
    }
}
