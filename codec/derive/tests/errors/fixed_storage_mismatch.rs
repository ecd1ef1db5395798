use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Position {
    #[bitlens(fixed(integer_bits = 8, fraction_bits = 8, min = -100, max = 100))]
    x: i32,
}

fn main() {}
