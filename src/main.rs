use std::process::ExitCode;

use clap::Parser;
use schedscope::cli::{Cli, Command, SnapshotCommand};

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
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            // Each cause once (many messages include their source), API statuses
            // in words.
            eprintln!("error: {}", schedscope::source::error_chain_text(e.chain()));
            ExitCode::from(2)
        }
    }
}
