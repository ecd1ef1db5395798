//! The string type of a traced field's path and of an error's field path: its own module, below
//! both [`crate::trace`] and [`crate::error`], so that neither imports the other for it.

/// A traced field's path. With feature `inline-paths` (the inspector's), a `CompactString`
/// that holds up to 24 bytes inline, so a trace allocates nothing per field for most paths;
/// else a `String`.
#[cfg(feature = "inline-paths")]
pub type PathString = compact_str::CompactString;
/// A traced field's path. With feature `inline-paths` (the inspector's), a `CompactString`
/// that holds up to 24 bytes inline, so a trace allocates nothing per field for most paths;
/// else a `String`.
#[cfg(not(feature = "inline-paths"))]
pub type PathString = String;
