use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Scores {
    scores: Vec<u16>,
}

fn main() {}
