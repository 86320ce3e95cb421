use std::process::ExitCode;

use clap::Parser;
use schedscope::cli::Cli;
use schedscope::render::escape::to_stderr;
use schedscope::signals::Stopped;

/// A cycle allocates and frees many small trace strings and a few large vectors per
/// node list; glibc's allocator consolidates its free lists on every large free,
/// which cost explain a third of its time at 5,000 nodes. The benches use the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    schedscope::allocator::tune();
    let cli = Cli::parse();
    let result = schedscope::cli::run(&cli);
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
            // To a closed or full stderr the message is lost, never a panic.
            to_stderr(&format!(
                "error: {}",
                schedscope::source::error_chain_text(e.chain())
            ));
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
