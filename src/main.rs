use std::process::ExitCode;

use clap::Parser;
use schedscope::cli::{Cli, Command, ExplainArgs, PodsArgs, SimulateArgs, SnapshotCommand};
use schedscope::render::escape::terminal_safe;
use schedscope::signals::Stopped;

/// A cycle allocates and frees many small trace strings and a few large vectors per
/// node list; glibc's allocator consolidates its free lists on every large free,
/// which cost explain a third of its time at 5,000 nodes. The benches use the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    schedscope::allocator::tune();
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let result = match &cli.command {
        // Source flags may come before the subcommand too: merge them into its own.
        Some(Command::Explain(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = ExplainArgs {
                source,
                ..args.clone()
            };
            schedscope::cli::run_explain(&args, &mut stdout.lock())
        }),
        Some(Command::Simulate(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = SimulateArgs {
                source,
                ..args.clone()
            };
            schedscope::cli::run_simulate(&args, &mut stdout.lock())
        }),
        Some(Command::Pods(args)) => cli.source_for(&args.source).and_then(|source| {
            let args = PodsArgs {
                source,
                ..args.clone()
            };
            schedscope::cli::run_pods(&args, &mut stdout.lock())
        }),
        Some(Command::Snapshot(SnapshotCommand::Save(args))) => cli
            .save_source(args)
            .and_then(|live| schedscope::cli::run_snapshot_save(&live, args, &mut stdout.lock())),
        Some(Command::Completions(args)) => {
            schedscope::cli::run_completions(args.shell, &mut stdout.lock())
        }
        Some(Command::Man) => schedscope::cli::run_man(&mut stdout.lock()),
        Some(Command::Tui(_)) | None => schedscope::cli::run_tui(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`| head`) is not an error worth a message.
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            // The inspector or `--act` stopped by a signal, after cleaning up.
            if let Some(stopped) = e.downcast_ref::<Stopped>() {
                return ExitCode::from(stopped.exit_code());
            }
            // Each cause once (many messages include their source), API statuses in
            // words; messages quote names, keys and values from the user's files.
            eprintln!(
                "error: {}",
                terminal_safe(&schedscope::source::error_chain_text(e.chain()))
            );
            ExitCode::from(2)
        }
    }
}

/// Whether writing stdout failed because its reader went away, however the error was
/// wrapped (serde_json keeps the I/O error inside its own).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        let kind = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            });
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}
