use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Body {
    #[bitlens(quaternion(bits = 20))]
    rotation: [f32; 4],
}

fn main() {}
