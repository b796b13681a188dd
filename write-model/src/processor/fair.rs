//! Fairness between accounts at the writer. Each account holds at most its share of the
//! writer's queue ([`Shares`]): a command past it is refused at once (503, nothing written),
//! so one account's flood is refused before another account's write waits or is refused.
//! And what the writer has drained runs round-robin between accounts ([`Lanes`]), so one
//! account's queued commands do not all go into a group before another account's one.

use std::collections::VecDeque;
use std::sync::Arc;

use ahash::AHashMap;
use parking_lot::Mutex;

use super::envelope::Envelope;

/// How many commands each account has queued or running, until each is answered.
pub(super) struct Shares {
    per_account: usize,
    held: Mutex<AHashMap<String, usize>>,
}

impl Shares {
    pub(super) fn new(per_account: usize) -> Arc<Shares> {
        Arc::new(Shares {
            per_account: per_account.max(1),
            held: Mutex::new(AHashMap::new()),
        })
    }

    /// A place for one more of `account`'s commands, or `None` when it holds its share.
    pub(super) fn take(self: &Arc<Self>, account: &str) -> Option<Ticket> {
        let mut held = self.held.lock();
        if let Some(n) = held.get_mut(account) {
            if *n >= self.per_account {
                return None;
            }
            *n += 1;
        } else {
            held.insert(account.to_owned(), 1);
        }
        Some(Ticket {
            shares: self.clone(),
            account: account.to_owned(),
        })
    }

    /// How many commands `account` holds now.
    #[cfg(test)]
    pub(super) fn held(&self, account: &str) -> usize {
        self.held.lock().get(account).copied().unwrap_or(0)
    }
}

/// One queued command's place in its account's share, given back when it is dropped: when
/// the command is answered, or when it is refused or lost with a stopped writer.
pub(super) struct Ticket {
    shares: Arc<Shares>,
    account: String,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock();
        if let Some(n) = held.get_mut(&self.account) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.account);
            }
        }
    }
}

/// The commands the writer has drained, one first-in-first-out lane per account (the
/// account-less commands of the service itself share one), taken round-robin.
#[derive(Default)]
pub(super) struct Lanes {
    lanes: AHashMap<Option<String>, VecDeque<Envelope>>,
    /// The lanes that hold commands, in the order their turns come.
    turns: VecDeque<Option<String>>,
    len: usize,
}

impl Lanes {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn push(&mut self, env: Envelope) {
        let account = env.request.account.clone();
        let lane = self.lanes.entry(account.clone()).or_default();
        if lane.is_empty() {
            self.turns.push_back(account);
        }
        lane.push_back(env);
        self.len += 1;
    }

    /// Up to `max` commands, one from each account in turn: each account's own commands stay
    /// in the order they came.
    pub(super) fn take_group(&mut self, max: usize) -> Vec<Envelope> {
        let mut group = Vec::with_capacity(max.min(self.len));
        while group.len() < max {
            let Some(account) = self.turns.pop_front() else {
                break;
            };
            let Some(lane) = self.lanes.get_mut(&account) else {
                continue;
            };
            if let Some(env) = lane.pop_front() {
                group.push(env);
                self.len -= 1;
            }
            if lane.is_empty() {
                self.lanes.remove(&account);
            } else {
                self.turns.push_back(account);
            }
        }
        group
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Command, Request};

    fn envelope(account: &str, seen: &Arc<Mutex<Vec<String>>>, tag: &str) -> Envelope {
        let (seen, tag) = (seen.clone(), tag.to_owned());
        Envelope {
            request: Request {
                account: Some(account.to_owned()),
                key_id: None,
                command: Command::Probe,
            },
            keyed: None,
            reply: Box::new(move |_| seen.lock().push(tag)),
        }
    }

    #[test]
    fn an_account_holds_at_most_its_share_until_its_commands_are_answered() {
        let shares = Shares::new(2);
        let first = shares.take("a").expect("room");
        let _second = shares.take("a").expect("room");
        assert!(shares.take("a").is_none(), "a third is past the share");
        let other = shares.take("b").expect("another account has its own share");
        assert_eq!(shares.held("a"), 2);
        drop(first);
        assert_eq!(shares.held("a"), 1);
        assert!(
            shares.take("a").is_some(),
            "an answered command frees its place"
        );
        drop(other);
        assert_eq!(shares.held("b"), 0);
    }

    #[test]
    fn a_group_takes_one_command_of_each_account_in_turn_each_in_its_order() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut lanes = Lanes::default();
        for tag in ["a1", "a2", "a3", "a4"] {
            lanes.push(envelope("a", &seen, tag));
        }
        lanes.push(envelope("b", &seen, "b1"));
        lanes.push(envelope("c", &seen, "c1"));
        lanes.push(envelope("b", &seen, "b2"));
        assert_eq!(lanes.len(), 7);
        let answer = |group: Vec<Envelope>| {
            for env in group {
                (env.reply)(Ok(crate::command::Outcome::Saved));
            }
            std::mem::take(&mut *seen.lock())
        };
        assert_eq!(answer(lanes.take_group(4)), ["a1", "b1", "c1", "a2"]);
        assert_eq!(answer(lanes.take_group(4)), ["b2", "a3", "a4"]);
        assert!(lanes.is_empty());
    }
}
