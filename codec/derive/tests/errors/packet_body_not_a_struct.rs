use bitlens_codec::{BitPacked, PacketSet};

#[derive(BitPacked, Default)]
enum Mode {
    #[default]
    Slow,
    Fast,
}

#[derive(PacketSet)]
#[bitlens(protocol = "tiny", id = 0x1234, mtu = 1200)]
enum Tiny {
    Mode(Mode),
}

fn main() {}
