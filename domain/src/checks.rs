//! Value checks made once at the edge: trimming of display fields, refusal of over-long
//! prose, dates and times, priority, effort, folder and photo. After these, values are trusted.

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::error::WriteError;

/// Cuts `s` to its first `max` characters (Unicode scalar values); nothing else is stripped.
pub fn trim_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => s[..cut].to_owned(),
        None => s.to_owned(),
    }
}

/// A required name or title: trimmed to fit, and never empty.
pub fn required_text(field: &str, s: &str, max: usize) -> Result<String, WriteError> {
    if s.is_empty() {
        return Err(WriteError::invalid(
            field,
            format!("`{field}` must not be empty"),
        ));
    }
    Ok(trim_to(s, max))
}

/// Prose refused with 422 when longer than `max` characters.
pub fn prose(field: &str, s: String, max: usize) -> Result<String, WriteError> {
    if s.chars().count() > max {
        return Err(WriteError::invalid(
            field,
            format!("`{field}` is longer than {max} characters"),
        ));
    }
    Ok(s)
}

/// `""` and `null` both mean no folder.
pub fn folder(s: Option<String>, max: usize) -> Option<String> {
    s.filter(|f| !f.is_empty()).map(|f| trim_to(&f, max))
}

/// Priority is clamped to 1..=4 (1 is highest).
pub fn priority(p: i64) -> i64 {
    p.clamp(1, 4)
}

/// A `YYYY-MM-DD` date that exists.
pub fn deadline(field: &str, s: &str) -> Result<String, WriteError> {
    let b = s.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let exists = shaped && {
        let year: i16 = s[0..4].parse().unwrap_or(0);
        let month: i8 = s[5..7].parse().unwrap_or(0);
        let day: i8 = s[8..10].parse().unwrap_or(0);
        jiff::civil::Date::new(year, month, day).is_ok()
    };
    if exists {
        Ok(s.to_owned())
    } else {
        Err(WriteError::invalid(
            field,
            format!("`{field}` must be a date that exists, as YYYY-MM-DD"),
        ))
    }
}

/// A strict 24-hour `HH:MM`.
pub fn deadline_time(field: &str, s: &str) -> Result<String, WriteError> {
    let b = s.as_bytes();
    let ok = b.len() == 5
        && b[2] == b':'
        && b[0].is_ascii_digit()
        && b[1].is_ascii_digit()
        && b[3].is_ascii_digit()
        && b[4].is_ascii_digit()
        && (b[0] - b'0') * 10 + (b[1] - b'0') < 24
        && b[3] < b'6';
    if ok {
        Ok(s.to_owned())
    } else {
        Err(WriteError::invalid(
            field,
            format!("`{field}` must be a 24-hour time as HH:MM"),
        ))
    }
}

/// How much work a card is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Easy,
    Medium,
    Hard,
}

/// A base64 data URL of a real WebP, JPEG or PNG image, at most `max` characters.
pub fn photo(field: &str, s: &str, max: usize) -> Result<String, WriteError> {
    let refuse = |why: &str| Err(WriteError::invalid(field, format!("`{field}` {why}")));
    if s.chars().count() > max {
        return refuse(&format!("is longer than {max} characters"));
    }
    let Some(rest) = s.strip_prefix("data:image/") else {
        return refuse("must be a data URL of a WebP, JPEG or PNG image");
    };
    let Some((mime, data)) = rest.split_once(";base64,") else {
        return refuse("must be a base64 data URL");
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return refuse("is not valid base64");
    };
    let matches = match mime {
        "png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "jpeg" | "jpg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "webp" => bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => return refuse("must be image/webp, image/jpeg or image/png"),
    };
    if !matches {
        return refuse(&format!("does not hold image/{mime} bytes"));
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;

    #[test]
    fn trims_by_characters_not_bytes() {
        assert_eq!(trim_to("héllo", 2), "hé");
        assert_eq!(trim_to("abc", 5), "abc");
        assert_eq!(trim_to("  a ", 10), "  a ");
    }

    #[test]
    fn dates_must_exist() {
        assert!(deadline("deadline", "2024-02-29").is_ok());
        assert!(deadline("deadline", "2023-02-29").is_err());
        assert!(deadline("deadline", "2024-2-01").is_err());
        assert!(deadline("deadline", "2024-13-01").is_err());
        assert!(deadline("deadline", "2024-01-0a").is_err());
    }

    #[test]
    fn times_are_strict() {
        assert!(deadline_time("t", "00:00").is_ok());
        assert!(deadline_time("t", "23:59").is_ok());
        for bad in ["9:30", "24:00", "12:60", "12:5", "12-30", " 12:30"] {
            assert!(deadline_time("t", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn photos_are_checked_by_their_bytes() {
        let png = format!(
            "data:image/png;base64,{}",
            STANDARD.encode(b"\x89PNG\r\n\x1a\nrest")
        );
        assert!(photo("photo", &png, 24_576).is_ok());
        let fake = format!("data:image/png;base64,{}", STANDARD.encode(b"GIF89a"));
        assert!(photo("photo", &fake, 24_576).is_err());
        let webp = format!(
            "data:image/webp;base64,{}",
            STANDARD.encode(b"RIFF\0\0\0\0WEBPVP8 ")
        );
        assert!(photo("photo", &webp, 24_576).is_ok());
        assert!(photo("photo", "data:image/png;base64,!!!", 24_576).is_err());
        assert!(photo("photo", "hello", 24_576).is_err());
        assert!(photo("photo", &png, 10).is_err());
    }

    #[test]
    fn folder_empty_is_none() {
        assert_eq!(folder(Some(String::new()), 40), None);
        assert_eq!(folder(Some("x".repeat(50)), 40).unwrap().len(), 40);
    }
}
