//! The `bitlens` command-line tool as a library: capture reading, decoding, the TUI.

pub mod capture;
