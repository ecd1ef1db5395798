//! Errors and warnings of the schema loader, placed at a line and column.

use std::fmt;

/// A problem in a schema file, placed at a line and column, with what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The file name as given to [`Schema::from_toml`] or [`Schema::load`].
    pub file: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// What is wrong, then in parentheses what to change.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for SchemaError {}

/// Something in a schema file that loads but deserves a look (a compressed float range that is
/// not stable, ...), placed at a line and column like a [`SchemaError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaWarning {
    /// The file name as given to [`Schema::from_toml`] or [`Schema::load`].
    pub file: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// What deserves a look, then in parentheses what would change it.
    pub message: String,
}

impl fmt::Display for SchemaWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: warning: {}",
            self.file, self.line, self.col, self.message
        )
    }
}
