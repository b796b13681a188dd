//! What the families' creates and moves share: the position a new record takes, a finite
//! position, and a create whose id is taken (a safe retry, or a conflict).

use serde_json::Value;

use super::Ctx;
use crate::error::WriteError;
use crate::outcome::Outcome;
use crate::records::Kind;

/// The position a new record takes when none is given: above every live sibling.
pub fn top_position(
    ctx: &mut Ctx<'_>,
    kind: Kind,
    parent: Option<&str>,
) -> Result<f64, WriteError> {
    Ok(ctx
        .least_position(kind, parent)?
        .map_or(0.0, |min| min - 1.0))
}

/// A finite position.
pub fn position(field: &str, p: f64) -> Result<f64, WriteError> {
    if p.is_finite() {
        Ok(p)
    } else {
        Err(WriteError::invalid(
            field,
            format!("`{field}` must be a finite number"),
        ))
    }
}

/// Refuses a create whose id is taken, unless every field sent equals the record's (a retry).
/// `live`: the id names a live record of `kind` (shown as `current`); otherwise the id is
/// taken by a deleted record or another kind of item, and `current` is null.
pub fn existing_or_conflict(
    same: bool,
    kind: Kind,
    id: &str,
    live: bool,
) -> Result<Outcome, WriteError> {
    if same {
        Ok(Outcome::Existing {
            kind,
            id: id.to_owned(),
        })
    } else {
        Err(WriteError::Conflict {
            message: format!("the id `{id}` is already in use"),
            field: "id".into(),
            current: Value::Null,
            record: live.then(|| Box::new((kind, id.to_owned()))),
            index: None,
        })
    }
}
