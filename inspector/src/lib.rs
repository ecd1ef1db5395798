//! The `bitlens` command-line tool as a library: capture reading, decoding, the TUI and the
//! subcommands. The binary only parses arguments and calls into here.

pub mod capture;
pub mod cmd;
pub mod decode;
pub mod output;
pub mod pipeline;
pub mod proxy;
pub mod synth;
pub mod tui;
