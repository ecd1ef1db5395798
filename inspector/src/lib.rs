//! `bitlens`: inspect, decode and check captures of bit-packed game traffic, for the demo
//! protocol or for your own.
//!
//! # Inspect your own protocol
//!
//! A game whose packets go through `bitlens-codec` (a `#[derive(PacketSet)]` enum, or one
//! hand-written `serialize` function per packet type and a [`codec::Packet`] implementation
//! for the set) gets the whole command line for its captures from a `main` of a few lines:
//! [`Cli`] registers the packet set on its UDP port, then parses and runs `inspect`,
//! `decode [--json|--fields]`, `check` and `decode-bytes`, with `--decode PORT=NAME`,
//! `--protocol-id` and `--schema`; the live `proxy` and `replay`; `export-wireshark`; and for
//! fuzzing `seeds` and `fuzz-init`. Batches of byte-aligned messages register the same way
//! ([`Cli::messages`], with a [`batch::MessageSet`]); any other format implements
//! [`codec::dissect::Dissector`] and registers with [`Cli::dissector`].
//! `examples/custom-protocol` in the repository is a whole game's protocol done this way.
//!
//! ```
//! use bitlens::Cli;
//! use bitlens_codec::{BitPacked, PacketSet, write_packet};
//!
//! #[derive(BitPacked, Debug, Default, PartialEq)]
//! struct Input {
//!     #[bitlens(range = 0..=359)]
//!     aim: u16,
//!     fire: bool,
//! }
//!
//! #[derive(PacketSet, Debug, PartialEq)]
//! #[bitlens(protocol = "arena", id = 0xA2E7_A001, mtu = 1200)]
//! enum Arena {
//!     Input(Input),
//!     Chat {
//!         #[bitlens(max_len = 63)]
//!         text: String,
//!     },
//! }
//!
//! /// The game's inspector: its `main` is `fn main() -> ExitCode { cli().run() }`.
//! fn cli() -> Cli {
//!     Cli::new("arena")
//!         .about("Inspect, decode and check captures of arena traffic.")
//!         .packets::<Arena>(7777, "arena")
//! }
//!
//! // One packet as the game writes it, decoded field by field: accepted (exit status 0).
//! let mut buf = [0u8; 64];
//! let n = write_packet(&mut Arena::Input(Input { aim: 90, fire: true }), &mut buf)?;
//! let file = std::env::temp_dir().join(format!("arena-{}.bin", std::process::id()));
//! std::fs::write(&file, &buf[..n])?;
//! let path = file.to_str().expect("a UTF-8 temporary path");
//! assert_eq!(cli().status_from(["arena", "decode-bytes", path]), 0);
//! // A bit flipped on the way: the CRC no longer holds, the packet is rejected (status 1).
//! buf[5] ^= 0x10;
//! std::fs::write(&file, &buf[..n])?;
//! assert_eq!(cli().status_from(["arena", "decode-bytes", path]), 1);
//! // A capture that is not there is a file error (status 2).
//! assert_eq!(cli().status_from(["arena", "check", "no-such.pcap"]), 2);
//! # std::fs::remove_file(&file)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layers
//!
//! Each imports only those below it:
//!
//! - [`capture`]: pcap/pcapng files to UDP datagrams (with their capture status);
//! - [`faults`]: labelled faults, for test captures of any protocol; [`files`]: reading the
//!   files given on the command line, with one-line errors;
//! - [`dissectors`]: UDP port -> [`codec::dissect::Dissector`], the only knowledge of
//!   protocols; a verdict or a dissection per datagram;
//! - [`output`] (text and JSON lines), [`profile`] (where the bits go), [`pipeline`] (work
//!   over the cores), [`progress`] (progress bars);
//! - [`tui`] (the terminal UI, on a capture or on datagrams that arrive over a channel) and
//!   [`proxy`] (the live proxy and `replay`: relaying, impairments, mutations, recording; its
//!   sink feeds that channel): side by side, neither imports the other;
//! - [`cmd`]: one module per subcommand (`cmd::proxy` puts the proxy and the TUI together for
//!   `proxy --tui`); [`cli`]: the command line that registers protocols and subcommands and
//!   dispatches; [`files`]: the files given on the command line.
//!
//! The demo traffic generator (`synth`), the `synth`, `vectors`, `tagged` and `encode`
//! subcommands and the `bitlens` binary use the demo protocol of `bitlens-demo`: they are the
//! default feature `demo`. A game's own inspector depends on `bitlens` with
//! `default-features = false` and compiles none of it. The fuzz harnesses (`fuzzing`,
//! `capture::fuzz_ingest`) are the feature `fuzzing`, for bitlens's own fuzz targets and tests.

/// `eprintln!` that cannot panic: when the reader of stderr is gone (`2>&1 | head`) the line
/// is lost and the program still ends with its own exit status, not a panic's 101.
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod capture;
pub mod cli;
pub mod cmd;
pub mod dissectors;
pub mod faults;
pub mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod output;
pub mod pipeline;
pub mod profile;
pub mod progress;
pub mod proxy;
#[cfg(feature = "demo")]
pub mod synth;
pub mod tui;
pub mod words;

pub use cli::{Cli, Context, Exit, Rejected};
pub use dissectors::Dissectors;

/// The codec core: streams, framing, the dissector interface (`bitlens-codec`).
pub use bitlens_codec as codec;

/// Byte-aligned message batches and their message sets (`bitlens-batch`).
pub use bitlens_batch as batch;

/// Protocols described in TOML (`bitlens-schema`).
pub use bitlens_schema as schema;

/// netcode 1.02, the transport `--decode PORT=netcode` reads, and its key log for a server to
/// write (`bitlens-netcode`).
pub use bitlens_netcode as netcode;

/// yojimbo's layer over netcode: the configuration [`Cli::yojimbo`] takes, its channels,
/// message types and body readers (`bitlens-yojimbo`).
pub use bitlens_yojimbo as yojimbo;
