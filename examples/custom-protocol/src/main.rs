//! `skirmish`: bitlens's command line for the skirmish protocol on its server port: `inspect`,
//! `decode [--json|--fields]`, `check`, `decode-bytes`, `proxy`, `replay`, `export-wireshark`,
//! `seeds` and `fuzz-init`, all of it from the builder below.

use std::process::ExitCode;

fn main() -> ExitCode {
    bitlens::Cli::new("skirmish")
        .about("Inspect, decode and check captures of skirmish traffic.")
        .version(env!("CARGO_PKG_VERSION"))
        .packets::<custom_protocol::Packet>(custom_protocol::PORT, "skirmish")
        .run()
}
