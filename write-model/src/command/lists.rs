//! Caller-supplied lists read against their cap. A list past its cap is refused (422
//! `limit_reached`, naming the field) as soon as the first element past the cap is met: the
//! rest is neither decoded nor held, so a list of a million ids costs what its cap allows,
//! plus one scan of the bytes that were already parsed once.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::WriteError;

/// Decodes `raw`, a JSON array, into at most `max` entries; `over` is the error past it.
/// Anything but an array of `T` is 422 `invalid_value` naming `field`.
pub(crate) fn capped<'a, T: Deserialize<'a>>(
    raw: &'a RawValue,
    field: &str,
    max: usize,
    over: impl FnOnce() -> WriteError,
) -> Result<Vec<T>, WriteError> {
    let past = Cell::new(false);
    let visitor = Capped {
        max,
        past: &past,
        _of: PhantomData,
    };
    let mut de = serde_json::Deserializer::from_str(raw.get());
    match de.deserialize_seq(visitor) {
        Ok(list) => Ok(list),
        Err(_) if past.get() => Err(over()),
        Err(e) => {
            let what = e.to_string();
            let what = what.split(" at line").next().unwrap_or(&what);
            Err(WriteError::invalid(
                field,
                format!("`{field}` is not valid: {what}"),
            ))
        }
    }
}

/// The count limit error most lists answer with: "at most `max` `what`".
pub(crate) fn at_most(field: &str, max: usize, what: &str) -> WriteError {
    WriteError::limit(field, format!("`{field}` holds at most {max} {what}"))
}

struct Capped<'a, T> {
    max: usize,
    past: &'a Cell<bool>,
    _of: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Capped<'_, T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of at most {} entries", self.max)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max));
        while list.len() < self.max {
            match seq.next_element::<T>()? {
                Some(item) => list.push(item),
                None => return Ok(list),
            }
        }
        // One entry more than the cap is the refusal: stop reading here.
        if seq.next_element::<IgnoredAny>()?.is_some() {
            self.past.set(true);
            return Err(serde::de::Error::custom("past the cap"));
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn over() -> WriteError {
        at_most("ids", 2, "ids")
    }

    #[test]
    fn a_list_at_its_cap_is_read_whole() {
        let ids: Vec<String> = capped(&raw(r#"["a","b"]"#), "ids", 2, over).unwrap();
        assert_eq!(ids, ["a", "b"]);
        let none: Vec<String> = capped(&raw("[]"), "ids", 2, over).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn one_past_the_cap_is_refused_naming_the_field() {
        let e = capped::<String>(&raw(r#"["a","b","c"]"#), "ids", 2, over).unwrap_err();
        assert!(
            matches!(&e, WriteError::LimitReached { field: Some(f), .. } if f == "ids"),
            "{e:?}"
        );
    }

    #[test]
    fn entries_past_the_cap_are_not_decoded() {
        // The third entry is not a string, the fourth not even checked: the cap answers.
        let e = capped::<String>(&raw(r#"["a","b",{"x":1},7]"#), "ids", 2, over).unwrap_err();
        assert!(matches!(e, WriteError::LimitReached { .. }), "{e:?}");
    }

    #[test]
    fn not_a_list_of_the_type_is_invalid() {
        for text in [r#""a""#, "null", r#"[1]"#, "{}"] {
            let e = capped::<String>(&raw(text), "ids", 2, over).unwrap_err();
            assert!(
                matches!(&e, WriteError::Invalid { field: Some(f), .. } if f == "ids"),
                "{text}: {e:?}"
            );
        }
    }
}
