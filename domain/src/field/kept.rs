//! What a record keeps for a writable field, as the analytic exports write it: a CSV cell
//! (text defused against spreadsheet formulas, nothing for none) and whether reads may show
//! it as `null`. Every `FieldValue::Stored` is one of these; a new stored type (a small
//! object, say) takes the defaults with `impl Kept for MyType {}`.

use serde::Serialize;

use crate::checks::Effort;

/// A value a record keeps for a writable field.
pub trait Kept: Clone + PartialEq + Serialize {
    /// Whether reads may show it as `null` (the read schemas of the documents).
    const NULLABLE: bool = false;

    /// The value as one CSV cell: by default its compact JSON, defused.
    fn cell(&self) -> String {
        // A derived `Serialize` of plain data always writes to a string.
        cell(&serde_json::to_string(self).unwrap_or_default())
    }
}

impl Kept for String {
    fn cell(&self) -> String {
        cell(self)
    }
}

impl Kept for i64 {
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Kept for f64 {
    /// Rust's `Display`: never an exponent (`1e20` is written out in full).
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Kept for bool {
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Kept for Effort {
    fn cell(&self) -> String {
        match self {
            Effort::Easy => "easy",
            Effort::Medium => "medium",
            Effort::Hard => "hard",
        }
        .to_owned()
    }
}

/// A card's tag texts: one cell, joined with `;`.
impl Kept for Vec<String> {
    fn cell(&self) -> String {
        cell(&self.join(";"))
    }
}

impl<T: Kept> Kept for Option<T> {
    const NULLABLE: bool = true;

    fn cell(&self) -> String {
        self.as_ref().map(Kept::cell).unwrap_or_default()
    }
}

/// A text cell made safe for spreadsheets: one that begins with `=`, `+`, `-` or `@` (or a
/// tab or carriage return, which some read past) gets a leading `'`, so it is never run as
/// a formula (CSV injection).
pub fn cell(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

/// A stamp in ms as ISO 8601 UTC with milliseconds: `2026-11-25T12:00:00.000Z`.
pub fn iso(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => format!(
            "{}.{:03}Z",
            t.strftime("%Y-%m-%dT%H:%M:%S"),
            ms.rem_euclid(1000)
        ),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_read_as_iso_utc_with_milliseconds() {
        assert_eq!(iso(1_795_608_000_000), "2026-11-25T12:00:00.000Z");
        assert_eq!(iso(1_795_608_000_123), "2026-11-25T12:00:00.123Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn formula_like_cells_are_defused() {
        for bad in ["=1+2", "+1", "-1", "@SUM(A1)", "\t=x", "\r=x"] {
            assert_eq!(cell(bad), format!("'{bad}"));
        }
        for fine in ["plain", "1-2", "a=b", ""] {
            assert_eq!(cell(fine), fine);
        }
    }

    #[test]
    fn kept_values_make_the_cells_the_exports_always_wrote() {
        assert_eq!(1e20_f64.cell(), "100000000000000000000");
        assert_eq!(0.5_f64.cell(), "0.5");
        assert_eq!(Some(Effort::Hard).cell(), "hard");
        assert_eq!(None::<String>.cell(), "");
        assert_eq!(vec!["+a".to_owned(), "b".to_owned()].cell(), "'+a;b");
    }
}
