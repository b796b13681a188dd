//! Decoding write bodies: field names in camelCase or snake_case, unknown fields refused with
//! the accepted list, and every value bare or guarded (`{before, after}`). Values stay as raw
//! JSON slices of the request until a command asks for them by name, so no value tree is built.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::WriteError;

/// A value as written: bare, or guarded by the value the writer expects the field to hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Input<T> {
    pub before: Option<T>,
    pub after: T,
}

impl<T> Input<T> {
    pub fn bare(after: T) -> Self {
        Input {
            before: None,
            after,
        }
    }

    /// Applies a check or normalisation to both sides, so `before` compares like a written
    /// value (contract: Guarded writes).
    pub fn try_map<U>(
        self,
        mut f: impl FnMut(T) -> Result<U, WriteError>,
    ) -> Result<Input<U>, WriteError> {
        Ok(Input {
            before: self.before.map(&mut f).transpose()?,
            after: f(self.after)?,
        })
    }
}

/// A JSON object body, its fields by canonical (camelCase) name.
pub struct Body<'a> {
    fields: BTreeMap<String, &'a RawValue>,
}

impl<'a> Body<'a> {
    /// Parses a request body. Not JSON answers 400; not an object, an unknown field or a
    /// field sent in both spellings answers 422.
    pub fn parse(bytes: &'a [u8], accepted: &'static [&'static str]) -> Result<Self, WriteError> {
        let raw: &'a RawValue = serde_json::from_slice(bytes)
            .map_err(|e| WriteError::BadJson(format!("the body is not valid JSON: {e}")))?;
        refuse_duplicate_keys(raw.get())?;
        Self::from_raw(raw, accepted)
    }

    /// Reads one nested object (a batch entry, a column given on project create).
    pub fn from_raw(
        raw: &'a RawValue,
        accepted: &'static [&'static str],
    ) -> Result<Self, WriteError> {
        let map: BTreeMap<Cow<'a, str>, &'a RawValue> =
            serde_json::from_str(raw.get()).map_err(|_| WriteError::Invalid {
                message: "the body must be a JSON object".into(),
                field: None,
                accepted: Some(accepted),
                index: None,
            })?;
        let mut fields = BTreeMap::new();
        for (name, value) in map {
            let canonical = camel_case(&name);
            if !accepted.contains(&canonical.as_str()) {
                return Err(WriteError::Invalid {
                    message: format!("unknown field `{name}`"),
                    field: Some(name.into_owned()),
                    accepted: Some(accepted),
                    index: None,
                });
            }
            if fields.insert(canonical.clone(), value).is_some() {
                return Err(WriteError::invalid(
                    &canonical,
                    format!("`{canonical}` is sent twice, in camelCase and snake_case"),
                ));
            }
        }
        Ok(Body { fields })
    }

    pub fn has(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    /// The raw JSON of a field, for fields that are not guarded (nested arrays).
    pub fn raw(&self, name: &str) -> Option<&'a RawValue> {
        self.fields.get(name).copied()
    }

    /// A field that may be bare or guarded; `None` when the body leaves it out.
    pub fn input<T: DeserializeOwned>(&self, name: &str) -> Result<Option<Input<T>>, WriteError> {
        let Some(raw) = self.fields.get(name) else {
            return Ok(None);
        };
        if raw.get().trim_start().starts_with('{') {
            let guard: BTreeMap<Cow<'_, str>, &RawValue> = serde_json::from_str(raw.get())
                .map_err(|_| WriteError::invalid(name, format!("`{name}` is not valid")))?;
            if let Some(other) = guard.keys().find(|k| *k != "before" && *k != "after") {
                return Err(WriteError::invalid(
                    name,
                    format!("a guarded `{name}` takes only `before` and `after`, not `{other}`"),
                ));
            }
            let Some(after) = guard.get("after") else {
                return Err(WriteError::invalid(
                    name,
                    format!("a guarded `{name}` needs `after` beside `before`"),
                ));
            };
            let before = guard.get("before").map(|b| decode(name, b)).transpose()?;
            return Ok(Some(Input {
                before,
                after: decode(name, after)?,
            }));
        }
        Ok(Some(Input::bare(decode(name, raw)?)))
    }

    /// A field read bare only: guards make no sense for it (ids, nested collections).
    pub fn bare<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, WriteError> {
        self.fields
            .get(name)
            .map(|raw| decode(name, raw))
            .transpose()
    }

    /// A create's client-chosen `id`: `null` means none was chosen, like leaving it out.
    pub fn client_id(&self) -> Result<Option<String>, WriteError> {
        Ok(self.bare::<Option<String>>("id")?.flatten())
    }

    /// A field whose guard is ignored (creates: there is no prior value to guard).
    pub fn after<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, WriteError> {
        Ok(self.input(name)?.map(|i| i.after))
    }
}

/// What a duplicate key's error message starts with, to tell it from JSON that does not
/// parse.
const DUPLICATE: &str = "duplicate key: ";

/// Refuses JSON (already known to parse) any of whose objects names one key twice: which of
/// the two was meant is not guessed (`{"id":"t_a","id":"t_b"}`, a guard with two `before`s).
pub fn refuse_duplicate_keys(json: &str) -> Result<(), WriteError> {
    match serde_json::from_str::<UniqueKeys>(json) {
        Ok(UniqueKeys) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            match text.strip_prefix(DUPLICATE) {
                Some(rest) => {
                    let key = rest.split(" at line").next().unwrap_or(rest);
                    Err(WriteError::DuplicateKey {
                        key: key.to_owned(),
                    })
                }
                None => Err(WriteError::BadJson(format!(
                    "the body is not valid JSON: {text}"
                ))),
            }
        }
    }
}

/// Any JSON value whose objects each name every key once.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self, M::Error> {
        let mut seen: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if seen.contains(&key) {
                return Err(serde::de::Error::custom(format!("{DUPLICATE}{key}")));
            }
            map.next_value::<UniqueKeys>()?;
            seen.push(key);
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self, S::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
}

fn decode<T: DeserializeOwned>(name: &str, raw: &RawValue) -> Result<T, WriteError> {
    serde_json::from_str(raw.get())
        .or_else(|e| {
            // `2.0` is a whole number too (as JSON Schema counts): retry as an integer.
            match whole_number(raw.get()) {
                Some(n) => serde_json::from_str(&n.to_string()).map_err(|_| e),
                None => Err(e),
            }
        })
        .map_err(|e| {
            let what = e.to_string();
            let what = what.split(" at line").next().unwrap_or(&what);
            WriteError::invalid(name, format!("`{name}` is not valid: {what}"))
        })
}

/// A JSON number written with a zero fraction or an exponent that is a whole `i64`.
fn whole_number(text: &str) -> Option<i64> {
    let text = text.trim();
    if !text.contains(['.', 'e', 'E']) {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    (v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15).then_some(v as i64)
}

/// `deadline_time` -> `deadlineTime`; camelCase names pass through.
fn camel_case(name: &str) -> String {
    if !name.contains('_') {
        return name.to_owned();
    }
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCEPTED: &[&str] = &["title", "deadlineTime", "priority"];

    #[test]
    fn both_spellings_are_accepted_but_not_together() {
        let b = Body::parse(br#"{"deadline_time":"09:30"}"#, ACCEPTED).unwrap();
        assert_eq!(b.bare::<String>("deadlineTime").unwrap().unwrap(), "09:30");
        let both = Body::parse(
            br#"{"deadline_time":"09:30","deadlineTime":"10:00"}"#,
            ACCEPTED,
        );
        assert!(matches!(both, Err(WriteError::Invalid { .. })));
    }

    #[test]
    fn unknown_fields_are_named() {
        match Body::parse(br#"{"titel":"x"}"#, ACCEPTED) {
            Err(WriteError::Invalid {
                field, accepted, ..
            }) => {
                assert_eq!(field.as_deref(), Some("titel"));
                assert_eq!(accepted, Some(ACCEPTED));
            }
            _ => panic!("expected 422"),
        }
    }

    #[test]
    fn guarded_values_need_after() {
        let b = Body::parse(br#"{"title":{"before":"a","after":"b"}}"#, ACCEPTED).unwrap();
        let i = b.input::<String>("title").unwrap().unwrap();
        assert_eq!((i.before.as_deref(), i.after.as_str()), (Some("a"), "b"));
        let b = Body::parse(br#"{"title":{"before":"a"}}"#, ACCEPTED).unwrap();
        assert!(b.input::<String>("title").is_err());
        let b = Body::parse(br#"{"priority":{"before":null,"after":2}}"#, ACCEPTED).unwrap();
        let i = b.input::<Option<i64>>("priority").unwrap().unwrap();
        assert_eq!(i.before, Some(None));
    }

    #[test]
    fn whole_numbers_written_as_floats_are_integers() {
        let b = Body::parse(br#"{"priority":2.0,"title":3.5}"#, ACCEPTED).unwrap();
        assert_eq!(b.bare::<i64>("priority").unwrap(), Some(2));
        assert!(b.bare::<i64>("title").is_err());
    }

    #[test]
    fn a_key_named_twice_is_refused_at_any_depth() {
        let twice = |body: &str| match Body::parse(body.as_bytes(), ACCEPTED) {
            Err(WriteError::DuplicateKey { key }) => key,
            _ => panic!("{body} was taken"),
        };
        assert_eq!(twice(r#"{"title":"a","title":"b"}"#), "title");
        assert_eq!(
            twice(r#"{"title":{"before":"a","before":"b","after":"c"}}"#),
            "before"
        );
        assert_eq!(twice(r#"{"title":"a","x":[{"k":1,"k":2}]}"#), "k");
        assert!(
            Body::parse(
                br#"{"title":"a","priority":{"before":1,"after":2}}"#,
                ACCEPTED
            )
            .is_ok()
        );
    }

    #[test]
    fn not_json_is_bad_json() {
        assert!(matches!(
            Body::parse(b"{", ACCEPTED),
            Err(WriteError::BadJson(_))
        ));
        assert!(matches!(
            Body::parse(b"[1]", ACCEPTED),
            Err(WriteError::Invalid { .. })
        ));
    }
}
