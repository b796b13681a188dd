//! The raw loops the write scenarios are held against: the store's own client library writing,
//! with nothing of Workboard in between, the rows one command writes, at the group size the
//! server reached:
//! - per command: the card (a new row, or one of an account's rows rewritten), its project's
//!   row (its `updatedAt` moves to the command's stamp) and an undo step;
//! - per group: the account's counters (revision, last stamp, stored bytes), and on
//!   PostgreSQL what several nodes need besides: the account's row locked (`FOR UPDATE`)
//!   before anything is written, the transaction's id and the database's clock read, the
//!   group's change records logged, and the commit announced (`pg_notify`).
//!
//! SQLite runs in WAL mode with `synchronous=FULL`, as the server does, one prepared
//! statement per row (in-process, a statement costs no round trip). PostgreSQL runs with
//! `synchronous_commit` on (the default), over TCP on 127.0.0.1, as the server's writer
//! connects, and writes each kind of row for the whole group in one statement (`unnest`),
//! the fewest round trips it can take.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::drive::Tally;

/// Where a raw loop writes.
#[derive(Debug, Clone, Copy)]
pub enum RawStore<'a> {
    /// A folder for a fresh SQLite database.
    Sqlite(&'a Path),
    /// An empty PostgreSQL database of its own.
    Postgres(&'a str),
}

impl RawStore<'_> {
    pub fn engine(&self) -> &'static str {
        match self {
            RawStore::Sqlite(_) => "SQLite",
            RawStore::Postgres(_) => "PostgreSQL",
        }
    }
}

/// A raw loop at one group size.
#[derive(Debug, Clone)]
pub struct RawLoop {
    pub engine: &'static str,
    pub group: usize,
    pub writes: RawWrites,
    /// Commands written per second (each its card, its project's row and an undo step).
    pub commands_per_s: f64,
    pub commits_per_s: f64,
    /// The loop thread's CPU per command (microseconds): its flushes' wait is not in it,
    /// nor, on PostgreSQL, the server process's work.
    pub cpu_per_command_us: f64,
    /// Time of each whole transaction (its writes and its commit), in microseconds.
    pub commit: Tally,
    pub body_len: usize,
}

/// Which cards the raw loop writes: the cards its scenario's requests write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawWrites {
    /// New cards with ids in creation order, as `POST /tasks` writes them.
    Append,
    /// Existing cards picked at random from this many, as a PATCH rewrites one card of an
    /// account of that size.
    Rewrite(usize),
}

impl RawWrites {
    /// How the report names it.
    pub fn describe(self) -> String {
        match self {
            RawWrites::Append => "new cards".into(),
            RawWrites::Rewrite(rows) => format!("random cards of {rows}"),
        }
    }
}

const ACCOUNT: &str = "a_bench";
const PROJECTS: u64 = 10;
/// About what an undo step of a one-field PATCH holds.
const UNDO_STEP: &str = r#"{"kind":"patch","record":"t_0000000000000000000000","before":{"title":"A card's title before the change","updatedAt":1764000000000}}"#;

fn card_id(n: u64) -> String {
    format!("t_{n:022}")
}

fn project_id(n: u64) -> String {
    format!("b_{:022}", n % PROJECTS)
}

/// One engine's connection, able to write one group.
trait Writes {
    /// Creates the tables and the account, and `rows` cards when the loop rewrites them.
    fn prepare(&mut self, body: &str, rows: usize);
    /// One transaction: for each of `cards` (the card's number, its new body), the card, its
    /// project and an undo step; then the account's counters (and on PostgreSQL the lock, the
    /// change log and the announcement).
    fn group(&mut self, cards: &[(u64, String)], rev: u64);
    fn finish(self: Box<Self>);
}

/// Writes `body`-sized cards `group` commands per transaction, for `measure` after a short
/// warm-up.
pub fn raw_loop(
    store: RawStore<'_>,
    group: usize,
    writes: RawWrites,
    measure: Duration,
    body: &str,
) -> RawLoop {
    let mut conn: Box<dyn Writes> = match store {
        RawStore::Sqlite(dir) => Box::new(Sqlite::open(dir, group)),
        RawStore::Postgres(url) => Box::new(Postgres::open(url)),
    };
    conn.prepare(
        body,
        match writes {
            RawWrites::Rewrite(rows) => rows,
            RawWrites::Append => 0,
        },
    );
    // A small deterministic generator picks the rewritten cards (xorshift).
    let mut pick = 0x9E37_79B9_7F4A_7C15u64;
    // Every write changes the body, as a PATCH changes a field: SQLite skips a rewrite that
    // leaves a page's bytes as they were.
    let mut written = 0u64;
    let tail = &body[body.char_indices().nth(16).map_or(body.len(), |(i, _)| i)..];
    let mut group_once = |conn: &mut Box<dyn Writes>| {
        let cards: Vec<(u64, String)> = (0..group)
            .map(|_| {
                written += 1;
                let n = match writes {
                    RawWrites::Append => written + 1_000_000,
                    RawWrites::Rewrite(rows) => {
                        pick ^= pick << 13;
                        pick ^= pick >> 7;
                        pick ^= pick << 17;
                        pick % rows.max(1) as u64
                    }
                };
                (n, format!("{written:016}{tail}"))
            })
            .collect();
        conn.group(&cards, written);
    };
    let warm = Instant::now() + Duration::from_millis(200);
    while Instant::now() < warm {
        group_once(&mut conn);
    }
    let mut commit = Tally::default();
    let started = Instant::now();
    let cpu_before = crate::host::thread_cpu_us();
    let mut commits = 0u64;
    while started.elapsed() < measure {
        let t = Instant::now();
        group_once(&mut conn);
        commit.add(t.elapsed(), true, 0);
        commits += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu_us = crate::host::thread_cpu_us().saturating_sub(cpu_before);
    conn.finish();
    let commands = (commits * group as u64).max(1);
    RawLoop {
        engine: store.engine(),
        group,
        writes,
        commands_per_s: commands as f64 / secs,
        commits_per_s: commits as f64 / secs,
        cpu_per_command_us: cpu_us as f64 / commands as f64,
        commit,
        body_len: body.len(),
    }
}

struct Sqlite {
    conn: rusqlite::Connection,
    path: std::path::PathBuf,
}

impl Sqlite {
    fn open(dir: &Path, group: usize) -> Sqlite {
        let path = dir.join(format!("raw-{group}.db"));
        let conn = rusqlite::Connection::open(&path).expect("a raw database");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("WAL mode");
        conn.pragma_update(None, "synchronous", "FULL")
            .expect("synchronous=FULL");
        Sqlite { conn, path }
    }
}

impl Writes for Sqlite {
    fn prepare(&mut self, body: &str, rows: usize) {
        self.conn
            .execute_batch(
                "CREATE TABLE accounts (id TEXT PRIMARY KEY, rev INTEGER NOT NULL,
                     last_stamp INTEGER NOT NULL, stored_bytes INTEGER NOT NULL);
                 CREATE TABLE records (account TEXT NOT NULL, id TEXT NOT NULL,
                     body TEXT NOT NULL, PRIMARY KEY (account, id)) WITHOUT ROWID;
                 CREATE TABLE undo (key_id TEXT NOT NULL, seq INTEGER NOT NULL,
                     account TEXT NOT NULL, step TEXT NOT NULL, PRIMARY KEY (key_id, seq));
                 INSERT INTO accounts VALUES ('a_bench', 0, 0, 0);",
            )
            .expect("the tables");
        let tx = self.conn.transaction().expect("a transaction");
        {
            let mut insert = tx
                .prepare("INSERT INTO records (account, id, body) VALUES (?1, ?2, ?3)")
                .expect("the insert");
            for n in 0..PROJECTS {
                insert
                    .execute(rusqlite::params![ACCOUNT, project_id(n), body])
                    .expect("a project");
            }
            for n in 0..rows as u64 {
                insert
                    .execute(rusqlite::params![ACCOUNT, card_id(n), body])
                    .expect("a card");
            }
        }
        tx.commit().expect("the account's rows");
    }

    fn group(&mut self, cards: &[(u64, String)], rev: u64) {
        let tx = self.conn.transaction().expect("a transaction");
        {
            let mut card = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO records (account, id, body) VALUES (?1, ?2, ?3)",
                )
                .expect("the card");
            let mut project = tx
                .prepare_cached("UPDATE records SET body = ?3 WHERE account = ?1 AND id = ?2")
                .expect("the project");
            let mut undo = tx
                .prepare_cached(
                    "INSERT INTO undo (key_id, seq, account, step) VALUES ('y_bench', ?1, ?2, ?3)",
                )
                .expect("the undo step");
            for (i, (n, body)) in cards.iter().enumerate() {
                card.execute(rusqlite::params![ACCOUNT, card_id(*n), body])
                    .expect("a card");
                project
                    .execute(rusqlite::params![ACCOUNT, project_id(*n), body])
                    .expect("a project");
                undo.execute(rusqlite::params![
                    (rev as usize + i) as i64,
                    ACCOUNT,
                    UNDO_STEP
                ])
                .expect("an undo step");
            }
            tx.prepare_cached(
                "UPDATE accounts SET rev = ?2, last_stamp = ?2, stored_bytes = stored_bytes + 1
                 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(rusqlite::params![ACCOUNT, rev as i64]))
            .expect("the counters");
        }
        tx.commit().expect("a commit");
    }

    fn finish(self: Box<Self>) {
        let Sqlite { conn, path } = *self;
        drop(conn);
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

struct Postgres {
    client: postgres::Client,
    /// Prepared once the tables exist, as the server's writer keeps its statements.
    statements: Option<Statements>,
}

struct Statements {
    lock: postgres::Statement,
    clock: postgres::Statement,
    card: postgres::Statement,
    project: postgres::Statement,
    undo: postgres::Statement,
    counters: postgres::Statement,
    log: postgres::Statement,
    notify: postgres::Statement,
}

impl Postgres {
    fn open(url: &str) -> Postgres {
        let client =
            postgres::Client::connect(url, postgres::NoTls).expect("the raw loop's PostgreSQL");
        Postgres {
            client,
            statements: None,
        }
    }
}

impl Writes for Postgres {
    fn prepare(&mut self, body: &str, rows: usize) {
        self.client
            .batch_execute(
                "DROP TABLE IF EXISTS accounts, records, undo, changes;
                 CREATE TABLE accounts (id TEXT PRIMARY KEY, rev BIGINT NOT NULL,
                     last_stamp BIGINT NOT NULL, stored_bytes BIGINT NOT NULL);
                 CREATE TABLE records (account TEXT NOT NULL, id TEXT NOT NULL,
                     body TEXT NOT NULL, PRIMARY KEY (account, id));
                 CREATE TABLE undo (account TEXT NOT NULL, key_id TEXT NOT NULL,
                     seq BIGINT NOT NULL, step TEXT NOT NULL, PRIMARY KEY (account, key_id, seq));
                 CREATE TABLE changes (account TEXT NOT NULL, rev BIGINT NOT NULL,
                     stamp BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (account, rev));
                 INSERT INTO accounts VALUES ('a_bench', 0, 0, 0);",
            )
            .expect("the tables");
        let ids: Vec<String> = (0..PROJECTS)
            .map(project_id)
            .chain((0..rows as u64).map(card_id))
            .collect();
        self.client
            .execute(
                "INSERT INTO records (account, id, body)
                 SELECT $1, id, $3 FROM unnest($2::text[]) AS id",
                &[&ACCOUNT, &ids, &body],
            )
            .expect("the account's rows");
        self.client
            .batch_execute("ANALYZE")
            .expect("the tables analysed");
        let c = &mut self.client;
        let mut prepare = |sql: &str| c.prepare(sql).expect("a statement");
        self.statements = Some(Statements {
            lock: prepare(
                "SELECT id, rev, last_stamp, stored_bytes FROM accounts
                 WHERE id = ANY($1) ORDER BY id FOR UPDATE",
            ),
            clock: prepare(
                "SELECT pg_current_xact_id()::text,
                        (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            ),
            card: prepare(
                "INSERT INTO records (account, id, body)
                 SELECT $1, * FROM unnest($2::text[], $3::text[])
                 ON CONFLICT (account, id) DO UPDATE SET body = EXCLUDED.body",
            ),
            project: prepare(
                "UPDATE records SET body = p.body
                 FROM unnest($2::text[], $3::text[]) AS p (id, body)
                 WHERE records.account = $1 AND records.id = p.id",
            ),
            undo: prepare(
                "INSERT INTO undo (account, key_id, seq, step)
                 SELECT $1, 'y_bench', s, $3 FROM unnest($2::bigint[]) AS s",
            ),
            counters: prepare(
                "UPDATE accounts SET rev = $2, last_stamp = $2, stored_bytes = stored_bytes + 1
                 WHERE id = $1",
            ),
            log: prepare(
                "INSERT INTO changes (account, rev, stamp, body)
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[])",
            ),
            notify: prepare("SELECT pg_notify('workboard_raw', $1)"),
        });
    }

    fn group(&mut self, cards: &[(u64, String)], rev: u64) {
        let s = self.statements.as_ref().expect("prepared");
        let mut tx = self.client.transaction().expect("a transaction");
        tx.query(&s.lock, &[&vec![ACCOUNT]])
            .expect("the account locked");
        tx.query_one(&s.clock, &[])
            .expect("the transaction's id and the clock");
        // Each kind of row in one statement for the whole group: the fewest round trips
        // the rows can be written in. A project several commands touch is written once,
        // with its last body.
        // (One statement may not write a row twice: a card two commands of the group
        // rewrite is written once too.)
        let mut unique: std::collections::BTreeMap<String, &str> = Default::default();
        for (n, body) in cards {
            unique.insert(card_id(*n), body);
        }
        let (ids, bodies): (Vec<String>, Vec<&str>) = unique.into_iter().unzip();
        let mut projects: std::collections::BTreeMap<String, &str> = Default::default();
        for (n, body) in cards {
            projects.insert(project_id(*n), body);
        }
        let (project_ids, project_bodies): (Vec<String>, Vec<&str>) = projects.into_iter().unzip();
        let seqs: Vec<i64> = (0..cards.len())
            .map(|i| (rev as usize + i) as i64)
            .collect();
        tx.execute(&s.card, &[&ACCOUNT, &ids, &bodies])
            .expect("the cards");
        tx.execute(&s.project, &[&ACCOUNT, &project_ids, &project_bodies])
            .expect("the projects");
        tx.execute(&s.undo, &[&ACCOUNT, &seqs, &UNDO_STEP])
            .expect("the undo steps");
        let last = rev as i64;
        tx.execute(&s.counters, &[&ACCOUNT, &last])
            .expect("the counters");
        let accounts: Vec<&str> = cards.iter().map(|_| ACCOUNT).collect();
        let bodies: Vec<&str> = cards.iter().map(|(_, b)| b.as_str()).collect();
        let revs: Vec<i64> = (0..cards.len() as i64)
            .map(|i| last - cards.len() as i64 + 1 + i)
            .collect();
        tx.execute(&s.log, &[&accounts, &revs, &revs, &bodies])
            .expect("the change log");
        tx.query(&s.notify, &[&format!("c {last} {last} raw {ACCOUNT}")])
            .expect("the announcement");
        tx.commit().expect("a commit");
    }

    fn finish(self: Box<Self>) {
        let mut client = self.client;
        let _ = client.batch_execute("DROP TABLE IF EXISTS accounts, records, undo, changes");
    }
}
