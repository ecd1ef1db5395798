use bitlens_codec::{BitPacked, PacketSet};

#[derive(BitPacked, Default)]
struct Hello {
    #[bitlens(range = 0..=9)]
    level: u8,
}

#[derive(PacketSet)]
#[bitlens(protocol = "tiny", id = 0x1234)]
enum Tiny {
    Hello(Hello),
}

fn main() {}
