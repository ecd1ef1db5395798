use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Player {
    has_target: bool,
    target: Option<u8>,
}

fn main() {}
