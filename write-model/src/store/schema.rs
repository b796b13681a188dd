//! The schema version both engines number their migrations by.

use crate::error::WriteError;

/// The schema version this build writes; both engines number their migrations alike.
pub const SCHEMA_VERSION: i64 = 6;

/// Refuses a store whose schema a newer build made.
pub(crate) fn check_schema_version(version: i64) -> Result<(), WriteError> {
    if version > SCHEMA_VERSION {
        return Err(WriteError::Internal(format!(
            "the store's schema is version {version}, newer than this build knows ({SCHEMA_VERSION}); run a newer workboard"
        )));
    }
    Ok(())
}
