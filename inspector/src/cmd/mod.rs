//! The subcommands of `bitlens`, one module each.

pub mod tagged;
pub mod vectors;
