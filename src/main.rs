//! The `workboard` command: parse the CLI, start the log, and run the chosen command.

use std::process::ExitCode;

use clap::Parser;
use workboard::cli::Cli;

fn main() -> ExitCode {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    let cli = Cli::parse();
    // The log writes stderr's descriptor through a `File`: each line is one write call, with
    // no lock shared by the threads serving requests (std's `Stderr` takes one per line, and
    // under load the waits for it cost more than the line).
    let stderr = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from);
    match stderr {
        Ok(file) => workboard::start_log(file, std::io::stderr().is_terminal(), cli.log_format),
        Err(_) => workboard::start_log(
            std::io::stderr,
            std::io::stderr().is_terminal(),
            cli.log_format,
        ),
    }
    match workboard::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            workboard::tell!("workboard: {e}");
            ExitCode::FAILURE
        }
    }
}
