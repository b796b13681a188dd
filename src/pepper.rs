//! The pepper: the secret every key's stored digest is made with (HMAC-SHA256(pepper, key)).
//! Without the pepper the keys were made with, no key can be found again, so a node never
//! starts on a store with keys and a missing or different pepper. The store keeps a check
//! value, HMAC(pepper, a fixed string), that tells the right pepper from any other.

use std::io::Write;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use write_model::store::Store;

use crate::error::Error;

/// The name of the pepper's check value in the store.
const CHECK_NAME: &str = "pepper-check";
/// What the check value is the digest of.
const CHECK_INPUT: &str = "workboard pepper check v1";

/// The secret keys are hashed with. Its `Debug` never shows it.
pub struct Pepper([u8; 32]);

impl std::fmt::Debug for Pepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pepper(<redacted>)")
    }
}

impl Pepper {
    /// HMAC-SHA256(pepper, `text`).
    pub fn digest(&self, text: &str) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(text.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The secret itself, for a backup.
    pub(crate) fn secret(&self) -> &[u8] {
        &self.0
    }

    /// The value the store keeps to recognise this pepper.
    fn check_value(&self) -> [u8; 32] {
        self.digest(CHECK_INPUT)
    }

    /// Reads the pepper file; `None` when there is none. A file readable by others is
    /// tightened to 0600 first (and said so in the log).
    pub fn read(path: &Path) -> Result<Option<Pepper>, Error> {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::file(path, e)),
        };
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| Error::file(path, e))?;
            tracing::warn!(file = %path.display(), "the pepper file was readable by others; its mode is now 0600");
        }
        let bytes = std::fs::read(path).map_err(|e| Error::file(path, e))?;
        let secret: [u8; 32] = bytes.try_into().map_err(|_| {
            Error::new(format!(
                "{}: the pepper file is not 32 bytes long",
                path.display()
            ))
        })?;
        Ok(Some(Pepper(secret)))
    }

    /// Makes a new pepper and writes it to `path`.
    fn create(path: &Path) -> Result<Pepper, Error> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| Error::new(e.to_string()))?;
        write_atomically(path, &secret)?;
        Ok(Pepper(secret))
    }
}

/// Writes a pepper file atomically: a temporary file beside it (0600), flushed, renamed
/// over the name, and the folder flushed, so a crash leaves the old file or the new one.
pub fn write_atomically(path: &Path, secret: &[u8]) -> Result<(), Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let temp = path.with_extension("new");
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        f.write_all(secret)?;
        f.sync_all()?;
        std::fs::rename(&temp, path)?;
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::File::open(folder)?.sync_all()?;
        }
        Ok::<(), std::io::Error>(())
    })();
    written.map_err(|e| Error::file(path, e))
}

/// The pepper of a store, from the file at `path`:
/// - a store that keeps a check value accepts only the pepper it recognises;
/// - a store with keys but no pepper file, or a pepper it does not recognise, refuses to
///   start, naming the file;
/// - a store without keys and without a pepper file gets a new pepper.
///
/// The check value is claimed in the store (set unless another node set it first), so two
/// nodes starting at once on one empty database end up with one pepper between them.
pub fn settle(store: &dyn Store, path: &Path) -> Result<Pepper, Error> {
    let stored = store.meta(CHECK_NAME).map_err(Error::store)?;
    let pepper = match Pepper::read(path)? {
        Some(pepper) => pepper,
        None if stored.is_some() || store.holds_keys().map_err(Error::store)? => {
            return Err(Error::new(format!(
                "{}: the pepper file is missing, and this store holds keys made with a pepper; \
                 put back the pepper file the keys were made with (it is in every backup)",
                path.display()
            )));
        }
        None => Pepper::create(path)?,
    };
    let check = pepper.check_value();
    let stored = match stored {
        Some(stored) => stored,
        None => store.claim_meta(CHECK_NAME, &check).map_err(Error::store)?,
    };
    if stored != check {
        return Err(Error::new(format!(
            "{}: this pepper is not the one this store's keys were made with; \
             use the pepper file from the store's data folder or its backup",
            path.display()
        )));
    }
    Ok(pepper)
}

/// A new key: `wb_` and 43 URL-safe characters (258 bits) from the OS generator.
pub fn new_key() -> String {
    format!(
        "{}{}",
        crate::auth::KEY_PREFIX,
        write_model::ids::random_token(43)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_have_the_contract_format() {
        let k = super::new_key();
        assert!(k.starts_with("wb_") && k.len() == 46);
        assert!(
            k[3..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }
}
