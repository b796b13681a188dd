//! The CLI's commands: `serve`, and the operator's commands, which go through a running
//! server's control socket when one holds the data folder, or open the store themselves
//! when none does. Each says on stderr what it did, and fails with a message that names
//! what went wrong.

use std::io::Write;
use std::path::Path;

use crate::admin::{AdminReply, AdminRequest};
use crate::cli::{Cli, CliCommand, KeysCommand, ServeArgs};
use crate::control::{self, ControlError};
use crate::node::{self, Creating, Node, NodeConfig, StartError};

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Runs the command the CLI names.
pub fn run(cli: Cli) -> Result<(), Error> {
    let config = |trust_proxy| cli.node.config(trust_proxy);
    match cli.command {
        CliCommand::Serve(args) => serve(&config(args.trust_proxy), &args),
        CliCommand::Keys(KeysCommand::Issue { account, label }) => admin(
            &config(false),
            Creating::Allowed,
            AdminRequest::IssueKey { account, label },
        ),
        CliCommand::Keys(KeysCommand::List { account }) => admin(
            &config(false),
            Creating::Refused,
            AdminRequest::ListKeys { account },
        ),
        CliCommand::Keys(KeysCommand::Revoke { id }) => admin(
            &config(false),
            Creating::Refused,
            AdminRequest::RevokeKey { id },
        ),
        CliCommand::Backup { out } => {
            let out = std::path::absolute(&out)?;
            admin(
                &config(false),
                Creating::Refused,
                AdminRequest::Backup { out },
            )
        }
        CliCommand::Restore { backup } => {
            let summary = crate::backup::restore(&backup, &config(false))?;
            eprintln!("restored: {summary}");
            Ok(())
        }
        CliCommand::Export { account, out } => export(&config(false), account, out.as_deref()),
        CliCommand::Import { file, account } => {
            let export =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            admin(
                &config(false),
                Creating::Refused,
                AdminRequest::Import { account, export },
            )
        }
    }
}

fn serve(config: &NodeConfig, args: &ServeArgs) -> Result<(), Error> {
    node::prepare_data_dir(&config.data)?;
    let Some(_lock) = node::try_lock(&config.data)? else {
        return Err(format!(
            "another workboard server is serving {}",
            config.data.display()
        )
        .into());
    };
    let node = Node::open(config, Creating::Allowed)?;
    node.first_key_if_new()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let control_path = config.data.join(node::CONTROL_SOCKET);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr).await?;
        let control = control::bind(&control_path)?;
        println!("listening: {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        tracing::info!(addr = %listener.local_addr()?, "serving");
        crate::serve::run(
            node,
            listener,
            Some(control),
            crate::serve::shutdown_signal(),
        )
        .await
    })?;
    let _ = std::fs::remove_file(control_path);
    Ok(())
}

/// Runs an operator command: through the running server's control socket when one holds the
/// folder, or on the store directly otherwise.
fn run_admin(
    config: &NodeConfig,
    creating: Creating,
    request: AdminRequest,
) -> Result<AdminReply, Error> {
    if creating == Creating::Refused && !config.data.exists() {
        return Err(StartError::new(format!("{} holds no store", config.data.display())).into());
    }
    node::prepare_data_dir(&config.data)?;
    match node::try_lock(&config.data)? {
        None => control::request(&config.data, &request).map_err(|e| match (&request, e) {
            (AdminRequest::Import { .. }, ControlError::NoAnswer) => {
                "the server stopped before it answered; the import is all or nothing, so \
                 nothing of it landed unless `GET /projects` shows it"
                    .into()
            }
            (_, e) => e.into(),
        }),
        Some(_lock) => {
            let node = Node::open(config, creating)?;
            Ok(node.admin.handle(request))
        }
    }
}

fn admin(config: &NodeConfig, creating: Creating, request: AdminRequest) -> Result<(), Error> {
    match run_admin(config, creating, request)? {
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
        AdminReply::BackedUp {
            out,
            records,
            bytes,
            seconds,
        } => {
            eprintln!("backed up: {records} records, {bytes} bytes, {seconds:.2} s");
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

fn export(config: &NodeConfig, account: String, out: Option<&Path>) -> Result<(), Error> {
    match run_admin(config, Creating::Refused, AdminRequest::Export { account })? {
        AdminReply::Export { export } => match out {
            Some(path) => std::fs::write(path, export.get())?,
            None => println!("{}", export.get()),
        },
        AdminReply::Failed { error } => return Err(error.into()),
        _ => return Err("unexpected reply".into()),
    }
    Ok(())
}
