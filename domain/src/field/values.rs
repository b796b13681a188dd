//! The checked values of writable fields, as newtypes: each is parsed once at the edge from
//! what the request sent (its `Raw`), with the limits in force, and after that its type
//! carries the proof. `Stored` is what the record keeps.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Kept, Shape, iso};
use crate::checks::{self, Effort};
use crate::error::WriteError;
use crate::limits::Limits;

/// A writable field's value, checked.
pub trait FieldValue: Sized + Clone + PartialEq + std::fmt::Debug {
    /// What a request sends for it (before any check).
    type Raw: DeserializeOwned;
    /// What the record keeps.
    type Stored: Kept;
    /// How the interface documents it.
    const SHAPE: Shape;
    /// Checks and normalises what a request sent for the field named `field`.
    fn parse(field: &'static str, raw: Self::Raw, limits: &Limits) -> Result<Self, WriteError>;
    fn to_stored(&self) -> Self::Stored;
    /// Writes a stored value as reads show it.
    fn show<S: serde::Serializer>(stored: &Self::Stored, s: S) -> Result<S::Ok, S::Error> {
        stored.serialize(s)
    }
    /// Writes a stored value as the NDJSON export shows it: as reads do, unless the type
    /// says otherwise (stamps as ISO text).
    fn line<S: serde::Serializer>(stored: &Self::Stored, s: S) -> Result<S::Ok, S::Error> {
        Self::show(stored, s)
    }
    /// A stored value as one cell of the CSV export.
    fn cell(stored: &Self::Stored) -> String {
        stored.cell()
    }
}

/// A field that may be null: `null` clears it, anything else is checked as `T`.
impl<T: FieldValue> FieldValue for Option<T> {
    type Raw = Option<T::Raw>;
    type Stored = Option<T::Stored>;
    const SHAPE: Shape = Shape::Nullable(&T::SHAPE);

    fn parse(field: &'static str, raw: Self::Raw, limits: &Limits) -> Result<Self, WriteError> {
        raw.map(|r| T::parse(field, r, limits)).transpose()
    }

    fn to_stored(&self) -> Self::Stored {
        self.as_ref().map(T::to_stored)
    }

    fn show<S: serde::Serializer>(stored: &Self::Stored, s: S) -> Result<S::Ok, S::Error> {
        match stored {
            Some(v) => T::show(v, s),
            None => s.serialize_none(),
        }
    }

    fn line<S: serde::Serializer>(stored: &Self::Stored, s: S) -> Result<S::Ok, S::Error> {
        match stored {
            Some(v) => T::line(v, s),
            None => s.serialize_none(),
        }
    }

    fn cell(stored: &Self::Stored) -> String {
        stored.as_ref().map(T::cell).unwrap_or_default()
    }
}

/// Declares a newtype over a string that a check makes.
macro_rules! text_value {
    ($(#[$doc:meta])* $name:ident, raw $raw:ty, shape $shape:expr, |$field:ident, $value:ident, $limits:ident| $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl FieldValue for $name {
            type Raw = $raw;
            type Stored = String;
            const SHAPE: Shape = $shape;

            fn parse(
                $field: &'static str,
                $value: $raw,
                $limits: &Limits,
            ) -> Result<Self, WriteError> {
                Ok($name($check))
            }

            fn to_stored(&self) -> String {
                self.0.clone()
            }
        }
    };
}

text_value!(
    /// A card's title: required, trimmed to the title limit.
    Title, raw String, shape Shape::Text { required: true, nullable: false },
    |field, v, l| checks::required_text(field, &v, l.title_chars)?
);
text_value!(
    /// A project's or column's name: required, trimmed to the name limit.
    Name, raw String, shape Shape::Text { required: true, nullable: false },
    |field, v, l| checks::required_text(field, &v, l.name_chars)?
);
text_value!(
    /// A card's Markdown description: refused when over its limit; `null` is empty.
    Description, raw Option<String>, shape Shape::Prose { nullable: true },
    |field, v, l| checks::prose(field, v.unwrap_or_default(), l.description_chars)?
);
text_value!(
    /// A column's description: refused when over its limit.
    ColumnDescription, raw String, shape Shape::Prose { nullable: false },
    |field, v, l| checks::prose(field, v, l.column_description_chars)?
);
text_value!(
    /// A card's location: trimmed to its limit; `null` is empty.
    Location, raw Option<String>, shape Shape::Text { required: false, nullable: true },
    |_field, v, l| checks::trim_to(&v.unwrap_or_default(), l.location_chars)
);
text_value!(
    /// A checklist item's text: required, trimmed to its limit.
    ItemText, raw String, shape Shape::Text { required: true, nullable: false },
    |field, v, l| {
        if v.is_empty() {
            return Err(WriteError::invalid(
                field,
                format!("`{field}` is required and must not be empty"),
            ));
        }
        checks::trim_to(&v, l.checklist_item_chars)
    }
);
text_value!(
    /// A `YYYY-MM-DD` date that exists.
    Deadline, raw String, shape Shape::Date,
    |field, v, _l| checks::deadline(field, &v)?
);
text_value!(
    /// A 24-hour `HH:MM` time of day.
    DeadlineTime, raw String, shape Shape::Time,
    |field, v, _l| checks::deadline_time(field, &v)?
);
text_value!(
    /// A base64 data URL of a WebP, JPEG or PNG image (checked by its bytes).
    Photo, raw String, shape Shape::Photo,
    |field, v, l| checks::photo(field, &v, l.photo_chars)?
);
/// The column a card is in (`columnId`) and a card named by id (`parentId`): the commands'
/// typed ids, taken as sent (that the record exists is checked when the command runs).
pub use crate::ids::{ColumnId, TaskId};

/// A field naming an existing record by its typed id.
macro_rules! named_id_value {
    ($($name:ident),*) => {$(
        impl FieldValue for $name {
            type Raw = String;
            type Stored = String;
            const SHAPE: Shape = Shape::Id;

            fn parse(_field: &'static str, raw: String, _: &Limits) -> Result<Self, WriteError> {
                Ok($name::named(raw))
            }

            fn to_stored(&self) -> String {
                self.as_str().to_owned()
            }
        }
    )*};
}

named_id_value!(ColumnId, TaskId);

/// A project's folder: trimmed to its limit; `""` and `null` both mean none.
#[derive(Debug, Clone, PartialEq)]
pub struct Folder(Option<String>);

impl FieldValue for Folder {
    type Raw = Option<String>;
    type Stored = Option<String>;
    const SHAPE: Shape = Shape::Text {
        required: false,
        nullable: true,
    };

    fn parse(_field: &'static str, raw: Option<String>, l: &Limits) -> Result<Self, WriteError> {
        Ok(Folder(checks::folder(raw, l.folder_chars)))
    }

    fn to_stored(&self) -> Option<String> {
        self.0.clone()
    }
}

/// A card's priority: 1 (highest) to 4. Any JSON number that is a whole number counts
/// (`2.0`, `1e0`, `-0`), however large; out of range, it is clamped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Priority(i64);

impl FieldValue for Priority {
    type Raw = serde_json::Number;
    type Stored = i64;
    const SHAPE: Shape = Shape::Priority;

    fn parse(field: &'static str, n: serde_json::Number, _: &Limits) -> Result<Self, WriteError> {
        match whole(&n) {
            Some(p) => Ok(Priority(checks::priority(p))),
            None => Err(WriteError::invalid(
                field,
                format!("`{field}` must be a whole number (1 to 4; others are clamped)"),
            )),
        }
    }

    fn to_stored(&self) -> i64 {
        self.0
    }
}

/// A JSON number that is a whole number (`2.0`, `1e0`, `-0` count), clamped to `i64`.
fn whole(n: &serde_json::Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        Some(i)
    } else if n.as_u64().is_some() {
        Some(i64::MAX)
    } else {
        n.as_f64()
            .filter(|f| f.is_finite() && f.fract() == 0.0)
            .map(|f| f.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
    }
}

/// A whole number from `MIN` to `MAX`, for a field that counts something: any JSON number
/// that is whole counts (`2.0`); any other, or one out of range, answers 422.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounded<const MIN: i64, const MAX: i64>(i64);

impl<const MIN: i64, const MAX: i64> FieldValue for Bounded<MIN, MAX> {
    type Raw = serde_json::Number;
    type Stored = i64;
    const SHAPE: Shape = Shape::Integer { min: MIN, max: MAX };

    fn parse(field: &'static str, n: serde_json::Number, _: &Limits) -> Result<Self, WriteError> {
        match whole(&n) {
            Some(i) if (MIN..=MAX).contains(&i) => Ok(Bounded(i)),
            _ => Err(WriteError::invalid(
                field,
                format!("`{field}` must be a whole number from {MIN} to {MAX}"),
            )),
        }
    }

    fn to_stored(&self) -> i64 {
        self.0
    }
}

/// A sort key: a finite number, echoed as given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position(f64);

impl Position {
    pub fn get(self) -> f64 {
        self.0
    }

    /// A position the service computed from finite ones (a batch's cards above the top).
    pub fn from_finite(p: f64) -> Position {
        debug_assert!(p.is_finite());
        Position(p)
    }
}

impl FieldValue for Position {
    type Raw = f64;
    type Stored = f64;
    const SHAPE: Shape = Shape::Number;

    fn parse(field: &'static str, p: f64, _: &Limits) -> Result<Self, WriteError> {
        if p.is_finite() {
            Ok(Position(p))
        } else {
            Err(WriteError::invalid(
                field,
                format!("`{field}` must be a finite number"),
            ))
        }
    }

    fn to_stored(&self) -> f64 {
        self.0
    }

    /// A whole number reads back without a fraction.
    fn show<S: serde::Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
        if p.fract() == 0.0 && p.abs() < 9.0e15 {
            s.serialize_i64(*p as i64)
        } else {
            s.serialize_f64(*p)
        }
    }

    /// The NDJSON export writes the number as JSON numbers go (`1.0`), as it always has.
    fn line<S: serde::Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*p)
    }
}

/// A moment in ms since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp(i64);

impl FieldValue for Stamp {
    type Raw = i64;
    type Stored = i64;
    const SHAPE: Shape = Shape::Stamp;

    fn parse(_: &'static str, ms: i64, _: &Limits) -> Result<Self, WriteError> {
        Ok(Stamp(ms))
    }

    fn to_stored(&self) -> i64 {
        self.0
    }

    /// The exports write stamps as ISO 8601 UTC, so spreadsheets read them as dates.
    fn line<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&iso(*ms))
    }

    fn cell(ms: &i64) -> String {
        iso(*ms)
    }
}

impl FieldValue for Effort {
    type Raw = Effort;
    type Stored = Effort;
    const SHAPE: Shape = Shape::Effort;

    fn parse(_: &'static str, e: Effort, _: &Limits) -> Result<Self, WriteError> {
        Ok(e)
    }

    fn to_stored(&self) -> Effort {
        *self
    }
}

impl FieldValue for bool {
    type Raw = bool;
    type Stored = bool;
    const SHAPE: Shape = Shape::Boolean;

    fn parse(_: &'static str, b: bool, _: &Limits) -> Result<Self, WriteError> {
        Ok(b)
    }

    fn to_stored(&self) -> bool {
        *self
    }
}

/// A card's tag texts: each non-empty, trimmed to fit, at most the limit per card.
#[derive(Debug, Clone, PartialEq)]
pub struct TagTexts(Vec<String>);

impl TagTexts {
    pub fn texts(&self) -> &[String] {
        &self.0
    }
}

impl FieldValue for TagTexts {
    type Raw = Vec<String>;
    type Stored = Vec<String>;
    const SHAPE: Shape = Shape::TagList;

    fn parse(field: &'static str, tags: Vec<String>, l: &Limits) -> Result<Self, WriteError> {
        if tags.len() > l.tags_per_task {
            return Err(WriteError::limit(
                field,
                format!("a task holds at most {} tags", l.tags_per_task),
            ));
        }
        let texts = tags
            .into_iter()
            .map(|t| {
                if t.is_empty() {
                    Err(WriteError::invalid(field, "a tag must not be empty"))
                } else {
                    Ok(checks::trim_to(&t, l.tag_chars))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(TagTexts(texts))
    }

    fn to_stored(&self) -> Vec<String> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priority(json: &str) -> Result<i64, WriteError> {
        let n: serde_json::Number = serde_json::from_str(json).unwrap();
        Priority::parse("priority", n, &Limits::default()).map(|p| p.to_stored())
    }

    #[test]
    fn priority_reads_any_whole_json_number_and_clamps_it() {
        assert_eq!(priority("2").unwrap(), 2);
        assert_eq!(priority("2.0").unwrap(), 2);
        assert_eq!(priority("1e0").unwrap(), 1);
        assert_eq!(priority("-0").unwrap(), 1);
        assert_eq!(priority("-9223372036854775809").unwrap(), 1);
        assert_eq!(priority("18446744073709551615").unwrap(), 4);
        assert_eq!(priority("1e300").unwrap(), 4);
        assert!(priority("2.5").is_err());
    }

    #[test]
    fn a_bounded_number_takes_whole_numbers_in_its_range_only() {
        let bounded = |json: &str| {
            let n: serde_json::Number = serde_json::from_str(json).unwrap();
            Bounded::<0, 1000>::parse("estimate", n, &Limits::default()).map(|b| b.to_stored())
        };
        assert_eq!(bounded("0").unwrap(), 0);
        assert_eq!(bounded("1000").unwrap(), 1000);
        assert_eq!(bounded("5.0").unwrap(), 5);
        for bad in ["-1", "1001", "2.5", "1e300"] {
            assert!(bounded(bad).is_err(), "{bad}");
        }
        assert_eq!(
            <Option<Bounded<0, 1000>>>::SHAPE,
            Shape::Nullable(&Shape::Integer { min: 0, max: 1000 })
        );
    }
}
