//! What a step holds and how it is written: the record changes of one request as JSON,
//! cut from the records' stored JSON rather than serialised again.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::WriteError;

/// Fields that move with every write and are never undone or compared.
pub(super) const UNTRACKED: &[&str] = &["updatedAt", "rev"];

/// Externally tagged: the raw JSON inside a step cannot pass through serde's buffering of
/// internally tagged enums.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum Step {
    /// Creates and field writes.
    Wrote { head: Head, records: Vec<Wrote> },
    /// A deletion into the bin, undone by restoring the entry.
    Deleted { head: Head, entry: String },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Head {
    pub(super) kind: i64,
    pub(super) id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Wrote {
    pub(super) kind: i64,
    pub(super) id: String,
    /// The changed fields as JSON objects before and after (a create: `None`, and the whole
    /// record after), kept raw: cut from the records' stored JSON when the step is saved,
    /// parsed into values only when it is undone. Steps saved before this carry whole
    /// records on both sides, which undo the same way.
    pub(super) before: Option<Box<RawValue>>,
    pub(super) after: Box<RawValue>,
}

impl Wrote {
    pub(super) fn before_map(&self) -> Result<Option<Map<String, Value>>, WriteError> {
        self.before
            .as_ref()
            .map(|b| serde_json::from_str(b.get()))
            .transpose()
            .map_err(Into::into)
    }

    pub(super) fn after_map(&self) -> Result<Map<String, Value>, WriteError> {
        Ok(serde_json::from_str(self.after.get())?)
    }
}

/// One record of a `Step::Wrote`: its JSON before and after (for a record that existed,
/// only the fields the write changed).
pub(super) struct StoredWrite<'a> {
    pub(super) kind: i64,
    pub(super) id: &'a str,
    pub(super) before: Option<Cow<'a, str>>,
    pub(super) after: Cow<'a, str>,
}

/// The fields `after` changes from `before` (both a record's stored JSON, so equal values
/// are equal text), as two objects holding those fields only: what undoing needs to check
/// and put back, at a tenth of the size of two whole records.
pub(super) fn written_only(before: &str, after: &str) -> Result<(String, String), WriteError> {
    let Fields(before) = serde_json::from_str(before)?;
    let Fields(after) = serde_json::from_str(after)?;
    let (mut was, mut now) = (String::from("{"), String::from("{"));
    for (i, (field, value)) in after.iter().enumerate() {
        // One serialiser wrote both, so a field is nearly always at the same place in each.
        let held = match before.get(i) {
            Some((f, v)) if f == field => Some(v.get()),
            _ => before
                .iter()
                .find(|(f, _)| f == field)
                .map(|(_, v)| v.get()),
        };
        if UNTRACKED.contains(field) || held == Some(value.get()) {
            continue;
        }
        for (out, v) in [(&mut was, held.unwrap_or("null")), (&mut now, value.get())] {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(field)?);
            out.push(':');
            out.push_str(v);
        }
    }
    was.push('}');
    now.push('}');
    Ok((was, now))
}

/// A JSON object's fields in the order written, each value left as its text.
struct Fields<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Fields<'a>, M::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(24));
                while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// The JSON of a `Step::Wrote`, put together from the records' stored JSON: the text
/// serialising the step would give, without serialising each record once more.
pub(super) fn wrote_json(head: &Head, records: &[StoredWrite<'_>]) -> Result<String, WriteError> {
    let bodies: usize = records
        .iter()
        .map(|w| w.before.as_ref().map_or(4, |b| b.len()) + w.after.len() + 64)
        .sum();
    let mut out = String::with_capacity(64 + bodies);
    out.push_str(r#"{"wrote":{"head":"#);
    out.push_str(&serde_json::to_string(head)?);
    out.push_str(r#","records":["#);
    for (i, w) in records.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"kind":"#);
        out.push_str(&w.kind.to_string());
        out.push_str(r#","id":"#);
        out.push_str(&serde_json::to_string(w.id)?);
        out.push_str(r#","before":"#);
        out.push_str(w.before.as_deref().unwrap_or("null"));
        out.push_str(r#","after":"#);
        out.push_str(&w.after);
        out.push('}');
    }
    out.push_str("]}}");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Kind;

    #[test]
    fn a_step_put_together_from_stored_json_reads_back_as_the_step() {
        let head = Head {
            kind: Kind::Task as i64,
            id: "t_\"quoted\"".into(),
        };
        let before = r#"{"id":"t_1","title":"before \u00e9","tags":[]}"#;
        let after = r#"{"id":"t_1","title":"after","tags":["x"]}"#;
        let created = r#"{"id":"t_2","title":"new"}"#;
        let json = wrote_json(
            &head,
            &[
                StoredWrite {
                    kind: 2,
                    id: "t_1",
                    before: Some(before.into()),
                    after: after.into(),
                },
                StoredWrite {
                    kind: 2,
                    id: "t_2",
                    before: None,
                    after: created.into(),
                },
            ],
        )
        .unwrap();
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let expected = Step::Wrote {
            head: head.clone(),
            records: vec![
                Wrote {
                    kind: 2,
                    id: "t_1".into(),
                    before: Some(raw(before)),
                    after: raw(after),
                },
                Wrote {
                    kind: 2,
                    id: "t_2".into(),
                    before: None,
                    after: raw(created),
                },
            ],
        };
        assert_eq!(json, serde_json::to_string(&expected).unwrap());
        let Step::Wrote { head: h, records } = serde_json::from_str::<Step>(&json).unwrap() else {
            panic!("not a write step: {json}");
        };
        assert_eq!(h.id, head.id);
        assert_eq!(records[0].before.as_ref().map(|b| b.get()), Some(before));
        assert_eq!(records[1].after.get(), created);
    }

    #[test]
    fn a_step_keeps_only_the_fields_its_write_changed() {
        let before = r#"{"id":"t_1","title":"old","tags":[{"id":"g_1","name":"a"}],"position":1.5,"updatedAt":1,"rev":3,"dueAt":null}"#;
        let after = r#"{"id":"t_1","title":"new \"q\"","tags":[{"id":"g_1","name":"a"}],"position":1.5,"updatedAt":2,"rev":4,"dueAt":5}"#;
        let (was, now) = written_only(before, after).unwrap();
        let was: Map<String, Value> = serde_json::from_str(&was).unwrap();
        let now: Map<String, Value> = serde_json::from_str(&now).unwrap();
        assert_eq!(
            Value::Object(was),
            serde_json::json!({"title": "old", "dueAt": null})
        );
        assert_eq!(
            Value::Object(now),
            serde_json::json!({"title": "new \"q\"", "dueAt": 5})
        );
        // Fields in another order, or missing before, are still matched by name.
        let (was, now) = written_only(
            r#"{"title":"old","id":"t_1"}"#,
            r#"{"id":"t_1","title":"new","extra":1}"#,
        )
        .unwrap();
        let was: Value = serde_json::from_str(&was).unwrap();
        let now: Value = serde_json::from_str(&now).unwrap();
        assert_eq!(was, serde_json::json!({"title": "old", "extra": null}));
        assert_eq!(now, serde_json::json!({"title": "new", "extra": 1}));
    }
}
