//! The CLI's commands: `serve`, and the operator's commands, which go through a running
//! server's control socket when one holds the data folder, or open the store themselves
//! when none does. Each says on stderr what it did, and fails with a message that names
//! what went wrong.

use std::io::Write;
use std::path::Path;

use crate::admin::{AdminReply, AdminRequest};
use crate::cli::{Cli, CliCommand, KeysCommand, ServeArgs};
use crate::config::{CONTROL_SOCKET, NodeConfig, prepare_data_dir, try_lock};
use crate::control;
use crate::error::Error;
use crate::node::{Creating, Node};

/// A long command's progress on stderr: a spinner while it runs, shown only when stderr is a
/// terminal, and a one-line summary when it is done, always.
struct Progress {
    bar: indicatif::ProgressBar,
    started: std::time::Instant,
}

impl Progress {
    fn start(what: &str) -> Progress {
        let bar = indicatif::ProgressBar::new_spinner().with_message(what.to_owned());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Progress {
            bar,
            started: std::time::Instant::now(),
        }
    }

    fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Clears the spinner and says what was done.
    fn done(self, summary: std::fmt::Arguments<'_>) {
        self.bar.finish_and_clear();
        crate::tell!("{summary}");
    }
}

/// Runs the command the CLI names.
pub fn run(cli: Cli) -> Result<(), Error> {
    write_model::store::postgres::set_timeouts(cli.node.pg_timeouts());
    let config = |trust_proxy| cli.node.config(trust_proxy);
    match cli.command {
        CliCommand::Serve(args) => {
            let mut node = config(args.trust_proxy);
            node.cors_origins = args.cors_origins.clone();
            serve(&node, &args)
        }
        CliCommand::Keys(KeysCommand::Issue {
            account,
            label,
            access,
            expires_at,
        }) => admin(
            &config(false),
            Creating::Allowed,
            AdminRequest::IssueKey {
                account,
                label,
                access: access.into(),
                expires_at,
            },
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
            let progress = Progress::start("restoring");
            let summary = crate::backup::restore(&backup, &config(false))?;
            progress.done(format_args!("restored: {summary}"));
            Ok(())
        }
        CliCommand::Export {
            account,
            out,
            format,
        } => match format.rows() {
            None => export(&config(false), account, out.as_deref()),
            Some(_) => export_rows(&config(false), account, format, out.as_deref()),
        },
        CliCommand::Copy { from, to } => {
            let progress = Progress::start("copying");
            let mut rows = 0u64;
            let copied = crate::copy::run(&from, &to, config(false).durability, &mut |batch| {
                rows += batch.len() as u64;
                progress.bar.set_message(format!("copying: {rows} rows"));
            })?;
            progress.done(format_args!(
                "copied: {} rows, {:.2} s",
                copied.rows, copied.seconds
            ));
            Ok(())
        }
        CliCommand::Import {
            file,
            account,
            from,
            lenient,
        } => {
            let export = std::fs::read_to_string(&file).map_err(|e| Error::file(&file, e))?;
            admin(
                &config(false),
                Creating::Refused,
                AdminRequest::Import {
                    account,
                    export,
                    from,
                    lenient,
                },
            )
        }
    }
}

fn serve(config: &NodeConfig, args: &ServeArgs) -> Result<(), Error> {
    prepare_data_dir(&config.data)?;
    let Some(_lock) = try_lock(&config.data)? else {
        return Err(Error::new(format!(
            "another workboard server is serving {}",
            config.data.display()
        )));
    };
    match crate::edge::raise_open_files_limit() {
        Ok(files) => tracing::info!(files, "open-files limit"),
        Err(e) => tracing::warn!(error = %e, "the open-files limit could not be raised"),
    }
    let node = Node::open(config, Creating::Allowed)?;
    node.first_key_if_new()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let control_path = config.data.join(CONTROL_SOCKET);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr).await?;
        let metrics = match args.metrics_addr {
            Some(addr) => Some(tokio::net::TcpListener::bind(addr).await?),
            None => None,
        };
        let control = control::bind(&control_path)?;
        if let Some(m) = &metrics {
            println!("metrics: {}", m.local_addr()?);
        }
        println!("listening: {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        tracing::info!(addr = %listener.local_addr()?, "serving");
        let listeners = crate::serve::Listeners {
            http: listener,
            metrics,
            control: Some(control),
        };
        crate::serve::run(node, listeners, crate::serve::shutdown_signal()).await
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
    if creating == Creating::Refused {
        refuse_without_store(config)?;
    }
    prepare_data_dir(&config.data)?;
    match try_lock(&config.data)? {
        None => control::request(&config.data, &request).map_err(|e| match (&request, e) {
            (AdminRequest::Import { .. }, Error::NoAnswer) => Error::new(
                "the server stopped before it answered; the import is all or nothing, so \
                 nothing of it landed unless `GET /projects` shows it",
            ),
            (_, e) => e,
        }),
        Some(_lock) => {
            let node = Node::open(config, creating)?;
            Ok(node.admin.handle(request))
        }
    }
}

/// Refuses a command that needs a store where there is none, before it makes, tightens or
/// locks anything: a refused folder is left as it was (a missing one stays missing).
fn refuse_without_store(config: &NodeConfig) -> Result<(), Error> {
    if !config.data.is_dir() {
        return Err(Error::new(format!(
            "{} holds no store",
            config.data.display()
        )));
    }
    if !config.store_exists()? {
        return Err(Error::new(format!(
            "{} holds no store (start `workboard serve` there, or issue a key, to make one)",
            config.location()
        )));
    }
    Ok(())
}

fn admin(config: &NodeConfig, creating: Creating, request: AdminRequest) -> Result<(), Error> {
    let (progress, import_bytes) = match &request {
        AdminRequest::Backup { .. } => (Some(Progress::start("backing up")), 0),
        AdminRequest::Import { export, .. } => (
            Some(Progress::start(&format!(
                "importing {} bytes",
                export.len()
            ))),
            export.len(),
        ),
        _ => (None, 0),
    };
    let reply = run_admin(config, creating, request)?;
    if let (Some(progress), AdminReply::Failed { .. }) = (&progress, &reply) {
        progress.bar.finish_and_clear();
    }
    match reply {
        AdminReply::Issued { key, account, .. } => {
            crate::tell!("account: {account}");
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
            let summary =
                format_args!("backed up: {records} records, {bytes} bytes, {seconds:.2} s");
            match progress {
                Some(p) => p.done(summary),
                None => crate::tell!("{summary}"),
            }
            println!("{}", serde_json::json!({"ok": true, "out": out}))
        }
        AdminReply::Imported {
            projects,
            columns,
            tasks,
            project_ids,
            skipped,
        } => {
            if let Some(p) = progress {
                let seconds = p.seconds();
                let records = projects + columns + tasks;
                p.done(format_args!(
                    "imported: {records} records ({projects} projects, {columns} columns, \
                     {tasks} cards), {import_bytes} bytes, {seconds:.2} s"
                ));
            }
            for s in &skipped {
                crate::tell!("warning: left out: {s}");
            }
            println!(
                "{}",
                serde_json::json!({"ok": true, "projects": projects, "columns": columns,
                    "tasks": tasks, "projectIds": project_ids, "skipped": skipped})
            )
        }
        AdminReply::Rows { .. } => return Err(Error::new("unexpected reply")),
        AdminReply::Failed { error } => return Err(Error::Message(error)),
    }
    Ok(())
}

fn export(config: &NodeConfig, account: String, out: Option<&Path>) -> Result<(), Error> {
    let progress = Progress::start("exporting");
    let export = match run_admin(config, Creating::Refused, AdminRequest::Export { account })? {
        AdminReply::Export { export } => export,
        AdminReply::Failed { error } => {
            progress.bar.finish_and_clear();
            return Err(Error::Message(error));
        }
        _ => return Err(Error::new("unexpected reply")),
    };
    match out {
        Some(path) => std::fs::write(path, export.get())?,
        None => println!("{}", export.get()),
    }
    let records = count_records(export.get());
    let (bytes, seconds) = (export.get().len(), progress.seconds());
    progress.done(format_args!(
        "exported: {records} records, {bytes} bytes, {seconds:.2} s"
    ));
    Ok(())
}

/// Writes an analytic export (CSV, NDJSON) to `out` or stdout as it is made: through the
/// running server's control socket, or from the store when none runs.
fn export_rows(
    config: &NodeConfig,
    account: String,
    format: crate::transfer::ExportFormat,
    out: Option<&Path>,
) -> Result<(), Error> {
    // Refused before the output file is made.
    refuse_without_store(config)?;
    let progress = Progress::start("exporting");
    let mut sink: Box<dyn Write> = match out {
        Some(path) => Box::new(std::io::BufWriter::new(std::fs::File::create(path)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    prepare_data_dir(&config.data)?;
    let cards = match try_lock(&config.data)? {
        None => {
            let request = AdminRequest::ExportRows { account, format };
            match control::request_rows(&config.data, &request, &mut sink)? {
                AdminReply::Rows { cards } => cards,
                AdminReply::Failed { error } => {
                    progress.bar.finish_and_clear();
                    return Err(Error::Message(error));
                }
                _ => return Err(Error::new("unexpected reply")),
            }
        }
        Some(_lock) => {
            let node = Node::open(config, Creating::Refused)?;
            let rows = node.admin.export_rows(&account, format)?;
            let cards = rows.len();
            for chunk in rows {
                sink.write_all(&chunk)?;
            }
            cards
        }
    };
    sink.flush()?;
    let seconds = progress.seconds();
    progress.done(format_args!("exported: {cards} cards, {seconds:.2} s"));
    Ok(())
}

/// The projects, columns and cards of an export file.
fn count_records(export: &str) -> usize {
    #[derive(serde::Deserialize)]
    struct File {
        projects: Vec<Project>,
    }
    #[derive(serde::Deserialize)]
    struct Project {
        columns: Vec<Column>,
    }
    #[derive(serde::Deserialize)]
    struct Column {
        tasks: Vec<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<File>(export).map_or(0, |f| {
        f.projects
            .iter()
            .map(|p| 1 + p.columns.iter().map(|c| 1 + c.tasks.len()).sum::<usize>())
            .sum()
    })
}
