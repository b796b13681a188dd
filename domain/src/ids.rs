//! Identifiers: the type prefixes, the typed id of each kind (what commands carry), checking
//! client-supplied ids, and generating new ones.

use crate::error::WriteError;

/// The kinds of identifier and their prefixes (contract: Identifiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    Project,
    Column,
    Task,
    ChecklistItem,
    Tag,
    Comment,
    Key,
    Account,
    BinEntry,
}

impl IdKind {
    pub const fn prefix(self) -> &'static str {
        match self {
            IdKind::Project => "b_",
            IdKind::Column => "c_",
            IdKind::Task => "t_",
            IdKind::ChecklistItem => "k_",
            IdKind::Tag => "g_",
            IdKind::Comment => "m_",
            IdKind::Key => "y_",
            IdKind::Account => "a_",
            IdKind::BinEntry => "d_",
        }
    }

    /// Whether `id` is well formed for this kind: the prefix, then 1 to 64 of `[A-Za-z0-9_-]`.
    pub fn is_valid(self, id: &str) -> bool {
        match id.strip_prefix(self.prefix()) {
            Some(rest) => {
                (1..=64).contains(&rest.len())
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            }
            None => false,
        }
    }

    /// Checks a client-supplied id, answering 422 naming `field` when it is malformed.
    pub fn check(self, id: &str, field: &str) -> Result<(), WriteError> {
        if self.is_valid(id) {
            Ok(())
        } else {
            Err(WriteError::invalid(
                field,
                format!(
                    "`{field}` must be `{}` followed by 1 to 64 of A-Z a-z 0-9 _ -",
                    self.prefix()
                ),
            ))
        }
    }

    /// A fresh id: the prefix, the creation time in 8 characters that sort as it does, and
    /// 14 random URL-safe characters (84 bits). Ids made one after another sort one after
    /// another, so a create adds to the end of the store's index of ids instead of splitting
    /// a page at random (a single create dirtied about six pages; with these, about two).
    pub fn generate(self) -> String {
        let mut id = String::with_capacity(24);
        id.push_str(self.prefix());
        push_sortable_time(&mut id, crate::clock::wall_ms());
        id.push_str(&thread_token(14));
        id
    }
}

/// Declares the typed id of one kind: a newtype over the id's text, so that a command naming
/// a task cannot be handed a column's id. Two ways in, by what the id is for:
/// - `parse` checks a client-supplied id for a new record (a create's `id`): 422 naming the
///   field when it is not the kind's prefix and 1 to 64 of `[A-Za-z0-9_-]`;
/// - `named` takes an id that should name an existing record (a path's `:id`, a reference in
///   a body) as sent. Its shape is deliberately not checked there: an id of the wrong shape
///   names no record, and answers what any unknown id answers (404, or a 422 naming the
///   field), where and when the command looks the record up, after the body's own checks.
macro_rules! typed_id {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub const KIND: IdKind = IdKind::$kind;

            /// A client-supplied id for a new record, checked: 422 naming `field`.
            pub fn parse(id: String, field: &str) -> Result<Self, WriteError> {
                IdKind::$kind.check(&id, field)?;
                Ok($name(id))
            }

            /// Checks an id decoded with the rest of a list entry (as `parse` does), where
            /// its field is `field`.
            pub fn check(&self, field: &str) -> Result<(), WriteError> {
                IdKind::$kind.check(&self.0, field)
            }

            /// An id that should name an existing record of this kind, as sent.
            pub fn named(id: impl Into<String>) -> Self {
                $name(id.into())
            }

            /// A fresh id of this kind.
            pub fn generate() -> Self {
                $name(IdKind::$kind.generate())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    )*};
}

typed_id! {
    /// A project's id (`b_`).
    ProjectId => Project;
    /// A column's id (`c_`).
    ColumnId => Column;
    /// A card's id (`t_`).
    TaskId => Task;
    /// A checklist item's id (`k_`).
    ItemId => ChecklistItem;
    /// A tag's id (`g_`).
    TagId => Tag;
    /// A comment's id (`m_`).
    CommentId => Comment;
    /// A key's id (`y_`).
    KeyId => Key;
    /// A recycle bin entry's id (`d_`).
    BinEntryId => BinEntry;
}

/// 64 URL-safe characters in byte order, so that fixed-width numbers written in them sort as
/// the numbers do.
const SORTABLE: &[u8; 64] = b"-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";

/// `ms` as 8 characters of [`SORTABLE`], most significant first (48 bits: until year 10889).
fn push_sortable_time(out: &mut String, ms: i64) {
    let ms = ms.max(0) as u64;
    for shift in (0..8).rev() {
        out.push(SORTABLE[((ms >> (shift * 6)) & 63) as usize] as char);
    }
}

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `len` URL-safe characters from the operating system's generator, 6 bits each: for
/// secrets (keys, socket tickets).
pub fn random_token(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).expect("the operating system's random generator failed");
    bytes
        .iter()
        .map(|b| URL_SAFE[usize::from(b & 63)] as char)
        .collect()
}

/// `len` URL-safe characters from this thread's CSPRNG (ChaCha, seeded and reseeded from the
/// operating system), 6 bits each: for record ids and request ids, made on every write and
/// every request, where a system call each showed in profiles.
pub fn thread_token(len: usize) -> String {
    use rand::RngCore;
    let mut rng = rand::rng();
    (0..len)
        .map(|_| URL_SAFE[(rng.next_u32() & 63) as usize] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_prefix_and_alphabet() {
        assert!(IdKind::Project.is_valid("b_abc-_9"));
        assert!(!IdKind::Project.is_valid("c_abc"));
        assert!(!IdKind::Project.is_valid("b_"));
        assert!(!IdKind::Project.is_valid("b_a b"));
        assert!(IdKind::Task.is_valid(&format!("t_{}", "x".repeat(64))));
        assert!(!IdKind::Task.is_valid(&format!("t_{}", "x".repeat(65))));
    }

    #[test]
    fn typed_ids_check_what_a_client_makes_and_keep_what_it_names() {
        assert_eq!(TaskId::parse("t_a".into(), "id").unwrap().as_str(), "t_a");
        let wrong = ColumnId::parse("t_a".into(), "columnId").unwrap_err();
        assert!(
            wrong.to_string().contains("`columnId` must be `c_`"),
            "{wrong}"
        );
        // Named as sent: a wrong shape is left to the lookup, which finds no record.
        assert_eq!(TaskId::named("c_a b").as_str(), "c_a b");
        assert!(TagId::named("t_a").check("tagIds").is_err());
        assert!(BinEntryId::generate().check("id").is_ok());
        // On the wire, a typed id is its text.
        let ids: Vec<ItemId> = serde_json::from_str(r#"["k_1","x"]"#).unwrap();
        assert_eq!(serde_json::to_string(&ids).unwrap(), r#"["k_1","x"]"#);
    }

    #[test]
    fn generated_ids_are_valid_and_distinct() {
        let a = IdKind::Task.generate();
        assert!(IdKind::Task.is_valid(&a));
        assert_eq!(a.len(), 24);
        assert_ne!(a, IdKind::Task.generate());
    }

    #[test]
    fn the_time_part_sorts_as_the_time_does() {
        assert!(SORTABLE.windows(2).all(|w| w[0] < w[1]));
        let times = [
            0,
            1,
            63,
            64,
            1_700_000_000_000,
            1_800_000_000_000,
            (1 << 48) - 1,
        ];
        let texts: Vec<String> = times
            .iter()
            .map(|&t| {
                let mut s = String::new();
                push_sortable_time(&mut s, t);
                s
            })
            .collect();
        assert!(texts.iter().all(|t| t.len() == 8));
        assert!(texts.windows(2).all(|w| w[0] < w[1]), "{texts:?}");
        let earlier = IdKind::Task.generate();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(earlier[..10] < IdKind::Task.generate()[..10]);
    }
}
