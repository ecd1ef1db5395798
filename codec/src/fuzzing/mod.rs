//! Harness functions for the fuzz targets and the stable corpus-replay tests.
pub mod tagged;
