//! The `workboard` command: parse the CLI, start the log, and run the chosen command.

use std::process::ExitCode;

use clap::Parser;
use workboard::cli::Cli;

fn main() -> ExitCode {
    use std::io::IsTerminal;
    let cli = Cli::parse();
    workboard::start_log(
        std::io::stderr,
        std::io::stderr().is_terminal(),
        cli.log_format,
    );
    match workboard::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workboard: {e}");
            ExitCode::FAILURE
        }
    }
}
