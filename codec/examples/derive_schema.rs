//! Prints the demo protocol's schema as `#[derive(PacketSet)]` writes it (`SCHEMA.md`'s
//! language): what `bitlens inspect --schema` reads, from the same attributes as the compiled
//! serialize functions.
//!
//!     cargo run -p bitlens-codec --example derive_schema > demo.derived.toml
//!     bitlens decode --schema demo.derived.toml captures/demo.pcap

use bitlens_codec::PacketSet;
use bitlens_testkit::demo::DemoPacket;

fn main() {
    print!("{}", DemoPacket::schema());
}
