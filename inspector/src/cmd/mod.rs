//! The subcommands of `bitlens`, one module each.

pub mod decode_bytes;
pub mod encode;
pub mod tagged;
pub mod vectors;
