//! Each record kind's writable fields, declared once. A kind's table (an invocation of
//! [`writable_fields!`] in [`tables`]) names each field with its wire name and its checked
//! value type ([`FieldValue`]); from that one list come:
//! - the typed struct a create or update body parses into, and its parsing;
//! - the guards, checked in the table's order (the documented order that names the first
//!   failing field), and the plain writes;
//! - whether a create retried with the same id sends the same fields;
//! - the field names the route accepts (the 422's `accepted` list);
//! - the [`FieldSpec`] list the OpenAPI request and read schemas and the discovery
//!   document's field notes are built from;
//! - the fields' part of the record's read shape;
//! - the fields' columns of the analytic exports ([`Exported`]: a CSV cell and an NDJSON
//!   value each, written by the value's type).
//!
//! snake_case wire names are derived (`deadline_time` for `deadlineTime`) when a body is read,
//! and for the CSV header.
//!
//! A field's kind is its value type (a [`FieldValue`]); the kinds at hand cover text, prose,
//! ids, dates, times, stamps, numbers, a bounded whole number ([`Bounded`]), effort, tags,
//! photos and booleans. A new kind (a small JSON object, say) is a type that implements
//! [`FieldValue`] with [`Shape::Object`] (members of the other shapes, [`Shape::Choice`]
//! among them) and whose stored form implements [`Kept`] (`impl Kept for T {}` writes it to
//! CSV as compact JSON).

mod kept;
mod tables;
mod values;

pub use kept::*;
pub use tables::*;
pub use values::*;

use crate::limits::Limits;

/// How the interface documents a field's value (the OpenAPI request schemas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Text trimmed to its limit; `required` ones are never empty.
    Text {
        required: bool,
        nullable: bool,
    },
    /// Prose, refused when over its limit.
    Prose {
        nullable: bool,
    },
    /// An id naming another record.
    Id,
    /// 1 to 4, clamped.
    Priority,
    Number,
    /// Milliseconds since the Unix epoch.
    Stamp,
    Date,
    Time,
    Effort,
    Boolean,
    TagList,
    Photo,
    /// A whole number from `min` to `max`.
    Integer {
        min: i64,
        max: i64,
    },
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A small JSON object holding each of these members (and no other).
    Object(&'static [Member]),
    /// Any of the above, or `null`.
    Nullable(&'static Shape),
}

/// A member of a [`Shape::Object`]: always present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub name: &'static str,
    pub shape: Shape,
}

/// What the discovery document says of a field, with the limits in force.
pub type Note = fn(&Limits) -> String;

/// One writable field, as the documents describe it.
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    /// Its wire name in camelCase (the snake_case spelling is accepted too).
    pub name: &'static str,
    pub shape: Shape,
    /// Whether reads may show it as `null` (what the record keeps may be none).
    pub read_null: bool,
    /// What the discovery document's `fieldNotes` say of it; `None` where another table's
    /// field of the same name says it (`position`, `archivedAt`) or the shape says enough.
    pub note: Option<Note>,
}

impl FieldSpec {
    /// The note of the discovery document: the table's own, else one made from the shape.
    pub fn note(&self, limits: &Limits) -> String {
        match self.note {
            Some(note) => note(limits),
            None => self.shape.describe(),
        }
    }
}

impl Shape {
    /// The value in words, for a field the table gives no note of its own.
    pub fn describe(&self) -> String {
        match self {
            Shape::Text { nullable, .. } => or_null("Text, trimmed to fit".into(), *nullable),
            Shape::Prose { nullable } => {
                or_null("Text; over its limit answers 422".into(), *nullable)
            }
            Shape::Id => "An id of another record".into(),
            Shape::Priority => "1 (highest) to 4".into(),
            Shape::Number => "A finite number".into(),
            Shape::Stamp => "ms since the Unix epoch".into(),
            Shape::Date => "YYYY-MM-DD, a date that exists".into(),
            Shape::Time => "HH:MM, 24-hour".into(),
            Shape::Effort => "easy, medium or hard".into(),
            Shape::Boolean => "true or false".into(),
            Shape::TagList => "A list of texts".into(),
            Shape::Photo => "A base64 data URL of a WebP, JPEG or PNG image".into(),
            Shape::Integer { min, max } => format!("A whole number from {min} to {max}"),
            Shape::Choice(values) => format!("One of {}", values.join(", ")),
            Shape::Object(members) => {
                let each: Vec<String> = (members.iter())
                    .map(|m| format!("{} ({})", m.name, m.shape.describe()))
                    .collect();
                format!("An object of {}", each.join("; "))
            }
            Shape::Nullable(inner) => or_null(inner.describe(), true),
        }
    }
}

fn or_null(said: String, nullable: bool) -> String {
    if nullable {
        format!("{said}, or null")
    } else {
        said
    }
}

/// One writable field as the analytic exports write it, from a record of kind `R`.
#[derive(Clone, Copy)]
pub struct Exported<R> {
    /// Its wire name: the NDJSON key; the CSV header has it in snake_case.
    pub name: &'static str,
    /// Its CSV cell.
    pub cell: fn(&R) -> String,
    /// Appends its NDJSON value to a line.
    pub line: fn(&R, &mut Vec<u8>),
}

/// Appends a stored value of `T` to an NDJSON line (through [`FieldValue::line`]).
pub fn write_line<T: FieldValue>(stored: &T::Stored, out: &mut Vec<u8>) {
    struct Line<'a, T: FieldValue>(&'a T::Stored);
    impl<T: FieldValue> serde::Serialize for Line<'_, T> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            T::line(self.0, s)
        }
    }
    // Plain data written to memory cannot fail.
    serde_json::to_writer(out, &Line::<T>(stored)).expect("a field's value writes to memory");
}

/// A camelCase wire name in snake_case (`deadlineTime` -> `deadline_time`): the CSV header.
pub fn snake_case(wire: &str) -> String {
    let mut out = String::with_capacity(wire.len() + 4);
    for c in wire.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The names of `parts` joined into one list of `N`, at compile time: a route's accepted
/// fields from its writable fields and the extras it takes. `N` must be the total length.
pub const fn names<const N: usize>(parts: [&[&'static str]; 3]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut at = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            out[at] = parts[part][i];
            at += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(at == N, "N must be the total length of the parts");
    out
}

/// Serialises a stored value as reads show it (through its [`FieldValue::show`]).
pub struct Shown<'a, T: FieldValue>(pub &'a T::Stored);

impl<T: FieldValue> serde::Serialize for Shown<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        T::show(self.0, s)
    }
}

/// Declares a kind's writable fields and derives their struct, parsing, guards, writes,
/// retry check, accepted names, document specs, read shape and export columns from the one
/// list.
///
/// Each field is `[plain]` (the command writes the checked value straight into the record's
/// field of the same name) or `[moved]` (the command itself decides how it lands: a card
/// moving column, a parent, tags with ids, a deletion), optionally with `read` (the value as
/// the record holds it, for guards and exports) and `show` (the value as reads show it) given
/// apart from the record's field of the same name, and a `note` (a [`Note`]: what the
/// discovery document says of the field).
#[macro_export]
macro_rules! writable_fields {
    (
        $(#[$meta:meta])*
        $vis:vis struct $Fields:ident for $Record:ty;
        specs $SPECS:ident, names $NAMES:ident;
        $( [$mode:ident] $field:ident : $ty:ty = $wire:literal
            $(, read $read:expr, show $show:expr)? $(, note $note:expr)? ; )*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        $vis struct $Fields {
            $(pub $field: Option<$crate::input::Input<$ty>>,)*
        }

        /// The writable fields as the documents describe them, in the documented order.
        pub const $SPECS: &[$crate::field::FieldSpec] = &[$(
            $crate::field::FieldSpec {
                name: $wire,
                shape: <$ty as $crate::field::FieldValue>::SHAPE,
                read_null: <<$ty as $crate::field::FieldValue>::Stored
                    as $crate::field::Kept>::NULLABLE,
                note: $crate::writable_fields!(@note $($note)?),
            },
        )*];

        /// The writable fields' wire names, in the documented order that names the first
        /// failing guard.
        pub const $NAMES: &[&str] = &[$($wire),*];

        impl $Fields {
            /// The fields as the analytic exports write them, in the table's order.
            pub const EXPORTED: &'static [$crate::field::Exported<$Record>] = &[$(
                $crate::field::Exported {
                    name: $wire,
                    cell: |r| <$ty as $crate::field::FieldValue>::cell(
                        $crate::writable_fields!(@ref r, $field $(, $read)?),
                    ),
                    line: |r, out| $crate::field::write_line::<$ty>(
                        $crate::writable_fields!(@ref r, $field $(, $read)?),
                        out,
                    ),
                },
            )*];

            /// Reads and checks every field the body sends, bare or guarded.
            pub fn parse(
                body: &$crate::input::Body<'_>,
                limits: &$crate::limits::Limits,
            ) -> Result<Self, $crate::error::WriteError> {
                use $crate::field::FieldValue;
                Ok($Fields {$(
                    $field: body
                        .input::<<$ty as FieldValue>::Raw>($wire)?
                        .map(|i| i.try_map(|raw| <$ty as FieldValue>::parse($wire, raw, limits)))
                        .transpose()?,
                )*})
            }

            /// The first field whose guard (`before`) differs from what `current` holds:
            /// 409 with its value now.
            pub fn conflict(&self, current: &$Record) -> Option<$crate::error::WriteError> {
                use $crate::field::FieldValue;
                $(
                    if let Some($crate::input::Input { before: Some(before), .. }) = &self.$field {
                        let now = $crate::writable_fields!(@read current, $field $(, $read)?);
                        if before.to_stored() != now {
                            return Some($crate::error::WriteError::conflict(
                                $wire,
                                serde_json::to_value(&now).unwrap_or(serde_json::Value::Null),
                            ));
                        }
                    }
                )*
                None
            }

            /// Whether every field sent equals what `current` holds (a safe retry).
            pub fn matches(&self, current: &$Record) -> bool {
                use $crate::field::FieldValue;
                $(
                    self.$field.as_ref().is_none_or(|i| {
                        i.after.to_stored()
                            == $crate::writable_fields!(@read current, $field $(, $read)?)
                    }) &&
                )* true
            }

            /// Writes every `[plain]` field sent into `next`.
            pub fn apply(&self, next: &mut $Record) {
                $( $crate::writable_fields!(@write $mode, self, next, $field); )*
            }

            /// Writes the fields as reads show them into a record's read shape.
            pub fn serialize_fields<S: serde::ser::SerializeStruct>(
                record: &$Record,
                st: &mut S,
            ) -> Result<(), S::Error> {
                $(
                    st.serialize_field(
                        $wire,
                        &$crate::writable_fields!(@show record, $field, $ty $(, $show)?),
                    )?;
                )*
                Ok(())
            }
        }
    };
    (@read $r:ident, $field:ident) => { $r.$field.clone() };
    (@ref $r:ident, $field:ident) => { &$r.$field };
    (@ref $r:ident, $field:ident, $read:expr) => { &($read)($r) };
    (@note) => { None };
    (@note $note:expr) => {{
        const NOTE: $crate::field::Note = $note;
        Some(NOTE)
    }};
    (@read $r:ident, $field:ident, $read:expr) => { ($read)($r) };
    (@show $r:ident, $field:ident, $ty:ty) => { $crate::field::Shown::<$ty>(&$r.$field) };
    (@show $r:ident, $field:ident, $ty:ty, $show:expr) => { ($show)($r) };
    (@write plain, $this:ident, $next:ident, $field:ident) => {
        if let Some(i) = &$this.$field {
            $next.$field = $crate::field::FieldValue::to_stored(&i.after);
        }
    };
    (@write moved, $this:ident, $next:ident, $field:ident) => {};
}
