use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Player {
    #[bitlens(unless = dead, range = 0..=100)]
    health: u8,
    dead: bool,
}

fn main() {}
