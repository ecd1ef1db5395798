//! The subcommands of `bitlens`, one module each.

pub mod check;
pub mod common;
pub mod decode;
pub mod decode_bytes;
pub mod encode;
pub mod export_wireshark;
pub mod inspect;
pub mod proxy;
pub mod synth;
pub mod tagged;
pub mod vectors;
