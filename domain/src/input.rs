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
            // An object naming neither `before` nor `after` is a value of its own (a card's
            // `repeat`), not a guard.
            if !guard.contains_key("before") && !guard.contains_key("after") {
                return Ok(Some(Input::bare(decode(name, raw)?)));
            }
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
/// What a too-wide object's error message starts with.
const TOO_WIDE: &str = "object too wide: ";

/// The most keys one object of a write body may name. The widest object any route takes is a
/// card's create (`task::CREATE_FIELDS`, 21 names); a body may name each of them in both
/// spellings and still be answered by name (`sent twice, in camelCase and snake_case`), so
/// 42 keys are worth reading; 64 leaves room for fields added later, and a unit test holds the
/// cap to at least twice the widest list. The same cap holds in a Workboard export file
/// (`/import`), whose objects are the same projects, columns and cards; Trello's file is read
/// into typed structs and does not pass through this check. An object past the cap is refused
/// at its 65th key, so a 160,000-key object costs no more than one of 65.
pub const MAX_OBJECT_KEYS: usize = 64;

/// Objects up to this many keys are checked by a scan of the keys seen (cheaper than hashing
/// for the two-key guards and few-field bodies nearly every write sends); past it, a hash set.
const SCANNED_KEYS: usize = 8;

/// Refuses JSON (already known to parse) any of whose objects names one key twice: which of
/// the two was meant is not guessed (`{"id":"t_a","id":"t_b"}`, a guard with two `before`s).
/// Also refuses an object wider than [`MAX_OBJECT_KEYS`]. Costs time linear in the text.
pub fn refuse_duplicate_keys(json: &str) -> Result<(), WriteError> {
    use serde::de::DeserializeSeed;
    let mut reader = serde_json::Deserializer::from_str(json);
    let checked = UniqueKeys {
        max: MAX_OBJECT_KEYS,
    }
    .deserialize(&mut reader)
    .and_then(|_| reader.end());
    let Err(e) = checked else {
        return Ok(());
    };
    let text = e.to_string();
    let message = |prefix: &str| {
        text.strip_prefix(prefix)
            .map(|rest| rest.split(" at line").next().unwrap_or(rest).to_owned())
    };
    if let Some(key) = message(DUPLICATE) {
        return Err(WriteError::DuplicateKey { key });
    }
    if message(TOO_WIDE).is_some() {
        return Err(WriteError::TooWide {
            max: MAX_OBJECT_KEYS,
        });
    }
    Err(WriteError::BadJson(format!(
        "the body is not valid JSON: {text}"
    )))
}

/// Any JSON value whose objects each name every key once, and at most `max` keys.
#[derive(Clone, Copy)]
struct UniqueKeys {
    max: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// The keys one object has named so far: a short list while it is small, a hash set once it
/// is not, so checking an object costs time linear in its keys whatever its width.
enum Seen<'de> {
    Few(Vec<Cow<'de, str>>),
    Many(std::collections::HashSet<Cow<'de, str>>),
}

impl<'de> Seen<'de> {
    /// Adds `key`, or hands it back when the object named it already.
    fn add(&mut self, key: Cow<'de, str>) -> Result<(), Cow<'de, str>> {
        match self {
            Seen::Few(keys) if keys.contains(&key) => return Err(key),
            Seen::Few(keys) => {
                keys.push(key);
                if keys.len() > SCANNED_KEYS {
                    *self = Seen::Many(keys.drain(..).collect());
                }
            }
            Seen::Many(keys) if keys.contains(&key) => return Err(key),
            Seen::Many(keys) => {
                keys.insert(key);
            }
        }
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let mut seen = Seen::Few(Vec::new());
        let mut count = 0;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            count += 1;
            if count > self.max {
                return Err(serde::de::Error::custom(format!("{TOO_WIDE}{}", self.max)));
            }
            if let Err(key) = seen.add(key) {
                return Err(serde::de::Error::custom(format!("{DUPLICATE}{key}")));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }

    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
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
    fn an_object_naming_neither_before_nor_after_is_a_bare_value() {
        type Pair = BTreeMap<String, i64>;
        let b = Body::parse(br#"{"title":{"every":1}}"#, ACCEPTED).unwrap();
        let i = b.input::<Pair>("title").unwrap().unwrap();
        assert_eq!(
            (i.before, i.after),
            (None, Pair::from([("every".into(), 1)]))
        );
        let b = Body::parse(br#"{"title":{"before":{"every":1},"after":{}}}"#, ACCEPTED).unwrap();
        let i = b.input::<Pair>("title").unwrap().unwrap();
        assert_eq!(i.before, Some(Pair::from([("every".into(), 1)])));
        let b = Body::parse(br#"{"title":{"after":{},"every":1}}"#, ACCEPTED).unwrap();
        assert!(
            b.input::<Pair>("title").is_err(),
            "a guard takes only before and after"
        );
        let b = Body::parse(br#"{"title":{"every":1}}"#, ACCEPTED).unwrap();
        assert!(b.input::<String>("title").is_err());
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
    fn a_key_named_twice_is_found_in_a_wide_object_too() {
        let mut body = String::from("{");
        for i in 0..40 {
            body.push_str(&format!("\"k{i}\":{i},"));
        }
        body.push_str("\"k7\":0}");
        match refuse_duplicate_keys(&body) {
            Err(WriteError::DuplicateKey { key }) => assert_eq!(key, "k7"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_object_past_the_width_cap_is_refused_at_any_depth() {
        let wide = |n: usize| {
            let keys: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{{}}}", keys.join(","))
        };
        assert!(refuse_duplicate_keys(&wide(MAX_OBJECT_KEYS)).is_ok());
        for body in [
            wide(MAX_OBJECT_KEYS + 1),
            wide(160_000),
            format!("{{\"title\":{{\"after\":{}}}}}", wide(1_000)),
            format!("[1,{}]", wide(MAX_OBJECT_KEYS + 1)),
        ] {
            assert!(
                matches!(
                    refuse_duplicate_keys(&body),
                    Err(WriteError::TooWide { .. })
                ),
                "{}",
                &body[..60]
            );
        }
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
