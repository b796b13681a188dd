//! Opening a node: the store its [`NodeConfig`] names, the pepper that goes with it, and the
//! two models wired together through [`crate::publish`] (the data folder and its lock are
//! [`crate::config`]'s). What a node is made of is
//! one [`Node`]; serving it is [`crate::run`].

use std::sync::Arc;

use read_model::ReadModel;
use write_model::store::{self, Store};
use write_model::{Clocks, WriteModel};

use crate::admin::Admin;
use crate::auth::KeyCache;
use crate::config::{NodeConfig, SEARCH_FOLDER};
use crate::error::Error;
use crate::live::Hub;
use crate::metrics::Metrics;
use crate::pepper;
use crate::state::{AppState, Parts};

/// Whether opening a node may make a new, empty store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creating {
    /// `serve` and `keys issue` make a store where there is none.
    Allowed,
    /// Every other command needs one already.
    Refused,
}

/// Everything a running Workboard node is made of.
#[derive(Clone)]
pub struct Node {
    pub state: Arc<AppState>,
    /// What request handlers share: the node's state and the HTTP layer's own parts.
    pub http: Arc<crate::http::Shared>,
    pub admin: Arc<Admin>,
    pub store: Arc<dyn Store>,
    pub clocks: Arc<Clocks>,
}

impl Node {
    /// Opens the node's store (making it only when `creating` allows), settles its pepper,
    /// and starts the writer with the read model behind it.
    pub fn open(config: &NodeConfig, creating: Creating) -> Result<Node, Error> {
        if creating == Creating::Refused && !config.store_exists()? {
            return Err(Error::new(format!(
                "{} holds no store (start `workboard serve` there, or issue a key, to make one)",
                config.location()
            )));
        }
        let store = store::open(&config.location(), config.durability).map_err(Error::store)?;
        let pepper = Arc::new(pepper::settle(&*store, &config.pepper_path())?);
        let limits = Arc::new(config.limits.clone());
        let clocks = Arc::new(match store.is_shared() {
            true => Clocks::shared(),
            false => Clocks::default(),
        });
        let read = Arc::new(
            ReadModel::open(store.clone(), clocks.clone(), &limits)
                .map_err(|e| Error::new(e.to_string()))?
                .with_search_folder(config.data.join(SEARCH_FOLDER)),
        );
        let keys = Arc::new(KeyCache::default());
        for key in store.live_keys().map_err(Error::store)? {
            keys.insert(key);
        }
        let saved_allowances = store.saved_allowances().map_err(Error::store)?;
        let hub = Arc::new(Hub::new(
            limits.sockets_per_account,
            limits.ticket_seconds,
            crate::tickets::Tickets::for_store(&store),
        ));
        let sink = crate::publish::sink(read.clone(), keys.clone(), hub.clone());
        let openapi = crate::http::openapi_json(&limits);
        let metrics = Arc::new(Metrics::new(
            crate::http::RouteTable::from_openapi(&openapi).templates(),
        ));
        let observer = {
            let metrics = metrics.clone();
            Box::new(move |commands: usize, took: std::time::Duration| {
                metrics.group_size.observe(commands as f64);
                metrics.commit_seconds.observe(took.as_secs_f64());
            })
        };
        let (write, _writer_thread) =
            WriteModel::start(&*store, limits, clocks.clone(), sink, observer)
                .map_err(Error::store)?;
        let admin = Arc::new(Admin {
            write: write.clone(),
            read: read.clone(),
            pepper: pepper.clone(),
            store: store.clone(),
        });
        let state = Arc::new(AppState::new(Parts {
            write,
            read,
            keys,
            pepper,
            trust_proxy: config.trust_proxy,
            saved_allowances,
            hub,
            metrics,
            store: store.clone(),
        }));
        let cors = crate::http::cors::Cors::new(&config.cors_origins);
        let discovery =
            crate::discovery::discovery_document(&state.limits, store.engine(), cors.origins())
                .to_string();
        let http = Arc::new(crate::http::Shared::new(
            state.clone(),
            openapi,
            discovery,
            cors,
        ));
        Ok(Node {
            state,
            http,
            admin,
            store,
            clocks,
        })
    }

    /// Issues the first key of a store with no account yet and prints it once on stdout.
    ///
    /// Several nodes may start together on one empty PostgreSQL database: each claims the
    /// `first-key` entry in the store's meta table with a random token, and only the node
    /// whose token was kept issues and prints the key.
    pub fn first_key_if_new(&self) -> Result<(), Error> {
        if !self.store.account_ids().map_err(Error::store)?.is_empty() {
            return Ok(());
        }
        let mut token = [0u8; 16];
        getrandom::fill(&mut token).map_err(|e| Error::new(e.to_string()))?;
        let kept = self
            .store
            .claim_meta("first-key", &token)
            .map_err(Error::store)?;
        if kept != token {
            crate::tell!("another node issued this store's first key");
            return Ok(());
        }
        let (key, account, _) = self
            .admin
            .issue_key(None, Some("first key".into()))
            .map_err(Error::store)?;
        println!("key: {key}");
        crate::tell!("account: {account}");
        Ok(())
    }
}
