//! The shapes of the OpenAPI document: request bodies (closed to unknown fields, every
//! writable field bare or guarded) and replies, as the specification and contract set them.
//! These types exist for the document only; handlers decode bodies with the write model and
//! serialise replies from the read model. This module holds the building blocks (guarded
//! values, constrained strings); [`requests`] and [`replies`] the shapes.

#![allow(dead_code)]

use std::marker::PhantomData;

use salvo::oapi::schema::{
    AdditionalProperties, BasicType, KnownFormat, Object, OneOf, Schema, SchemaFormat,
};
use salvo::oapi::{Components, RefOr, ToSchema};
use serde::Deserialize;

/// A writable field: the bare value, or `{before, after}`, which lands only while the field
/// holds `before` (409 otherwise).
pub struct Guarded<T>(PhantomData<T>);

impl<T> Default for Guarded<T> {
    fn default() -> Self {
        Guarded(PhantomData)
    }
}

/// Document-only types derive `Deserialize` so serde's container attributes reach the schema
/// derive (`deny_unknown_fields` becomes `additionalProperties: false`, `default` optional).
impl<'de, T> Deserialize<'de> for Guarded<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Guarded(PhantomData))
    }
}

impl<T: ToSchema> ToSchema for Guarded<T> {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        let guard = Object::new()
            .property("before", T::to_schema(components))
            .property("after", T::to_schema(components))
            .required("after")
            .additional_properties(AdditionalProperties::FreeForm(false));
        OneOf::new()
            .item(T::to_schema(components))
            .item(guard)
            .into()
    }
}

/// A string schema with constraints, for the document only.
macro_rules! string_schema {
    ($(#[$doc:meta])* $name:ident => |$o:ident| $build:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl ToSchema for $name {
            fn to_schema(_: &mut Components) -> RefOr<Schema> {
                let $o = Object::with_type(BasicType::String);
                Schema::Object(Box::new($build)).into()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                serde::de::IgnoredAny::deserialize(d)?;
                Ok($name)
            }
        }
    };
}

string_schema!(
    /// A required name or title: not empty; trimmed to fit.
    NonEmpty => |o| o.min_length(1)
);
string_schema!(
    /// `YYYY-MM-DD`, a date that exists.
    Date => |o| o.format(SchemaFormat::KnownFormat(KnownFormat::Date)).pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
);
string_schema!(
    /// `HH:MM`, 24-hour.
    Time => |o| o.pattern("^([01][0-9]|2[0-3]):[0-5][0-9]$")
);
string_schema!(
    /// Which finished cards a read includes.
    CompletedView => |o| o.enum_values(["none", "recent", "all"])
);
string_schema!(
    /// `changed`: `taskIds` covers only the projects in the reply.
    Manifest => |o| o.enum_values(["changed"])
);
string_schema!(
    /// A base64 data URL of a WebP, JPEG or PNG image (checked by its bytes), at most 24,576
    /// characters.
    Photo => |o| o.pattern("^data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/]*={0,2}$").max_length(24_576)
);
string_schema!(
    /// Whole digits only.
    Digits => |o| o.pattern("^[0-9]{1,15}$")
);
string_schema!(
    /// A search query: 1 to 500 characters after trimming.
    SearchText => |o| o.min_length(1).max_length(500)
);
string_schema!(
    /// An export's format.
    ExportFormatName => |o| o.enum_values(["json", "csv", "ndjson"])
);
string_schema!(
    /// What an import file is.
    ImportSource => |o| o.enum_values(["workboard", "trello"])
);

/// Hits per page of a search: 1 to 100.
pub struct SearchLimit;

impl ToSchema for SearchLimit {
    fn to_schema(_: &mut Components) -> RefOr<Schema> {
        Schema::Object(Box::new(
            Object::with_type(BasicType::Integer)
                .minimum(1)
                .maximum(100),
        ))
        .into()
    }
}

impl<'de> Deserialize<'de> for SearchLimit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(SearchLimit)
    }
}

/// An import file: Workboard's export (`{version, now, projects}`) or one board of Trello's
/// JSON export; either is a JSON object.
pub struct ImportFile;

impl ToSchema for ImportFile {
    fn to_schema(_: &mut Components) -> RefOr<Schema> {
        Schema::Object(Box::new(Object::with_type(BasicType::Object))).into()
    }
}

impl<'de> Deserialize<'de> for ImportFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(ImportFile)
    }
}

/// A card's tags: at most 5 non-empty texts.
pub struct TagList;

impl ToSchema for TagList {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        Schema::Array(
            salvo::oapi::schema::Array::new()
                .items(NonEmpty::to_schema(components))
                .max_items(5),
        )
        .into()
    }
}

impl<'de> Deserialize<'de> for TagList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(TagList)
    }
}

type Text = Guarded<String>;
type NullableText = Guarded<Option<String>>;
type Stamp = Guarded<Option<i64>>;
type Number = Guarded<f64>;

/// `effort`: one of these, or null.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Effort"))]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Easy,
    Medium,
    Hard,
}

/// `code` of an error body: one of the stable codes of `http::error::ErrorCode`.
pub struct ErrorCodeName;

impl ToSchema for ErrorCodeName {
    fn to_schema(_: &mut Components) -> RefOr<Schema> {
        let codes: Vec<&str> = crate::http::error::ErrorCode::all().collect();
        Schema::Object(Box::new(
            Object::with_type(BasicType::String).enum_values(codes),
        ))
        .into()
    }
}

impl<'de> Deserialize<'de> for ErrorCodeName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(ErrorCodeName)
    }
}

mod fields;
mod reads;
mod replies;
mod requests;
mod responses;

pub use fields::*;
pub use reads::*;
pub use replies::*;
pub use requests::*;
pub use responses::*;
