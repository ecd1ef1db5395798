use bitlens_codec::BitPacked;

const LOW: i32 = 10;
const HIGH: i32 = 5;

#[derive(BitPacked)]
struct Player {
    #[bitlens(range = LOW..=HIGH)]
    health: i32,
}

fn main() {}
