//! The `workboard` command: parse the CLI, start the log, and run the chosen command.

use std::process::ExitCode;

use clap::Parser;
use workboard::cli::Cli;

fn main() -> ExitCode {
    use std::io::IsTerminal;
    workboard::start_log(std::io::stderr, std::io::stderr().is_terminal());
    match workboard::commands::run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workboard: {e}");
            ExitCode::FAILURE
        }
    }
}
