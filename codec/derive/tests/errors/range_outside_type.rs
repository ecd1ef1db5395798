use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Player {
    #[bitlens(range = 0..=300)]
    health: u8,
}

fn main() {}
