//! The photo check: only a base64 data URL of real WebP, JPEG or PNG bytes within the limit
//! passes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(photo) = write_model::checks::photo("photo", text, 24_576) {
        assert!(photo.starts_with("data:image/"));
        assert!(photo.chars().count() <= 24_576);
    }
});
