//! The read schemas of the records, built from the field tables of `write_model::field`: each
//! writable field as reads show it (its [`Shape`], `null` where the record may keep none),
//! and around the fields what `read_model::shape` writes besides (ids, stamps, the computed
//! `order`, nested records). The change forms (`ProjectChange`, `ListChange`) are the same
//! fields, each optional. Adding a field to a table adds it here.

use salvo::oapi::schema::{Array, BasicType, KnownFormat, Object, OneOf, Schema, SchemaFormat};
use salvo::oapi::{Components, RefOr, ToSchema};
use write_model::field::{
    COLUMN_FIELDS, FieldSpec, ITEM_FIELDS, PROJECT_FIELDS, Shape, TASK_FIELDS,
};

use super::fields::{component, schema};
use super::{CommentRead, Effort};

/// A value of type `t` (or `null`), with `format`.
fn typed(t: BasicType, format: Option<KnownFormat>, null: bool) -> Object {
    let o = if null {
        Object::new().schema_type(
            [t, BasicType::Null]
                .into_iter()
                .collect::<salvo::oapi::schema::SchemaType>(),
        )
    } else {
        Object::with_type(t)
    };
    match format {
        Some(f) => o.format(SchemaFormat::KnownFormat(f)),
        None => o,
    }
}

/// A value of `shape` as reads show it; `null` too when `null`.
fn read_value(shape: Shape, null: bool, c: &mut Components) -> RefOr<Schema> {
    match shape {
        Shape::Nullable(inner) => read_value(*inner, null, c),
        Shape::Text { .. }
        | Shape::Prose { .. }
        | Shape::Id
        | Shape::Date
        | Shape::Time
        | Shape::Photo => schema(typed(BasicType::String, None, null)),
        Shape::Priority | Shape::Stamp => {
            schema(typed(BasicType::Integer, Some(KnownFormat::Int64), null))
        }
        Shape::Integer { min, max } => schema(
            typed(BasicType::Integer, Some(KnownFormat::Int64), null)
                .minimum(min)
                .maximum(max),
        ),
        Shape::Number => schema(typed(BasicType::Number, Some(KnownFormat::Double), null)),
        Shape::Boolean => schema(typed(BasicType::Boolean, None, null)),
        Shape::Effort => {
            let named = Effort::to_schema(c);
            if null {
                OneOf::new()
                    .item(Object::with_type(BasicType::Null))
                    .item(named)
                    .into()
            } else {
                named
            }
        }
        Shape::TagList => {
            let texts = Array::new().items(schema(typed(BasicType::String, None, false)));
            if null {
                OneOf::new()
                    .item(Object::with_type(BasicType::Null))
                    .item(texts)
                    .into()
            } else {
                Schema::Array(texts).into()
            }
        }
        Shape::Choice(values) => {
            schema(typed(BasicType::String, None, null).enum_values(values.iter().copied()))
        }
        Shape::Object(members) => {
            let mut o = typed(BasicType::Object, None, null);
            for m in members {
                o = o
                    .property(m.name, read_value(m.shape, false, c))
                    .required(m.name);
            }
            schema(o)
        }
    }
}

/// A part of a read that is not a table's field: its name, schema and whether it is always
/// there.
type Part = (&'static str, RefOr<Schema>, bool);

fn text() -> RefOr<Schema> {
    schema(typed(BasicType::String, None, false))
}

fn int64() -> RefOr<Schema> {
    schema(typed(BasicType::Integer, Some(KnownFormat::Int64), false))
}

fn list_of(items: RefOr<Schema>) -> RefOr<Schema> {
    Schema::Array(Array::new().items(items)).into()
}

/// A record's read: `before`, the table's fields, `after`, in the order reads write them; a
/// field is required unless reads may show it as `null`.
fn read(fields: &[FieldSpec], before: Vec<Part>, after: Vec<Part>, c: &mut Components) -> Object {
    let mut o = Object::with_type(BasicType::Object);
    let table: Vec<Part> = (fields.iter())
        .map(|f| (f.name, read_value(f.shape, f.read_null, c), !f.read_null))
        .collect();
    for (name, s, required) in before.into_iter().chain(table).chain(after) {
        o = o.property(name, s);
        if required {
            o = o.required(name);
        }
    }
    o
}

/// A changed record without nested ones: `id`, and every other part optional or `null`
/// (`before` the table's fields, the stamps after).
fn change(fields: &[FieldSpec], before: &[&'static str], c: &mut Components) -> Object {
    let mut o = Object::with_type(BasicType::Object)
        .property("id", text())
        .required("id");
    for name in before {
        o = o.property(*name, schema(typed(BasicType::String, None, true)));
    }
    for f in fields {
        o = o.property(f.name, read_value(f.shape, true, c));
    }
    for name in ["updatedAt", "deletedAt"] {
        let stamp = typed(BasicType::Integer, Some(KnownFormat::Int64), true);
        o = o.property(name, schema(stamp));
    }
    o
}

/// Declares a read schema type, registered as the component `name` from a build function.
macro_rules! read_schema {
    ($($(#[$doc:meta])* $ty:ident as $name:literal => |$c:ident| $build:expr;)*) => {$(
        $(#[$doc])*
        pub struct $ty;

        impl ToSchema for $ty {
            fn to_schema($c: &mut Components) -> RefOr<Schema> {
                let built = $build;
                component($c, $name, built)
            }
        }

        /// Document-only: the shapes that nest it derive `Deserialize`.
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                serde::de::IgnoredAny::deserialize(d)?;
                Ok($ty)
            }
        }
    )*};
}

read_schema! {
    /// A project as read, with its columns.
    ProjectRead as "Project" => |c| {
        let columns = ColumnRead::to_schema(c);
        read(
            PROJECT_FIELDS,
            vec![("id", text(), true)],
            vec![("updatedAt", int64(), true), ("columns", list_of(columns), true)],
            c,
        )
    };
    /// A column as read, with its cards.
    ColumnRead as "Column" => |c| {
        let tasks = TaskRead::to_schema(c);
        read(
            COLUMN_FIELDS,
            vec![("id", text(), true), ("projectId", text(), true)],
            vec![("updatedAt", int64(), true), ("tasks", list_of(tasks), true)],
            c,
        )
    };
    /// A card as read.
    TaskRead as "Task" => |c| {
        let items = ChecklistItemRead::to_schema(c);
        let comments = CommentRead::to_schema(c);
        read(
            TASK_FIELDS,
            vec![("id", text(), true), ("projectId", text(), true)],
            vec![
                ("rev", int64(), true),
                ("order", int64(), true),
                ("updatedAt", int64(), true),
                ("tagIds", list_of(text()), true),
                ("checklist", list_of(items), true),
                ("comments", list_of(comments), true),
            ],
            c,
        )
    };
    /// A checklist item as read: its `position` is its index.
    ChecklistItemRead as "ChecklistItem" => |c| read(
        ITEM_FIELDS,
        vec![("id", text(), true)],
        vec![("position", int64(), true)],
        c,
    );
    /// A changed project in `/changes`.
    ProjectChange as "ProjectChange" => |c| change(PROJECT_FIELDS, &[], c).description(
        "A changed project or list in its read shape without nested records; a deleted one\n\
         carries `deletedAt` (a destroyed one only `id`, `deletedAt` and, for lists, `projectId`).",
    );
    /// A changed list in `/changes`.
    ListChange as "ListChange" => |c| change(COLUMN_FIELDS, &["projectId"], c)
        .description("A changed list: as [`ProjectChange`], for columns.");
}
