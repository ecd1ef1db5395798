use bitlens_codec::BitPacked;

#[derive(BitPacked)]
enum Team {
    Red = 1,
    Blue = 2,
    Spectator = 7,
}

fn main() {}
