//! The subcommands, one module each: a `#[derive(clap::Parser)]` struct of arguments and a
//! `command` function that [`crate::Cli::command`] registers. `inspect`, `decode`, `check`,
//! `profile`, `decode-bytes`, `proxy`, `replay`, `export-wireshark`, `seeds` and `fuzz-init` come with
//! every [`crate::Cli`]; the `bitlens` binary adds `synth`, `vectors`, `tagged` and `encode`
//! (feature `demo`).

pub mod check;
pub mod common;
pub mod decode;
pub mod decode_bytes;
#[cfg(feature = "demo")]
pub mod encode;
pub mod export_wireshark;
pub mod fuzz_init;
pub mod inspect;
pub mod profile;
pub mod proxy;
pub mod seeds;
#[cfg(feature = "demo")]
pub mod synth;
#[cfg(feature = "demo")]
pub mod tagged;
#[cfg(feature = "demo")]
pub mod vectors;
