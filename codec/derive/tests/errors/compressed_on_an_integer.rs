use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Body {
    #[bitlens(compressed(min = -1.0, max = 1.0, resolution = 0.1))]
    x: i32,
}

fn main() {}
