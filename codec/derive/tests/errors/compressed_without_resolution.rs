use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Body {
    #[bitlens(compressed(min = -512.0, max = 512.0))]
    position: [f32; 3],
}

fn main() {}
