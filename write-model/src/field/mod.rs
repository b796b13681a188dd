//! Each record kind's writable fields, declared once. A kind's table (an invocation of
//! [`writable_fields!`] in [`tables`]) names each field with its wire name and its checked
//! value type ([`FieldValue`]); from that one list come:
//! - the typed struct a create or update body parses into, and its parsing;
//! - the guards, checked in the table's order (the documented order that names the first
//!   failing field), and the plain writes;
//! - whether a create retried with the same id sends the same fields;
//! - the field names the route accepts (the 422's `accepted` list);
//! - the [`FieldSpec`] list the OpenAPI request schemas are built from;
//! - the fields' part of the record's read shape.
//!
//! snake_case wire names are derived (`deadline_time` for `deadlineTime`) when a body is read.

mod tables;
mod values;

pub use tables::*;
pub use values::*;

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
    /// Any of the above, or `null`.
    Nullable(&'static Shape),
}

impl Shape {
    /// This shape, or `null`.
    pub const fn nullable(self) -> Shape {
        match self {
            Shape::Text { required, .. } => Shape::Text {
                required,
                nullable: true,
            },
            Shape::Prose { .. } => Shape::Prose { nullable: true },
            Shape::Id => Shape::Nullable(&Shape::Id),
            Shape::Number => Shape::Nullable(&Shape::Number),
            Shape::Stamp => Shape::Nullable(&Shape::Stamp),
            Shape::Date => Shape::Nullable(&Shape::Date),
            Shape::Time => Shape::Nullable(&Shape::Time),
            Shape::Effort => Shape::Nullable(&Shape::Effort),
            Shape::Photo => Shape::Nullable(&Shape::Photo),
            other => other,
        }
    }
}

/// One writable field, as the documents describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Its wire name in camelCase (the snake_case spelling is accepted too).
    pub name: &'static str,
    pub shape: Shape,
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
/// retry check, accepted names, document specs and read shape from the one list.
///
/// Each field is `[plain]` (the command writes the checked value straight into the record's
/// field of the same name) or `[moved]` (the command itself decides how it lands: a card
/// moving column, a parent, tags with ids, a deletion), optionally with `read` (the value as
/// the record holds it, for guards) and `show` (the value as reads show it) given apart from
/// the record's field of the same name.
#[macro_export]
macro_rules! writable_fields {
    (
        $(#[$meta:meta])*
        $vis:vis struct $Fields:ident for $Record:ty;
        specs $SPECS:ident, names $NAMES:ident;
        $( [$mode:ident] $field:ident : $ty:ty = $wire:literal
            $(, read $read:expr, show $show:expr)? ; )*
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
            },
        )*];

        /// The writable fields' wire names, in the documented order that names the first
        /// failing guard.
        pub const $NAMES: &[&str] = &[$($wire),*];

        impl $Fields {
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
