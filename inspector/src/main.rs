//! `bitlens`: inspect, decode and check captures of bit-packed game traffic.
//!
//! Built with the same [`bitlens::Cli`] a game's own inspector uses: the demo protocol of
//! `bitlens-demo` on its ports (packets on 40000, batches on 40001), and the subcommands
//! that belong to bitlens itself. Everything else (parsing, dispatch, exit status) is the
//! library's.

use bitlens::Cli;
use bitlens::cmd::{encode, synth, tagged, vectors};
use bitlens_demo::{batch_demo, demo};
use std::process::ExitCode;

fn main() -> ExitCode {
    Cli::new("bitlens")
        .about("Inspect, decode and check captures of bit-packed game traffic.")
        .version(env!("CARGO_PKG_VERSION"))
        .dissector(demo::PORT, demo::dissector())
        .dissector(batch_demo::PORT, batch_demo::dissector())
        .command("synth", synth::command)
        .command("vectors", vectors::command)
        .command("tagged", tagged::command)
        .command("encode", encode::command)
        .run()
}
