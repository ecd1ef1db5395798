//! The subcommands of `bitlens`, one module each.

pub mod vectors;
