use std::process::ExitCode;

use clap::Parser;
use schedscope::cli::{Cli, Command, SnapshotCommand};
use schedscope::render::escape::terminal_safe;
use schedscope::signals::Stopped;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let result = match &cli.command {
        Some(Command::Explain(args)) => {
            schedscope::cli::run_explain(&cli.source, args, &mut stdout.lock())
        }
        Some(Command::Simulate(args)) => {
            schedscope::cli::run_simulate(&cli.source, args, &mut stdout.lock())
        }
        Some(Command::Pods) => schedscope::cli::run_pods(&cli.source, &mut stdout.lock()),
        Some(Command::Snapshot(SnapshotCommand::Save(args))) => {
            schedscope::cli::run_snapshot_save(&cli.source, args, &mut stdout.lock())
        }
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
