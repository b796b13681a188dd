//! The request schemas of writes, built from the field tables of `write_model::field`: each
//! writable field bare or guarded, as its [`Shape`] says, beside what a create takes besides
//! (its id, nested records and read-only fields). Adding a field to a table adds it here.

use salvo::oapi::schema::{
    AdditionalProperties, Array, BasicType, KnownFormat, Object, OneOf, Schema, SchemaFormat,
    SchemaType,
};
use salvo::oapi::{Components, Ref, RefOr, ToSchema};
use write_model::field::{
    COLUMN_FIELDS, FieldSpec, ITEM_FIELDS, PROJECT_FIELDS, Shape, TASK_FIELDS,
};

use super::{ChecklistSeed, ColumnSeed, CommentSeed};

pub(super) fn string() -> Object {
    Object::with_type(BasicType::String)
}

pub(super) fn schema(o: Object) -> RefOr<Schema> {
    Schema::Object(Box::new(o)).into()
}

/// `T` or `null`.
fn or_null(inner: RefOr<Schema>) -> RefOr<Schema> {
    OneOf::new()
        .item(inner)
        .item(Object::with_type(BasicType::Null))
        .into()
}

/// A value of `shape`, bare.
fn value(shape: Shape) -> RefOr<Schema> {
    match shape {
        Shape::Text { required, nullable } => {
            let text = if required {
                string().min_length(1)
            } else {
                string()
            };
            if nullable {
                or_null(schema(text))
            } else {
                schema(text)
            }
        }
        Shape::Prose { nullable: true } => or_null(schema(string())),
        Shape::Prose { nullable: false } | Shape::Id => schema(string()),
        Shape::Priority => schema(
            Object::with_type(BasicType::Number)
                .description("1 (highest) to 4; any whole number, out-of-range ones clamped"),
        ),
        Shape::Number => schema(Object::with_type(BasicType::Number)),
        Shape::Stamp => schema(
            Object::with_type(BasicType::Integer)
                .format(SchemaFormat::KnownFormat(KnownFormat::Int64)),
        ),
        Shape::Date => schema(
            string()
                .format(SchemaFormat::KnownFormat(KnownFormat::Date))
                .pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
        ),
        Shape::Time => schema(string().pattern("^([01][0-9]|2[0-3]):[0-5][0-9]$")),
        Shape::Effort => schema(string().enum_values(["easy", "medium", "hard"])),
        Shape::Boolean => schema(Object::with_type(BasicType::Boolean)),
        Shape::TagList => Schema::Array(
            Array::new()
                .items(schema(string().min_length(1)))
                .max_items(5),
        )
        .into(),
        Shape::Photo => schema(
            string()
                .pattern("^data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/]*={0,2}$")
                .max_length(24_576),
        ),
        Shape::Integer { min, max } => schema(
            Object::with_type(BasicType::Integer)
                .format(SchemaFormat::KnownFormat(KnownFormat::Int64))
                .minimum(min)
                .maximum(max),
        ),
        Shape::Choice(values) => schema(string().enum_values(values.iter().copied())),
        Shape::Object(members) => {
            let mut o = Object::with_type(BasicType::Object)
                .additional_properties(AdditionalProperties::FreeForm(false));
            for m in members {
                o = o.property(m.name, value(m.shape)).required(m.name);
            }
            schema(o)
        }
        Shape::Nullable(inner) => or_null(value(*inner)),
    }
}

/// A writable field: the bare value, or `{before, after}`, which lands only while the field
/// holds `before` (409 otherwise).
fn guarded(shape: Shape) -> RefOr<Schema> {
    let guard = Object::new()
        .property("before", value(shape))
        .property("after", value(shape))
        .required("after")
        .additional_properties(AdditionalProperties::FreeForm(false));
    OneOf::new().item(value(shape)).item(guard).into()
}

/// A closed object of a table's fields, each bare or guarded, with `extra` properties and
/// the `required` ones.
fn writable(fields: &[FieldSpec], extra: Vec<(&str, RefOr<Schema>)>, required: &[&str]) -> Object {
    let mut o = Object::with_type(SchemaType::basic(BasicType::Object))
        .additional_properties(AdditionalProperties::FreeForm(false));
    for (name, s) in extra {
        o = o.property(name, s);
    }
    for f in fields {
        o = o.property(f.name, guarded(f.shape));
    }
    for r in required {
        o = o.required(*r);
    }
    o
}

/// Registers `o` as the component `name` and answers a reference to it.
pub(super) fn component(components: &mut Components, name: &str, o: Object) -> RefOr<Schema> {
    components
        .schemas
        .insert(name.to_owned(), Schema::Object(Box::new(o)));
    RefOr::Ref(Ref::new(format!("#/components/schemas/{name}")))
}

/// Read-only fields of a read, accepted on create and ignored.
fn read_only(names: &[&'static str]) -> Vec<(&'static str, RefOr<Schema>)> {
    names
        .iter()
        .map(|n| {
            let ignored = Object::new().description("read-only: accepted and ignored");
            (*n, schema(ignored))
        })
        .collect()
}

fn optional_id() -> (&'static str, RefOr<Schema>) {
    ("id", or_null(schema(string())))
}

/// Declares the request schema types, each built by a function of the components.
macro_rules! request_schema {
    ($($(#[$doc:meta])* $name:ident => |$c:ident| $build:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl ToSchema for $name {
            fn to_schema($c: &mut Components) -> RefOr<Schema> {
                let built = $build;
                component($c, stringify!($name), built)
            }
        }

        /// Document-only: the shapes that nest it derive `Deserialize`.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                serde::de::IgnoredAny::deserialize(d)?;
                Ok($name)
            }
        }
    )*};
}

request_schema! {
    /// `PATCH /tasks/:id`: any writable field, bare or guarded.
    TaskUpdate => |c| writable(TASK_FIELDS, Vec::new(), &[]);
    /// One card's create: its fields, its nested items, and the read-only fields of a read.
    TaskCreate => |c| {
        let mut extra = vec![
            optional_id(),
            ("tagIds", schema(Object::new().description("the tags' ids, paired with `tags`"))),
            ("checklist", Schema::Array(Array::new().items(ChecklistSeed::to_schema(c))).into()),
            ("comments", Schema::Array(Array::new().items(CommentSeed::to_schema(c))).into()),
        ];
        extra.extend(read_only(&["rev", "order", "updatedAt", "projectId"]));
        writable(TASK_FIELDS, extra, &["columnId", "title"])
    };
    /// `PATCH /projects/:id`.
    ProjectUpdate => |c| writable(PROJECT_FIELDS, Vec::new(), &[]);
    /// `POST /projects`: its fields and its first columns.
    ProjectCreate => |c| {
        let mut extra = vec![
            optional_id(),
            ("columns", Schema::Array(Array::new().items(ColumnSeed::to_schema(c))).into()),
        ];
        extra.extend(read_only(&["updatedAt"]));
        writable(PROJECT_FIELDS, extra, &["name"])
    };
    /// `PATCH /columns/:id`.
    ColumnUpdate => |c| writable(COLUMN_FIELDS, Vec::new(), &[]);
    /// `POST /columns`.
    ColumnCreate => |c| {
        let mut extra = vec![optional_id(), ("projectId", schema(string()))];
        extra.extend(read_only(&["updatedAt"]));
        writable(COLUMN_FIELDS, extra, &["projectId", "name"])
    };
    /// A column given as fields inside a project's create (`projectId` is the new project's).
    ColumnNested => |c| {
        let mut extra = vec![optional_id()];
        extra.extend(read_only(&["projectId", "updatedAt"]));
        writable(COLUMN_FIELDS, extra, &["name"])
    };
    /// `PATCH /checklist/:id`.
    ChecklistItemUpdate => |c| writable(ITEM_FIELDS, Vec::new(), &[]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The property names of the component a schema type registers.
    fn properties<T: ToSchema>(name: &str) -> Vec<String> {
        let mut components = Components::new();
        T::to_schema(&mut components);
        let json = serde_json::to_value(&components.schemas[name]).expect("a schema");
        let mut names: Vec<String> = json["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn every_request_schema_has_exactly_its_tables_fields() {
        use write_model::command::{column, items, project, task};
        assert_eq!(
            properties::<TaskUpdate>("TaskUpdate"),
            sorted(task::UPDATE_FIELDS)
        );
        assert_eq!(
            properties::<TaskCreate>("TaskCreate"),
            sorted(task::CREATE_FIELDS)
        );
        assert_eq!(
            properties::<ProjectUpdate>("ProjectUpdate"),
            sorted(project::UPDATE_FIELDS)
        );
        assert_eq!(
            properties::<ProjectCreate>("ProjectCreate"),
            sorted(project::CREATE_FIELDS)
        );
        assert_eq!(
            properties::<ColumnUpdate>("ColumnUpdate"),
            sorted(column::UPDATE_FIELDS)
        );
        assert_eq!(
            properties::<ColumnCreate>("ColumnCreate"),
            sorted(column::CREATE_FIELDS)
        );
        assert_eq!(
            properties::<ColumnNested>("ColumnNested"),
            sorted(column::NESTED_FIELDS)
        );
        assert_eq!(
            properties::<ChecklistItemUpdate>("ChecklistItemUpdate"),
            sorted(items::ITEM_UPDATE_FIELDS)
        );
    }
}
