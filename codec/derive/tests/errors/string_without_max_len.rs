use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Chat {
    text: String,
}

fn main() {}
