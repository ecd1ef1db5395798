//! `captures/custom.schema.toml` is the schema text the derive writes for skirmish
//! (`Packet::schema()`): the compiled packets and the `--schema` path are one description.
//! `BITLENS_BLESS=1 cargo test -p custom-protocol --test schema_text` writes it again.

use bitlens_codec::PacketSet;
use custom_protocol::Packet;
use std::path::Path;

#[test]
fn the_committed_schema_is_the_derived_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../captures/custom.schema.toml");
    let derived = format!(
        "# skirmish, the protocol of examples/custom-protocol (src/lib.rs), as a schema: the text\n\
         # its #[derive(PacketSet)] writes (`custom_protocol::Packet::schema()`), kept so by\n\
         # examples/custom-protocol/tests/schema_text.rs (BITLENS_BLESS=1 writes it again).\n\
         #\n\
         #   bitlens decode --schema captures/custom.schema.toml --decode 28500=schema captures/custom.pcap --json\n\
         #   cargo run -p custom-protocol -- decode captures/custom.pcap --json        # the same packets\n\n{}",
        Packet::schema()
    );
    if std::env::var_os("BITLENS_BLESS").is_some() {
        std::fs::write(&path, &derived).expect("writes the schema");
    }
    let committed = std::fs::read_to_string(&path).expect("captures/custom.schema.toml");
    assert!(
        committed == derived,
        "captures/custom.schema.toml is not Packet::schema() (BITLENS_BLESS=1 writes it):\n{derived}"
    );
}
