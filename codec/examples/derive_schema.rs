//! Prints the demo protocol's schema as its derives write it (`SCHEMA.md`'s language): the
//! packets of `#[derive(PacketSet)]` (`DemoPacket::schema()`), then the batch messages of
//! `#[derive(MessageEnum)]` (`DemoMessage::schema()`, its `[batch]` section). It is what
//! `bitlens inspect --schema` reads, from the same attributes as the compiled serialize
//! functions, and it decodes the demo captures as `captures/demo.schema.toml` does.
//!
//!     cargo run -p bitlens-codec --example derive_schema > demo.derived.toml
//!     bitlens decode --schema demo.derived.toml captures/demo.pcap

use bitlens_codec::PacketSet;
use bitlens_testkit::batch_demo::DemoMessage;
use bitlens_testkit::demo::DemoPacket;

fn main() {
    print!("{}\n{}", DemoPacket::schema(), DemoMessage::schema());
}
