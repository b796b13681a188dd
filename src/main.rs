//! The `workboard` command: parse the CLI, start tracing, and run the chosen command.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use workboard::admin::{AdminReply, AdminRequest};
use workboard::cli::{Cli, CliCommand, KeysCommand, ServeArgs};
use workboard::server::{self, CONTROL_SOCKET, DB_FILE};
use write_model::{Durability, Limits};

fn main() -> ExitCode {
    use std::io::IsTerminal;
    workboard::start_log(std::io::stderr, std::io::stderr().is_terminal());
    let cli = Cli::parse();
    let result = match cli.command {
        CliCommand::Serve(args) => serve(&cli.data, *args),
        CliCommand::Keys(KeysCommand::Issue { account, label }) => {
            admin(&cli.data, AdminRequest::IssueKey { account, label })
        }
        CliCommand::Keys(KeysCommand::List { account }) => {
            admin(&cli.data, AdminRequest::ListKeys { account })
        }
        CliCommand::Keys(KeysCommand::Revoke { id }) => {
            admin(&cli.data, AdminRequest::RevokeKey { id })
        }
        CliCommand::Backup { out } => std::path::absolute(&out)
            .map_err(Into::into)
            .and_then(|out| admin(&cli.data, AdminRequest::Backup { out })),
        CliCommand::Export { account, out } => export(&cli.data, account, out.as_deref()),
        CliCommand::Import { file, account } => std::fs::read_to_string(&file)
            .map_err(|e| format!("{}: {e}", file.display()).into())
            .and_then(|export| admin(&cli.data, AdminRequest::Import { account, export })),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workboard: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T> = server::anyhow_like::Result<T>;

fn serve(data: &Path, args: ServeArgs) -> Result<()> {
    server::prepare_data_dir(data)?;
    let Some(_lock) = server::try_lock(data)? else {
        return Err(format!("another workboard server is serving {}", data.display()).into());
    };
    let services = server::open(
        data,
        args.durability(),
        args.limits.limits(),
        args.trust_proxy,
    )?;
    server::first_key_if_new(&services, &data.join(DB_FILE))?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr).await?;
        let control = server::bind_control(&data.join(CONTROL_SOCKET))?;
        let control = tokio::spawn(server::serve_control(control, services.admin.clone()));
        println!("listening: {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        tracing::info!(addr = %listener.local_addr()?, "serving");
        let saver = tokio::spawn(server::save_usage_periodically(services.state.clone()));
        let evictor = tokio::spawn(server::evict_idle_documents(services.state.clone()));
        server::run(listener, services.state.clone(), server::shutdown_signal()).await?;
        control.abort();
        saver.abort();
        evictor.abort();
        let _ = std::fs::remove_file(data.join(CONTROL_SOCKET));
        // Nothing acknowledged is lost: the counters are saved, the log folded into the store.
        services.state.save_usage().await;
        let write = services.state.write.clone();
        let checkpoint = write_model::Request {
            account: None,
            key_id: None,
            command: write_model::Command::Checkpoint,
        };
        if let Ok(Err(e)) =
            tokio::task::spawn_blocking(move || write.execute_blocking(checkpoint)).await
        {
            tracing::warn!(error = %e, "the store could not be checkpointed");
        }
        tracing::info!("stopped");
        Ok(())
    })
}

/// Runs an operator command: through the running server's control socket when one holds the
/// folder, or on the store directly otherwise.
fn run_admin(data: &Path, request: AdminRequest) -> Result<AdminReply> {
    server::prepare_data_dir(data)?;
    match server::try_lock(data)? {
        None => {
            let mut stream = UnixStream::connect(data.join(CONTROL_SOCKET))?;
            let mut line = serde_json::to_vec(&request)?;
            line.push(b'\n');
            stream.write_all(&line)?;
            let mut reply = String::new();
            BufReader::new(stream).read_line(&mut reply)?;
            Ok(serde_json::from_str(&reply)?)
        }
        Some(_lock) => {
            let services = server::open(data, Durability::Full, Limits::default(), false)?;
            Ok(services.admin.handle(request))
        }
    }
}

fn admin(data: &Path, request: AdminRequest) -> Result<()> {
    match run_admin(data, request)? {
        AdminReply::Issued { key, account, .. } => {
            eprintln!("account: {account}");
            println!("{key}");
        }
        AdminReply::Keys { keys } => {
            for key in keys {
                println!("{}", serde_json::to_string(&key)?);
            }
        }
        AdminReply::Revoked { id } => println!("{}", serde_json::json!({"ok": true, "id": id})),
        AdminReply::Export { export } => println!("{}", export.get()),
        AdminReply::BackedUp { out } => {
            println!("{}", serde_json::json!({"ok": true, "out": out}))
        }
        AdminReply::Imported { projects, tasks } => {
            println!(
                "{}",
                serde_json::json!({"ok": true, "projects": projects, "tasks": tasks})
            )
        }
        AdminReply::Failed { error } => return Err(error.into()),
    }
    Ok(())
}

fn export(data: &Path, account: String, out: Option<&Path>) -> Result<()> {
    match run_admin(data, AdminRequest::Export { account })? {
        AdminReply::Export { export } => match out {
            Some(path) => std::fs::write(path, export.get())?,
            None => println!("{}", export.get()),
        },
        AdminReply::Failed { error } => return Err(error.into()),
        _ => return Err("unexpected reply".into()),
    }
    Ok(())
}
