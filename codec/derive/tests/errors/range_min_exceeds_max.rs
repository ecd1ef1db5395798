use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Player {
    #[bitlens(range = 100..=0)]
    health: i32,
}

fn main() {}
