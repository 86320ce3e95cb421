//! `schedscope completions` and `schedscope man`: generated from the same clap
//! definitions as `--help`.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `completions SHELL`: the completion script for every subcommand and flag.
pub fn run_completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<()> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let name = cmd.get_name().to_string();
    // clap_complete panics when its writer fails (a full disk, a closed pipe): it
    // writes to memory, and the error of the real write reaches the caller.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}

/// `man`: the manual page (options and the list of subcommands), generated from the
/// same definitions as `--help`.
pub fn run_man(out: &mut dyn Write) -> Result<()> {
    use clap::CommandFactory;
    clap_mangen::Man::new(Cli::command()).render(out)?;
    out.flush()?;
    Ok(())
}
