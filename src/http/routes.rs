//! The keyed route table: each route under `/api/v1/` (and `/api/`) once, as its path, method,
//! handler and the line the discovery document says about it. The router and the discovery
//! document's endpoint list are both built from it, so neither repeats the other.

use salvo::prelude::*;
use salvo::routing::filters;

use super::read_route::read;
use super::{account, cards, import, resources, search, sync};

/// One route of the table as a salvo router: GET is a read route (HEAD too).
macro_rules! on {
    (GET, $handler:path) => {
        read($handler)
    };
    (POST, $handler:path) => {
        Router::with_filter(filters::post()).goal($handler)
    };
    (PATCH, $handler:path) => {
        Router::with_filter(filters::patch()).goal($handler)
    };
    (DELETE, $handler:path) => {
        Router::with_filter(filters::delete()).goal($handler)
    };
}

/// Declares the table once and expands it into the router and the endpoint list.
macro_rules! keyed_routes {
    ($( $path:literal { $( $method:ident $handler:path => $summary:literal; )+ } )+) => {
        /// Every keyed route, relative to its version prefix. The router tries its children
        /// in order, so a literal path comes before a `{id}` path it would otherwise match.
        pub(super) fn keyed() -> Router {
            Router::new() $( .push(Router::with_path($path) $( .push(on!($method, $handler)) )+) )+
        }

        /// The same routes as (method, path relative to the version prefix, summary).
        pub const KEYED: &[(&str, &str, &str)] = &[
            $( $( (stringify!($method), $path, $summary), )+ )+
        ];
    };
}

keyed_routes! {
    "projects" {
        GET resources::list_projects => "the whole account; query: name, completed";
        POST resources::create_project => "create a project, optionally with its columns";
    }
    "projects/{id}" {
        GET resources::get_project => "one project in the whole-account shape; query: completed";
        PATCH resources::update_project => "update any project field, bare or guarded";
        DELETE resources::delete_project => "delete a project and everything in it (to the bin)";
    }
    "columns" {
        POST resources::create_column => "create a column";
    }
    "columns/{id}" {
        PATCH resources::update_column => "update any column field, bare or guarded";
        DELETE resources::delete_column => "delete a column and its cards (to the bin)";
    }
    "tasks" {
        POST resources::create_task => "create one task, or {tasks: [...]} as one all-or-nothing batch";
    }
    "tasks/positions" {
        PATCH cards::set_positions => "bulk reorder {positions: [{id, position}]}";
    }
    "tasks/{id}" {
        GET resources::get_task => "{ok, task}";
        PATCH resources::update_task => "update any task field, bare or guarded";
        DELETE resources::delete_task => "delete a task and its subtasks (to the bin)";
    }
    "tasks/{id}/tags" {
        POST cards::add_tag => "add a tag {id?, text}";
    }
    "tasks/{id}/comments" {
        POST cards::add_comment => "add a comment {id?, text}";
    }
    "tasks/{id}/checklist" {
        POST cards::add_checklist => "add an item, or {items: [...]} appended in order";
    }
    "tasks/{id}/checklist/order" {
        POST cards::order_checklist => "reorder the checklist {ids: [...]}";
    }
    "checklist/{id}" {
        PATCH cards::update_checklist_item => "update a checklist item {text?, done?}";
        DELETE cards::delete_checklist_item => "remove a checklist item for good";
    }
    "tags/{id}" {
        DELETE cards::delete_tag => "remove a tag for good";
    }
    "comments/{id}" {
        DELETE cards::delete_comment => "remove a comment for good";
    }
    "changes" {
        GET sync::changes => "catch up; query: since, completed, manifest, holding";
    }
    "export" {
        GET sync::export => "the whole account as a file; query: format (json: the file that imports back, the default; csv or ndjson: one row per card)";
    }
    "import" {
        POST import::import => "import a file as the body, all or nothing, one write; query: from (workboard, the default, or trello), lenient (trello only)";
    }
    "search" {
        GET search::search => "full-text search of the account's cards; query: q, completed, limit, cursor";
    }
    "usage" {
        GET account::usage => "storage used and purgeable, and this key's allowance today";
    }
    "purge" {
        POST cards::purge => "destroy every deleted card now";
    }
    "undo" {
        POST account::undo => "reverse this key's latest step";
    }
    "bin" {
        GET cards::list_bin => "the recycle bin, newest first";
    }
    "bin/{id}/restore" {
        POST cards::restore => "restore one bin entry";
    }
    "keys" {
        GET account::list_keys => "the account's keys (never the keys themselves)";
        POST account::issue_key => "add a key {label?, access?: full|read|calendar, expiresAt?: ms}; the key is shown once; a key made by an expiring key expires no later";
    }
    "keys/{id}" {
        DELETE account::revoke_key => "revoke a key";
    }
    "live/ticket" {
        POST sync::issue_ticket => "a one-socket ticket for the change socket";
    }
}
