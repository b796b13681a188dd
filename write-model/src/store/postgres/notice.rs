//! The announcements nodes send each other through PostgreSQL's `NOTIFY`, on one channel,
//! each naming the node that sent it (a random token per process):
//! - `c REV STAMP NODE ACCOUNT`: a change set committed;
//! - `k NODE JSON`: a key issued or revoked (the change as JSON: its digest, never the key);
//! - `p NODE N`: a feed's ping to itself.
//!
//! PostgreSQL delivers them after the sending transaction commits, in commit order. A node
//! ignores its own changes (its writer applied them before answering) and others' pings.

use crate::change::KeyChange;
use crate::error::WriteError;
use crate::store::shared::Notice;

/// The channel every node listens on.
pub const CHANNEL: &str = "workboard";

pub fn changed(node: &str, account: &str, rev: i64, stamp: i64) -> String {
    format!("c {rev} {stamp} {node} {account}")
}

pub fn key(node: &str, change: &KeyChange) -> Result<String, WriteError> {
    Ok(format!("k {node} {}", serde_json::to_string(change)?))
}

pub fn ping(node: &str, n: u64) -> String {
    format!("p {node} {n}")
}

/// Reads a payload heard by node `own`; `None` for what it ignores, or anything unreadable
/// (logged).
pub fn parse(payload: &str, own: &str) -> Option<Notice> {
    let mut parts = payload.splitn(2, ' ');
    let (kind, rest) = (parts.next()?, parts.next().unwrap_or(""));
    let parsed = match kind {
        "c" => {
            let mut parts = rest.splitn(4, ' ');
            let rev = parts.next().and_then(|r| r.parse().ok());
            let stamp = parts.next().and_then(|s| s.parse().ok());
            let node = parts.next();
            let account = parts.next().filter(|a| !a.is_empty());
            match (rev, stamp, node, account) {
                (_, _, Some(node), _) if node == own => return None,
                (Some(rev), Some(stamp), Some(_), Some(account)) => Some(Notice::Changed {
                    account: account.to_owned(),
                    rev,
                    stamp,
                }),
                _ => None,
            }
        }
        "k" => match rest.split_once(' ') {
            Some((node, _)) if node == own => return None,
            Some((_, json)) => serde_json::from_str(json).ok().map(Notice::Key),
            None => None,
        },
        "p" => {
            return match rest.split_once(' ') {
                Some((node, n)) if node == own => n.parse().ok().map(Notice::Ping),
                _ => None,
            };
        }
        _ => None,
    };
    if parsed.is_none() {
        tracing::warn!(
            payload,
            "an announcement from another node could not be read"
        );
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_of_other_nodes_read_back_and_a_node_hears_only_its_own_pings() {
        assert_eq!(
            parse(&changed("them", "a_x y", 7, 99), "me"),
            Some(Notice::Changed {
                account: "a_x y".into(),
                rev: 7,
                stamp: 99
            })
        );
        assert_eq!(parse(&changed("me", "a_x", 7, 99), "me"), None);
        let k = KeyChange::Revoked {
            id: "y_1".into(),
            digest: vec![1, 2, 3],
        };
        assert_eq!(
            parse(&key("them", &k).unwrap(), "me"),
            Some(Notice::Key(k.clone()))
        );
        assert_eq!(parse(&key("me", &k).unwrap(), "me"), None);
        assert_eq!(parse(&ping("me", 3), "me"), Some(Notice::Ping(3)));
        assert_eq!(parse(&ping("them", 3), "me"), None);
        assert_eq!(parse("c 1 x", "me"), None);
    }
}
